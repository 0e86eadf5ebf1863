"""Sudoku: board syntax, the exact gate, the oracles, the generator, the JSON parser and the CLI."""

import asyncio
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.expansion import rule_failure
from solver.task import Thought
from solver.task_capabilities import HasOracle, LegalMoves, ProposePrompts, Restorable, find
from solver.tools.cli import main
from tasks.sudoku.baselines import solution_prompt
from tasks.sudoku.generator import generate
from tasks.sudoku.parse import extract_boards
from tasks.sudoku.task import Sudoku
from tests import references as ref
from tests.profiles import examples
from tests.test_references import partial_boards
from verifiers.sudoku import (
    check_step,
    completable,
    completable_csp,
    count_solutions,
    format_board,
    parse_board,
    rule_break,
    solutions,
    verify_solution,
)
from verifiers.verdict import Invalid, Solved, Valid

FAST = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
PUZZLE, SOLUTION = "*2*|*32|*13", "321|132|213"


# --- board syntax -------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["*2*|*32|*13", ".2.|.32|.13", "*,2,*|*,3,2|*,1,3", "*2*\n*32\n*13",
                                  " 0 2 0 / 0 3 2 / 0 1 3 ", "|*2*|*32|*13|"])
def test_board_syntax_variants(text):
    assert parse_board(text) == ((0, 2, 0), (0, 3, 2), (0, 1, 3))


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("*2*|*32", "has 3 cells"), ("*2*|*32|*14", "not a digit 1..3"),
    ("*2*|*3x|*13", "'x'"), ("1234567890|" * 10, "rows"), ("12||21", "row 2 is empty"),
])
def test_malformed_boards_are_value_errors(text, words):
    with pytest.raises(ValueError, match=words.replace(".", r"\.").replace("(", r"\(")):
        parse_board(text)


@given(st.integers(1, 9).flatmap(lambda n: st.lists(st.lists(st.integers(0, n), min_size=n, max_size=n),
                                                   min_size=n, max_size=n)))
def test_format_parse_round_trip(rows):
    board = tuple(map(tuple, rows))
    assert parse_board(format_board(board)) == board


# --- the gate and final verification -------------------------------------------------------------

def test_step_rules():
    g = parse_board(PUZZLE)
    assert isinstance(check_step(g, g, parse_board("32*|*32|*13")), Valid)
    assert isinstance(check_step(g, g, parse_board(SOLUTION)), Solved)
    changed = check_step(g, g, parse_board("31*|*32|*13"))
    assert isinstance(changed, Invalid) and "given 2 at row 1, column 2" in changed.reason
    cur = parse_board("32*|*32|*13")
    earlier = check_step(g, cur, parse_board("12*|*32|*13"))
    assert isinstance(earlier, Invalid) and "placed earlier" in earlier.reason
    assert check_step(g, g, g) == Invalid("the step fills no new cell")
    dup = check_step(g, g, parse_board("22*|*32|*13"))
    assert isinstance(dup, Invalid) and "row 1 has two 2s" in dup.reason
    assert isinstance(check_step(g, g, parse_board("**|**")), Invalid)


def test_boxes_by_default_latin_when_asked():
    latin = parse_board("1234|2341|3412|4123")  # a Latin square whose boxes repeat digits
    assert rule_break(latin, boxes=False) is None
    assert "box" in (rule_break(latin) or "")
    assert rule_break(parse_board(SOLUTION)) is None  # 3x3 has no boxes: rows and columns only


@given(st.sampled_from([3, 4, 5]), st.integers(0, 10**6), st.data())
@FAST
def test_checker_accepts_completions_and_rejects_single_cell_corruptions(n, seed, data):
    boxes = n == 4 and data.draw(st.booleans())
    p = generate(n, seed, boxes=boxes)
    # Every completion the exact solver finds of a sparser board is accepted ...
    sparse = tuple(tuple(v if (r + c) % 3 == 0 else 0 for c, v in enumerate(row)) for r, row in enumerate(p.givens))
    for sol in solutions(sparse, boxes, limit=20):
        assert verify_solution(sparse, sol, boxes) is None
        assert isinstance(check_step(sparse, sparse, sol, boxes), Solved)
    assert verify_solution(p.givens, p.solution, boxes) is None
    # ... and every single-cell change of a solution is rejected, by both checks.
    for r, c in itertools.product(range(n), range(n)):
        for d in range(0, n + 1):
            if d == p.solution[r][c]:
                continue
            bad = tuple(tuple(d if (i, j) == (r, c) else v for j, v in enumerate(row))
                        for i, row in enumerate(p.solution))
            assert isinstance(verify_solution(p.givens, bad, boxes), Invalid)
            assert not isinstance(check_step(p.givens, p.givens, bad, boxes), Solved)


# --- oracles and generator -----------------------------------------------------------------------

@given(st.sampled_from([(3, False), (4, False), (4, True)]).flatmap(
    lambda s: st.tuples(st.just(s[1]), partial_boards(*s))))
@FAST
def test_backtracking_oracle_agrees_with_python_constraint(case):
    # Boards without a repeated digit (tests/test_references.py builds them), so the search
    # decides every case; the reference CSP is laid out in tests/references.py, not here.
    boxes, board = case
    assert rule_break(board, boxes) is None
    assert completable(board, boxes) == ref.csp_completable(board, boxes)
    assert completable_csp(board, boxes) == ref.csp_completable(board, boxes)


@given(st.sampled_from([3, 4, 5]), st.integers(0, 10**6))
@FAST
def test_generated_puzzles_have_exactly_one_solution(n, seed):
    p = generate(n, seed)
    assert count_solutions(p.givens, p.boxes, limit=5) == 1
    assert solutions(p.givens, p.boxes, limit=5) == [p.solution]
    assert sum(v == 0 for row in p.givens for v in row) == {3: 4, 4: 8, 5: 12}[n]
    assert generate(n, seed) == p  # seedable


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_9x9_has_boxes_and_one_solution(seed):
    p = generate(9, seed)
    assert p.boxes and count_solutions(p.givens, True, limit=2) == 1
    assert rule_break(p.solution, boxes=True) is None


def test_generator_rejects_impossible_requests():
    with pytest.raises(ValueError, match="blanks"):
        generate(3, 0, blanks=9)
    with pytest.raises(ValueError, match="size must be"):
        generate(10, 0)


# --- parser --------------------------------------------------------------------------------------

def test_parser_tolerates_fences_prose_and_cell_updates():
    cur = parse_board(PUZZLE)
    text = 'Sure! Here it is:\n```json\n{"rows": ["32*", "*32", "*13"]}\n```\nHope this helps.'
    assert extract_boards(text, cur) == [parse_board("32*|*32|*13")]
    assert extract_boards('{"rows": [[3, 2, 0], ["*", 3, 2], "0,1,3"]}', cur) == [parse_board("32*|*32|*13")]
    assert extract_boards('{"cells": [[1, 1, 3]]}', cur) == [parse_board("32*|*32|*13")]
    assert extract_boards('[{"row": 1, "col": 3, "value": 1}]', cur) == [parse_board("*21|*32|*13")]
    assert extract_boards('{"answer": {"board": "321|132|213"}}') == [parse_board(SOLUTION)]
    assert extract_boards('{"rows": ["3+2", "__import__(\'os\')"]}', cur) == []


@given(st.text(max_size=300))
def test_parser_never_raises_on_arbitrary_text(text):
    for board in extract_boards(text, parse_board(PUZZLE)):
        assert all(0 <= v <= 9 for row in board for v in row)


# --- the task ------------------------------------------------------------------------------------

def test_task_legal_thoughts_all_pass_the_gate_and_lead_to_the_solution():
    task = Sudoku()
    root = task.root(PUZZLE)
    thoughts = find(task, LegalMoves).legal_thoughts(root)
    assert thoughts and all(not isinstance(task.check(root, t), Invalid) for t in thoughts)
    verdict = task.check(root, Thought(SOLUTION))
    assert isinstance(verdict, Solved) and verdict.state.steps == 1
    assert rule_failure(task, PUZZLE, task.answer(verdict.state)) is None
    assert find(task, HasOracle).oracle(root) and not find(task, HasOracle).oracle(task.root("12*|*3*|**3"))
    assert isinstance(task.check(root, Thought("not a board")), Invalid)
    assert find(task, Restorable).restore(PUZZLE, task.describe(verdict.state)) == verdict.state
    with pytest.raises(ValueError, match="givens"):
        find(task, Restorable).restore(PUZZLE, "1**|***|***")
    parse = find(task, ProposePrompts).parse_proposals
    assert parse(root, ' {"rows": ["321", "*32", "*13"]}\n\nBoard: x\nNext board: {"rows": []}') == \
        [Thought("321|*32|*13")]


# --- CLI -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("board, code", [(SOLUTION, 0), ("321|132|231", 1), ("321|*32|213", 1)])
def test_verify_exit_codes(board, code, capsys):
    assert main(["verify", "sudoku", PUZZLE, board]) == code
    assert capsys.readouterr().out.startswith("verified" if code == 0 else "NOT verified")


@pytest.mark.parametrize("argv", [["verify", "sudoku", PUZZLE, "321|132"],
                                  ["verify", "sudoku", "*2*|*3x|*13", SOLUTION],
                                  ["solve", "sudoku", "12|3", "--generator", "enumerate", "--evaluator", "oracle"],
                                  ["solve", "sudoku", "--generator", "enumerate", "--evaluator", "oracle"],
                                  ["solve", "sudoku", PUZZLE, "--latin", "--boxes", "--generator", "enumerate"],
                                  ["solve", "sudoku", "--size", "3", "--blanks", "9", "--generator", "enumerate",
                                   "--evaluator", "oracle"]])
def test_malformed_input_is_one_line_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1


def test_solve_generated_puzzles_with_the_oracle_controller(capsys):
    argv = ["solve", "sudoku", "--size", "4", "--seed", "7", "--count", "2", "--method", "long",
            "--generator", "enumerate", "--evaluator", "oracle", "--json"]
    assert main(argv) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["size4-seed7", "size4-seed8"]
    task = Sudoku()
    for r in rows:
        assert r["verified"] and rule_failure(task, r["puzzle"], r["answer"]) is None and r["calls"] == 0
        assert ref.csp_is_solution(ref.read_board(r["puzzle"]), ref.read_board(r["answer"]), boxes=False)


def test_baselines_are_gated():
    """Long's zero-/one-/few-shot run through the core's one baseline runner, greedy, gated."""
    from solver.baselines import baseline_names, run_baseline
    from solver.lm.client import LMClient
    from tests.fakes import ScriptedBackend

    task = Sudoku()
    assert baseline_names(task) == ("zero-shot", "one-shot", "few-shot")
    good_backend = ScriptedBackend(lambda p, g, i: ' {"rows": ["321", "132", "213"]}\nBoard: more')
    good = LMClient(good_backend)
    res = asyncio.run(run_baseline(task, PUZZLE, "few-shot", good))
    assert res.verified and res.answer == SOLUTION and res.usage.calls == 1
    assert ref.csp_is_solution(ref.read_board(PUZZLE), ref.read_board(res.answer), boxes=False)
    [(prompt, params)] = good_backend.requests
    assert prompt == solution_prompt(PUZZLE, "few-shot", False, task.boxes) and params.temperature == 0.0
    bad = LMClient(ScriptedBackend(lambda p, g, i: ' {"rows": ["321", "132", "231"]}'))
    res = asyncio.run(run_baseline(task, PUZZLE, "zero-shot", bad))
    assert not res.verified and res.answer is None and (res.raw_answers, res.invalid_answers) == (1, 1)
    res = asyncio.run(run_baseline(task, PUZZLE, "one-shot", LMClient(ScriptedBackend(lambda p, g, i: "no board"))))
    assert not res.verified and res.invalid_answers == 1
    prompts = [solution_prompt(PUZZLE, s, False, task.boxes) for s in ("zero-shot", "one-shot", "few-shot")]
    assert [p.count("Solution:") for p in prompts] == [1, 2, 4]


def test_parser_survives_huge_json_integers_and_bracket_floods():
    from tasks.sudoku.parse import extract_boards

    assert extract_boards('{"rows": [' + "9" * 5000 + "]}") == []
    assert extract_boards("[" * 100_000) == []
    # Failed decodes are bounded (MAX_DECODE_ATTEMPTS): a board after a short bracket run is
    # found, after a longer one the search gives up rather than scan on.
    from tasks.sudoku.parse import MAX_DECODE_ATTEMPTS

    board = ' {"rows": ["12", "21"]}'
    assert extract_boards("noise " + "[" * (MAX_DECODE_ATTEMPTS - 1) + board) == [((1, 2), (2, 1))]
    assert extract_boards("noise " + "[" * (MAX_DECODE_ATTEMPTS + 1) + board) == []
