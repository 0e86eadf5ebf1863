"""One verdict for every answer: each task's ``report_answer`` names what it checked; ``verified``
agrees with the gate and with ``verify_answer``; a crossword is verified only against its answer
key; Sudoku is checked with boxes by default; the CLI and ``--json`` carry the report.

References here share no code with the checkers: rows, columns and boxes are looped over by hand,
crossword words are cut out of the 25 letters by hand, arithmetic is done with Fractions by hand.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.expansion import rule_failure
from solver.task import Thought
from solver.task_capabilities import LegalMoves, find
from solver.tools.cli import main
from tasks.crosswords.task import Crosswords
from tasks.game24.task import Game24
from tasks.sudoku.generator import generate
from tasks.sudoku.task import Sudoku
from tasks.writing.task import Writing
from verifiers.crossword import report_grid
from verifiers.verdict import Invalid, Solved

KEY = "AGENDMOTORARTSYSALLESLEER"  # rows AGEND MOTOR ARTSY SALLE SLEER
CLUES = [f"clue {k}" for k in range(1, 11)]


def _words(board: str) -> list[str]:
    rows = [board[5 * r:5 * r + 5] for r in range(5)]
    cols = ["".join(rows[r][c] for r in range(5)) for c in range(5)]
    return rows + cols


# ---- Sudoku: boxes by default ------------------------------------------------------------------

def _units_ok(board: list[list[int]], box: tuple[int, int] | None) -> bool:
    n = len(board)
    groups = [row for row in board] + [[board[r][c] for r in range(n)] for c in range(n)]
    if box is not None:
        bh, bw = box
        groups += [[board[r][c] for r in range(r0, r0 + bh) for c in range(c0, c0 + bw)]
                   for r0 in range(0, n, bh) for c0 in range(0, n, bw)]
    return all(sorted(g) == list(range(1, n + 1)) for g in groups)


LATIN_9 = "|".join("".join(str((r + c) % 9 + 1) for c in range(9)) for r in range(9))  # boxes repeat digits
BLANK_9 = "|".join("*" * 9 for _ in range(9))


def test_a_typed_in_9x9_with_two_equal_digits_in_a_box_is_not_verified(capsys):
    assert main(["verify", "sudoku", BLANK_9, LATIN_9]) == 1
    out = capsys.readouterr().out
    assert out.startswith("NOT verified under Sudoku 9x9, standard rules") and "FAIL  every 3x3 box" in out
    assert main(["verify", "sudoku", "--latin", BLANK_9, LATIN_9]) == 0
    assert "Latin square" in capsys.readouterr().out
    assert not Sudoku().report_answer(BLANK_9, LATIN_9).verified
    assert isinstance(rule_failure(Sudoku(), BLANK_9, LATIN_9), Invalid)


@pytest.mark.parametrize("n, box", [(4, (2, 2)), (6, (2, 3)), (8, (2, 4)), (9, (3, 3))])
def test_sizes_with_boxes_generate_and_check_their_boxes(n, box):
    p = generate(n, 5, blanks=n * n // 3)
    solution = [list(row) for row in p.solution]
    assert _units_ok(solution, box)  # the generator made a standard Sudoku
    report = Sudoku().report_answer(p.text, "|".join("".join(map(str, row)) for row in solution))
    assert report.verified and f"{box[0]}x{box[1]} boxes" in report.rules
    assert any(c.name.startswith(f"every {box[0]}x{box[1]} box") for c in report.checks)


def test_sizes_without_boxes_say_so():
    report = Sudoku().report_answer("*2*|*32|*13", "321|132|213")
    assert report.verified and "size 3 has no boxes" in report.rules
    assert not any("box" in c.name for c in report.checks)


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(1, 5)), st.permutations(range(4)), st.permutations(range(4)), st.booleans())
def test_sudoku_report_agrees_with_a_hand_written_check(digits, rows, cols, latin):
    base = [[(r + c) % 4 for c in range(4)] for r in range(4)]  # a Latin square; boxes vary with the shuffle
    board = [[digits[base[rows[r]][cols[c]]] for c in range(4)] for r in range(4)]
    text = "|".join("".join(map(str, row)) for row in board)
    task = Sudoku(boxes=not latin)
    expected = _units_ok(board, None if latin else (2, 2))
    assert task.report_answer("****|****|****|****", text).verified == expected
    assert (rule_failure(task, "****|****|****|****", text) is None) == expected


def test_the_sudoku_gate_solves_only_what_the_answer_check_verifies():
    checked = 0
    for n, seed, holes in [(4, 1, 3), (4, 2, 1), (6, 3, 3), (6, 4, 1), (9, 5, 1)]:
        p = generate(n, seed, blanks=holes)
        for boxes in (True, False):
            task = Sudoku(boxes=boxes)
            state = task.root(p.text)
            for th in find(task, LegalMoves).legal_thoughts(state):
                v = task.check(state, th)
                if isinstance(v, Solved):
                    assert task.report_answer(p.text, task.answer(v.state)).verified
            # Every one-cell completion, legal or not: the gate and the report agree on full boards.
            blanks = [(r, c) for r in range(n) for c in range(n) if state.board[r][c] == 0]
            if len(blanks) == 1:
                (r, c), = blanks
                for d in range(1, n + 1):
                    board = [list(row) for row in state.board]
                    board[r][c] = d
                    text = "|".join("".join(map(str, row)) for row in board)
                    solved = isinstance(task.check(state, Thought(text)), Solved)
                    assert solved == task.report_answer(p.text, text).verified == _units_ok(
                        board, {4: (2, 2), 6: (2, 3), 9: (3, 3)}[n] if boxes else None)
                    checked += 1
    assert checked == 2 * (4 + 6 + 9)


# ---- Game of 24 --------------------------------------------------------------------------------

def _paths(task: Game24, state, depth=0):
    """Every chain of legal steps from ``state`` (by the checker's enumeration)."""
    for th in find(task, LegalMoves).legal_thoughts(state):
        v = task.check(state, th)
        assert not isinstance(v, Invalid)
        yield v
        if not isinstance(v, Solved):
            yield from _paths(task, v.state, depth + 1)


@pytest.mark.parametrize("puzzle", ["4 9 10 13", "1 1 4 6", "3 3 8 8"])
def test_every_game24_solution_the_gate_reaches_is_verified_and_exact(puzzle):
    task = Game24()
    solved = 0
    for v in _paths(task, task.root(puzzle)):
        if isinstance(v, Solved):
            solved += 1
            answer = task.answer(v.state)
            report = task.report_answer(puzzle, answer)
            assert report.verified and rule_failure(task, puzzle, answer) is None
            assert sorted(int(x) for x in answer.replace("(", " ").replace(")", " ").split()
                          if x.isdigit()) == sorted(map(int, puzzle.split()))
    assert solved > 0


@pytest.mark.parametrize("answer, failing", [
    ("(10 - 4) * (13 - 9)", None), ("(10 - 4) * (13 - 4)", "uses each puzzle number exactly once"),
    ("10 + 4 + 13 - 9", "equals 24 exactly"), ("(10 - 4) * (13 - 9", "a well-formed expression"),
])
def test_game24_report_names_each_check(answer, failing):
    report = Game24().report_answer("4 9 10 13", answer)
    assert [c.name.split(" (")[0] for c in report.checks][:1] == ["a well-formed expression"]
    first = next((c.name for c in report.checks if c.passed is False), None)
    assert (first is None) == (failing is None) and (failing is None or first.startswith(failing))
    assert report.verified == (failing is None)


def test_json_carries_the_report_and_verified_is_its_verdict(capsys):
    assert main(["solve", "game24", "4 9 10 13", "--generator", "enumerate", "--evaluator", "oracle", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] is True and out["report"]["verified"] is True
    assert [c["passed"] for c in out["report"]["checks"]] == [True, True, True]
    value = _value(out["answer"])
    assert value == 24
    assert main(["solve", "game24", "4 9 10 13", "--generator", "enumerate", "--evaluator", "oracle"]) == 0
    text = capsys.readouterr().out
    assert "[verified]" in text and "pass  equals 24 exactly" in text and "verified under Game of 24" in text


def _value(expr: str) -> Fraction:
    """A tiny hand-written evaluator of + - * / and brackets (the reference for the answer)."""
    tokens = expr.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def atom() -> Fraction:
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            v = add()
            pos += 1
            return v
        return Fraction(int(tok))

    def mul() -> Fraction:
        nonlocal pos
        v = atom()
        while pos < len(tokens) and tokens[pos] in "*/":
            op = tokens[pos]
            pos += 1
            w = atom()
            v = v * w if op == "*" else v / w
        return v

    def add() -> Fraction:
        nonlocal pos
        v = mul()
        while pos < len(tokens) and tokens[pos] in "+-":
            op = tokens[pos]
            pos += 1
            w = mul()
            v = v + w if op == "+" else v - w
        return v

    return add()


# ---- crosswords: verified means it matches the answer key ----------------------------------------

@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 24), max_size=4), st.sampled_from("ABCXYZ"))
def test_crossword_verified_only_when_every_word_matches_the_key(cells, letter):
    board = list(KEY)
    for c in cells:
        board[c] = letter
    board_text = "".join(board)
    report = report_grid(board_text, KEY, None)
    right = sum(a == b for a, b in zip(_words(board_text), _words(KEY), strict=True))
    assert report.verified == (board_text == KEY)
    assert f"matches the answer key {right}/10" in [c.name for c in report.checks]
    assert not report_grid(board_text, None, None).verified  # no key: never verified


def test_crossword_ten_words_answer_checks_its_crossings():
    words = _words(KEY)
    assert report_grid(" ".join(words), KEY, None).verified
    bad = words[:5] + ["XMASS"] + words[6:]  # v1 disagrees with h1's first letter
    report = report_grid(" ".join(bad), KEY, None)
    crossing = next(c for c in report.checks if c.name == "crossings agree")
    assert crossing.passed is False and "v1" in crossing.detail and not report.verified


def _puzzle_file(tmp_path: Path, key: str | None) -> str:
    path = tmp_path / ("key.json" if key else "nokey.json")
    path.write_text(json.dumps({"clues": CLUES, "board": key} if key else {"clues": CLUES}), encoding="utf-8")
    return str(path)


def test_a_wrong_crossword_grid_is_not_printed_as_verified(tmp_path, capsys):
    # enumerate + prior fills the grid from the lexicon's frequent words: a complete grid the search
    # stops at, almost surely not the key's; verified must say whether it matches the key.
    for key in (KEY, None):
        f = _puzzle_file(tmp_path, key)
        assert main(["solve", "crosswords", "--puzzle", f, "--generator", "enumerate", "--evaluator", "prior",
                     "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        board = out["answer"] or out["board"]
        assert out["verified"] == (key is not None and board == KEY)
        if out["answer"] is not None:
            names = [c["name"] for c in out["report"]["checks"]]
            assert out["report"]["verified"] == out["verified"]
            assert any(n.startswith("entries found in the lexicon") for n in names)
            key_check = next(c for c in out["report"]["checks"] if c["name"].startswith("matches the answer key"))
            assert key_check["passed"] is (None if key is None else board == KEY)


def test_crossword_verify_cli(tmp_path, capsys):
    f = _puzzle_file(tmp_path, KEY)
    assert main(["verify", "crosswords", "--puzzle", f, KEY]) == 0
    assert main(["verify", "crosswords", "--puzzle", f, *_words(KEY)]) == 0
    assert main(["verify", "crosswords", "--puzzle", f, "B" + KEY[1:]]) == 1
    assert "FAIL  matches the answer key 8/10: wrong: h1 v1" in capsys.readouterr().out
    assert main(["verify", "crosswords", "--puzzle", _puzzle_file(tmp_path, None), KEY]) == 1
    out = capsys.readouterr().out
    assert "not checked  matches the answer key" in out and "never verified" in out


def test_the_crossword_gate_never_uses_the_key():
    # verify_answer (what search may know) accepts a complete wrong grid; only the report's key
    # check refuses it, so search stops at the first complete grid instead of hunting the key's.
    task = Crosswords()
    puzzle = json.dumps({"clues": CLUES, "board": KEY})
    wrong = "B" + KEY[1:]
    assert rule_failure(task, puzzle, wrong) is None
    assert not task.report_answer(puzzle, wrong).verified
    assert isinstance(rule_failure(task, puzzle, "_" + KEY[1:]), Invalid)  # incomplete: a rule


# ---- writing -----------------------------------------------------------------------------------

LINE = "The kettle began to sing. Nobody had fed the goldfish. Maria laughed until she cried. The storm passed."
ENDS = ["The kettle began to sing.", "Nobody had fed the goldfish.", "Maria laughed until she cried.",
        "The storm passed."]


def _ends_ok(passage: str) -> bool:
    """A separately written check: four blank-line paragraphs, each ending with its sentence."""
    paras = [p.strip() for p in passage.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return len(paras) == 4 and all(" ".join(p.split()).endswith(e) and
                                   (len(p) == len(e) or " ".join(p.split())[-len(e) - 1] == " ")
                                   for p, e in zip(paras, ENDS, strict=True))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(ENDS + ["Something else.", "The storm passed"]), min_size=3, max_size=5),
       st.sampled_from(["Words here. ", "", "A long day. Then "]))
def test_writing_report_agrees_with_a_plain_check_and_with_the_paragraph_gate(ends, lead):
    passage = "\n\n".join(lead + e for e in ends)
    task = Writing("paragraphs")
    report = task.report_answer(LINE, passage)
    assert report.verified == _ends_ok(passage)
    count = next(c for c in report.checks if c.name == "exactly 4 paragraphs")
    assert count.passed is (len(ends) == 4)
    assert (rule_failure(task, LINE, passage) is None) == _ends_ok(passage)
    state = task.root(LINE)
    for e in ends:
        v = task.check(state, Thought(lead + e))
        if isinstance(v, Invalid):
            break
        state = v.state
        if isinstance(v, Solved):
            assert task.report_answer(LINE, task.answer(state)).verified


def test_the_paragraph_gate_refuses_what_the_final_check_would_refuse():
    task = Writing("paragraphs")
    state = task.root(LINE)
    long = "word " * 9000
    for k, e in enumerate(ENDS):
        v = task.check(state, Thought((long if k == 3 else "") + e))
        if k < 3:
            state = v.state
    assert isinstance(v, Invalid) and "characters" in v.reason
    assert not task.report_answer(LINE, "\n\n".join([*ENDS[:3], long + ENDS[3]])).verified


# ---- every task states its rules the same way --------------------------------------------------

def test_every_report_names_its_rule_set():
    reports = [Game24().report_answer("4 9 10 13", "(10 - 4) * (13 - 9)"),
               Sudoku().report_answer("*2*|*32|*13", "321|132|213"),
               Writing().report_answer(LINE, "\n\n".join(ENDS)),
               report_grid(KEY, KEY, None)]
    for r in reports:
        assert r.rules and r.lines()[0] == f"verified under {r.rules}" and r.verified
    assert list(itertools.chain.from_iterable(r.to_json()["checks"] for r in reports))
