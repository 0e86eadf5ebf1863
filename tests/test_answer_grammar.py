"""The baselines' answer grammars (AnswerGrammar) and the grammar setting a run's start event
records. Both directions of Game of 24's answer grammar are checked with the independent GBNF
reader (tests/gbnf_reference.py): every derived output is read by the task's own answer parser
into an expression that uses exactly the puzzle's numbers, and every solution (enumerated here
by a separately written search over exact fractions) is derivable."""

from __future__ import annotations

import asyncio
import random
import re
from fractions import Fraction
from itertools import permutations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.baseline_capabilities import AnswerGrammar, AnswerParser
from solver.baselines import BaselineConfig, run_baseline
from solver.lm.client import LMClient
from solver.lm.grammar_report import grammar_setting
from solver.run import Settings, make_client, solve
from solver.searches.tot import BfsOptions
from solver.settings import ModelSettings, SearchSettings
from solver.task_capabilities import find
from solver.trace import Trace
from tasks.game24 import Game24
from tests.fakes import ScriptedBackend
from tests.gbnf_reference import Grammar, derive

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TASK = Game24()
PUZZLES = st.lists(st.integers(1, 13), min_size=4, max_size=4).map(lambda ns: " ".join(map(str, ns)))


def _grammar(puzzle: str, cot: bool) -> Grammar:
    part = find(TASK, AnswerGrammar)
    assert part is not None
    text = part.answer_grammar(puzzle, cot)
    assert text is not None
    return Grammar(text)


@FAST
@given(PUZZLES, st.booleans(), st.integers(0, 2**32 - 1))
def test_every_derived_output_is_read_as_an_expression_over_exactly_the_puzzles_numbers(
        puzzle: str, cot: bool, seed: int) -> None:
    g = _grammar(puzzle, cot)
    parser = find(TASK, AnswerParser)
    assert parser is not None
    rng = random.Random(seed)
    for _ in range(5):
        text = derive(g, rng)
        expr = parser.parse_answer(puzzle, text)
        assert expr is not None, text
        tail = text.splitlines()[-1]
        assert tail.endswith(" = 24") and expr == tail.removeprefix("Answer:").strip().removesuffix(" = 24"), text
        assert sorted(int(n) for n in re.findall(r"\d+", expr)) == sorted(map(int, puzzle.split())), text
        assert set(re.sub(r"[\d\s]", "", expr)) <= set("+-*/()"), text


def _solutions(nums: list[int]) -> set[str]:
    """Every expression reaching 24, fully parenthesised, by combining two values at a time."""
    out: set[str] = set()

    def go(items: list[tuple[Fraction, str]]) -> None:
        if len(items) == 1:
            if items[0][0] == 24:
                out.add(items[0][1])
            return
        for i, j in permutations(range(len(items)), 2):
            (a, sa), (b, sb) = items[i], items[j]
            rest = [x for k, x in enumerate(items) if k not in (i, j)]
            for op, v in (("+", a + b), ("-", a - b), ("*", a * b), ("/", a / b if b else None)):
                if v is not None:
                    go(rest + [(v, f"({sa} {op} {sb})")])

    go([(Fraction(n), str(n)) for n in nums])
    return out


@pytest.mark.parametrize("puzzle", ["4 4 6 8", "1 1 4 6", "4 9 10 13", "1 2 3 4"])
def test_every_solution_is_derivable_fully_parenthesised_and_in_the_papers_spelling(puzzle: str) -> None:
    io, cot = _grammar(puzzle, False), _grammar(puzzle, True)
    sols = _solutions([int(n) for n in puzzle.split()])
    assert sols
    for expr in sols:
        outer = expr[1:-1]  # the outermost brackets dropped too, as a model would write it
        for e in (expr, outer):
            assert io.matches(f" {e} = 24"), e
            assert cot.matches(f"4 + 4 = 8 (left: 6 8 8)\nAnswer: {e} = 24"), e


def test_the_papers_own_answers_are_derivable_and_wrong_numbers_are_not() -> None:
    for puzzle, expr in (("4 4 6 8", "(4 + 8) * (6 - 4)"), ("2 9 10 12", "2 * 12 * (10 - 9)"),
                         ("4 9 10 13", "4 * (9 - (13 - 10))"), ("1 4 8 8", "(8 / 4 + 1) * 8"),
                         ("5 5 5 9", "5 + 5 + 5 + 9")):
        assert _grammar(puzzle, False).matches(f" {expr} = 24"), expr
    io = _grammar("4 9 10 13", False)
    assert not io.matches(" (13 - 9) * (10 - 4) + 1 = 24")  # a number not in the puzzle
    assert not io.matches(" (13 - 9) * (10 - 4) * 4 = 24")  # 4 used twice
    assert not io.matches(" (13 - 9) * 10 = 24")  # 4 unused
    assert not io.matches(" (13 - 9) * (10 - 4) = 23")  # another target
    assert _grammar("4 9 10 13", False).matches(" 4 + 9 + 10 + 13 = 24")  # the value is the check's: a superset


def test_a_puzzle_that_does_not_parse_has_no_grammar() -> None:
    part = find(TASK, AnswerGrammar)
    assert part is not None and part.answer_grammar("4 9 10", False) is None


# ---- the baselines decode under it; the start event says so --------------------------------

def _io(prompt: str, params: Any, i: int) -> str:
    return " (13 - 9) * (10 - 4) = 24"


@pytest.mark.parametrize("method", ["io", "cot", "cot-sc", "io-best"])
@pytest.mark.parametrize("on", [True, False])
def test_the_baselines_send_the_answer_grammar_unless_it_is_off(method: str, on: bool) -> None:
    backend = ScriptedBackend(_io)
    trace = Trace()
    res = asyncio.run(run_baseline(TASK, "4 9 10 13", method, LMClient(backend, None, "off"),
                                   BaselineConfig(samples=2, grammar=on), trace))
    sent = [p.grammar for _, p in backend.requests]
    want = find(TASK, AnswerGrammar).answer_grammar("4 9 10 13", method.startswith("cot"))  # type: ignore[union-attr]
    assert sent and all(g == (want if on else None) for g in sent)
    assert res.verified  # the grammar changes what is asked, not how the answer is read and checked
    assert trace.of("start")[0]["grammar"] == {"on": on, "engine": None, "honoured": None}


class _Local(ScriptedBackend):
    def grammar_support(self) -> tuple[str, bool]:
        return "llguidance", True


class _Caps:
    def __init__(self, way: str | bool) -> None:
        self.grammar = way


class _Server(ScriptedBackend):
    def __init__(self, way: str | bool) -> None:
        super().__init__(_io)
        self.way, self.probes = way, 0

    async def capabilities(self, features: Any = None) -> _Caps:
        self.probes += 1
        return _Caps(self.way)


def test_the_grammar_setting_names_the_engine_and_whether_it_is_honoured() -> None:
    def run(backend: Any, on: bool = True, decodes: bool = True, mode: str = "off") -> dict[str, object]:
        client = LMClient(backend, None, "off")
        if mode == "replay":
            client = type("Replay", (), {"backend": backend, "mode": "replay"})()
        return asyncio.run(grammar_setting(client, on, decodes))

    assert run(_Local()) == {"on": True, "engine": "llguidance", "honoured": True}
    assert run(_Local(), on=False) == {"on": False, "engine": None, "honoured": None}
    assert run(_Server("grammar")) == {"on": True, "engine": "grammar", "honoured": True}
    assert run(_Server(False)) == {"on": True, "engine": None, "honoured": False}
    quiet = _Server("grammar")
    assert run(quiet, decodes=False) == {"on": True, "engine": None, "honoured": None} and quiet.probes == 0
    assert run(quiet, mode="replay") == {"on": True, "engine": None, "honoured": None} and quiet.probes == 0
    assert asyncio.run(grammar_setting(None, True)) == {"on": True, "engine": None, "honoured": None}


@pytest.mark.parametrize("generator,probed", [("propose", 1), ("enumerate", 0)])
def test_a_search_records_the_setting_in_its_start_event(generator: str, probed: int) -> None:
    server = _Server(False)
    s = Settings(search=SearchSettings(method="tot-bfs", generator=generator, evaluator="oracle",
                                       options=BfsOptions(breadth=1)),
                 model=ModelSettings(grammar=True))
    trace = Trace()
    asyncio.run(solve(TASK, "4 9 10 13", s, make_client(s, server), trace))
    assert trace.of("start")[0]["grammar"] == {"on": True, "engine": None, "honoured": False if probed else None}
    assert server.probes == probed
    s = Settings(search=SearchSettings(method="tot-bfs", generator="propose", evaluator="oracle",
                                       options=BfsOptions(breadth=1)),
                 model=ModelSettings(grammar=False))
    trace = Trace()
    asyncio.run(solve(TASK, "4 9 10 13", s, make_client(s, _Local(_io)), trace))
    assert trace.of("start")[0]["grammar"] == {"on": False, "engine": None, "honoured": None}


# ---- Sudoku: the whole solved board --------------------------------------------------------

SOLVED4 = ("1234", "3412", "2143", "4321")


def _sudoku_puzzles() -> st.SearchStrategy[tuple[bool, str]]:
    """(boxes, puzzle): a solved 4x4 board with some cells blanked."""

    @st.composite
    def build(draw: st.DrawFn) -> tuple[bool, str]:
        rows = [list(r) for r in SOLVED4]
        cells = [(r, c) for r in range(4) for c in range(4)]
        for r, c in draw(st.sets(st.sampled_from(cells), min_size=1, max_size=16)):
            rows[r][c] = "*"
        return draw(st.booleans()), "|".join("".join(r) for r in rows)

    return build()


def _all_solutions(puzzle: str, boxes: bool) -> list[list[list[int]]]:
    """Every solution, by python-constraint (sharing no code with the task)."""
    import constraint

    rows = puzzle.split("|")
    p = constraint.Problem()
    for r in range(4):
        for c in range(4):
            p.addVariable((r, c), [int(rows[r][c])] if rows[r][c] != "*" else [1, 2, 3, 4])
    groups = [[(r, c) for c in range(4)] for r in range(4)] + [[(r, c) for r in range(4)] for c in range(4)]
    if boxes:
        groups += [[(r, c) for r in range(r0, r0 + 2) for c in range(c0, c0 + 2)] for r0 in (0, 2) for c0 in (0, 2)]
    for g in groups:
        p.addConstraint(constraint.AllDifferentConstraint(), g)
    return [[[s[(r, c)] for c in range(4)] for r in range(4)] for s in p.getSolutions()]


@FAST
@given(_sudoku_puzzles(), st.integers(0, 2**32 - 1))
def test_sudoku_every_solution_is_derivable_and_every_derived_board_keeps_the_givens(
        case: tuple[bool, str], seed: int) -> None:
    from tasks.sudoku.task import Sudoku

    boxes, puzzle = case
    task = Sudoku(boxes)
    part, parser = find(task, AnswerGrammar), find(task, AnswerParser)
    assert part is not None and parser is not None
    text = part.answer_grammar(puzzle, False)
    assert text is not None
    g = Grammar(text)
    solutions = _all_solutions(puzzle, boxes)
    assert solutions  # blanked from a solved board
    for sol in solutions:
        assert g.matches(' {"rows": [' + ", ".join('"' + "".join(map(str, row)) + '"' for row in sol) + "]}")
    givens = puzzle.split("|")
    rng = random.Random(seed)
    for _ in range(5):
        out = derive(g, rng)
        board = parser.parse_answer(puzzle, out)
        assert board is not None, out
        rows = board.split("|")
        assert all(len(row) == 4 and set(row) <= set("1234") for row in rows) and len(rows) == 4, board
        assert all(givens[r][c] in ("*", rows[r][c]) for r in range(4) for c in range(4)), (puzzle, board)


def test_sudoku_a_clashing_digit_or_a_changed_given_is_not_derivable() -> None:
    from tasks.sudoku.task import Sudoku

    part = find(Sudoku(), AnswerGrammar)
    assert part is not None
    g = Grammar(part.answer_grammar("12**|**12|2***|***1", False) or "")
    assert g.matches(' {"rows": ["1234", "3412", "2143", "4321"]}')
    assert g.matches(' {"rows": ["1244", "3412", "2143", "4321"]}')  # two free cells may clash: a superset
    assert not g.matches(' {"rows": ["1234", "3412", "2243", "4321"]}')  # a digit that repeats a given of its row
    assert not g.matches(' {"rows": ["2134", "3412", "2143", "4321"]}')  # the givens 1 2 moved
    assert not g.matches(' {"rows": ["1234", "3412", "2143", "4322"]}')  # a given changed


def test_sudokus_own_baselines_send_the_answer_grammar_unless_it_is_off() -> None:
    from tasks.sudoku.task import Sudoku

    task = Sudoku()
    for on in (True, False):
        backend = ScriptedBackend(lambda p, g, i: ' {"rows": ["1234", "3412", "2143", "4321"]}')
        trace = Trace()
        res = asyncio.run(run_baseline(task, "12**|**12|2***|***1", "zero-shot", LMClient(backend, None, "off"),
                                       BaselineConfig(grammar=on), trace))
        want = find(task, AnswerGrammar).answer_grammar("12**|**12|2***|***1", False)  # type: ignore[union-attr]
        assert [p.grammar for _, p in backend.requests] == [want if on else None] and res.verified
        assert trace.of("start")[0]["grammar"]["on"] is on
