"""The property-testing kit (``solver.testing``) run on our own tasks: Sudoku 4x4, mini crosswords
with a small lexicon, creative writing (both decompositions) and planning (a tiny PDDL domain and
three-block Blocksworld). Game of 24 and a toy task are in tests/test_properties.py.

Each reference shares no code with the task it checks: python-constraint for Sudoku, a plain
search over word placements for crosswords, a separately written ending check for writing, and the
planner (not the gate's simulator) for planning.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from hypothesis import strategies as st

from lexicon import Lexicon
from solver.budget import Budget
from solver.testing import (
    Case,
    Script,
    check_replay,
    check_search_invariants,
    search_settings,
    settings_of,
)
from tasks.crosswords.data import default_data, load_puzzles
from tasks.crosswords.task import Crosswords
from tasks.planning.blocksworld import DOMAIN, problem
from tasks.planning.files import join_puzzle, split_puzzle
from tasks.planning.state import read_problem
from tasks.planning.task import Planning
from tasks.sudoku.generator import generate
from tasks.sudoku.task import Sudoku
from tasks.writing.task import Writing
from tests.profiles import examples
from tests.references import SLOTS_5X5, crossword_fills, csp_completable, csp_is_solution, passage_ok
from tests.test_planning import LAMP, LAMP_P
from verifiers.planner import plan

# ---- Sudoku 4x4 --------------------------------------------------------------------------------


def _board(text: str) -> list[list[int]]:
    return [[0 if ch == "*" else int(ch) for ch in row] for row in text.strip().split("|")]


def _text(board: list[list[int]]) -> str:
    return "|".join("".join(str(v) if v else "*" for v in row) for row in board)


def _wrong_digit(seed: int) -> str:
    """A generated puzzle with one blank filled by a digit that breaks no rule at once but is not
    the solution's (the puzzle has one solution, so usually none is left)."""
    p = generate(4, seed, blanks=8)
    board = [list(r) for r in p.givens]
    for r in range(4):
        for c in range(4):
            if board[r][c]:
                continue
            for d in range(1, 5):
                box = {board[i][j] for i in range(r - r % 2, r - r % 2 + 2) for j in range(c - c % 2, c - c % 2 + 2)}
                if d != p.solution[r][c] and d not in board[r] and d not in {row[c] for row in board} and d not in box:
                    board[r][c] = d
                    return _text(board)
    raise AssertionError("no wrong digit fits")


SUDOKU_PUZZLES = [generate(4, s, blanks=b).text for s, b in ((1, 6), (2, 8), (3, 10))] + [_wrong_digit(4)]


def test_sudoku_4x4() -> None:
    assert {csp_completable(_board(p), True) for p in SUDOKU_PUZZLES} == {True, False}  # both kinds are tested
    check_search_invariants(
        Sudoku(), SUDOKU_PUZZLES, max_examples=examples(25),
        render=lambda board: json.dumps({"board": board}),  # the model answers one JSON object a line
        answer_ok=lambda p, a: csp_is_solution(_board(p), _board(a), True),
        solvable=lambda p: csp_completable(_board(p), True))


# ---- mini crosswords with a small lexicon --------------------------------------------------------

_CW = load_puzzles(default_data())
CW_PUZZLES = [p.text() for p in _CW[:3]]
# Two small lexicons: the answers of the first two puzzles, and the first puzzle's answers less h1
# and v1 (so no grid of lexicon words is left).
CW_LEXICONS = (sorted({w for p in _CW[:2] for w in p.words()}),
               sorted(set(_CW[0].words()) - {_CW[0].words()[0], _CW[0].words()[5]}))


def lexicon_of(words: list[str]) -> Lexicon:
    return Lexicon({w.lower(): 3.0 for w in words}, {w.lower(): 8 for w in words}, sources=("user",))


def fill_exists(words: list[str]) -> bool:
    """Whether placing words, one open slot at a time, can fill the whole grid (crossing slots
    need not spell words: the gate checks facts only)."""
    seen: set[str] = set()

    def go(board: str) -> bool:
        if "_" not in board:
            return True
        if board in seen:
            return False
        seen.add(board)
        for cells in SLOTS_5X5.values():
            if all(board[c] != "_" for c in cells):
                continue
            for w in words:
                if all(board[c] in ("_", ch) for c, ch in zip(cells, w, strict=True)):
                    placed = dict(zip(cells, w, strict=True))
                    if go("".join(placed.get(i, ch) for i, ch in enumerate(board))):
                        return True
        return False

    return go("_" * 25)


def _constant(value: bool, puzzle: str) -> bool:
    return value


def test_crosswords_small_lexicons() -> None:
    answers = {p: json.loads(p)["board"] for p in CW_PUZZLES}
    outcomes = set()
    for words in CW_LEXICONS:
        for gate in ("none", "slots"):
            # With the lexicon gate "slots" every slot of a full grid must be a lexicon word: a
            # solution is a fill of all ten slots, found by python-constraint.
            exists = fill_exists(words) if gate == "none" else bool(crossword_fills("_" * 25, words))
            outcomes.add(exists)
            def task(words: list[str] = words, gate: Any = gate) -> Crosswords:
                return Crosswords(lexicon_of(words), candidates=50, lexicon_gate=gate)

            check_search_invariants(
                task,
                CW_PUZZLES, max_examples=examples(6),
                settings=search_settings(evaluators=["value", "vote", "likelihood", "prior", "oracle", "random",
                                                     "clues", "fillable"]),
                answer_ok=lambda p, a: "".join(a.split()) == answers[p],  # verified: the grid is the key
                solvable=functools.partial(_constant, exists),
                # The crossword oracle says "agrees with the answer key", not "can be completed": it
                # may order a complete search, never prune one.
                iff_methods=(("tot-complete", "oracle"), ("tot-complete", "prior")))
    assert outcomes == {True, False}  # both kinds were tested


# ---- creative writing ---------------------------------------------------------------------------

WRITING = {
    "It was cold. The dog barked. We ran home. Nobody slept.": ("It was cold.", "The dog barked.", "We ran home.",
                                                                 "Nobody slept."),
    "Rain fell. She smiled. The train left. All was quiet.": ("Rain fell.", "She smiled.", "The train left.",
                                                               "All was quiet."),
}


def writing_thoughts(puzzle: str) -> st.SearchStrategy[str]:
    """Plans, paragraphs ending (or not) with a required sentence, and whole passages."""
    sentences = WRITING[puzzle]
    lead = st.text(alphabet="abc de,.\n", max_size=24)
    para = st.builds(lambda pre, i: f"{' '.join(pre.split())} {sentences[i]}".strip(), lead, st.integers(0, 3))
    passage = st.builds(lambda pres: "\n\n".join(f"{' '.join(p.split())} {s}".strip()
                                                 for p, s in zip(pres, sentences, strict=True)),
                        st.lists(lead, min_size=4, max_size=4))
    return st.one_of(para, para, para, passage, lead)  # mostly paragraphs: they make the deeper states


def test_writing_both_decompositions() -> None:
    # No iff check: passages cannot be enumerated (legal_thoughts is empty), so no search is complete
    # (the kit skips it by itself; said here for the reader).
    for decomposition in ("paragraphs", "plan"):
        check_search_invariants(
            Writing(decomposition), list(WRITING), max_examples=examples(20), thoughts=writing_thoughts,
            settings=search_settings(generators=["propose", "sample"]),
            answer_ok=lambda p, a: passage_ok(WRITING[p], a), iff=False)


# ---- planning -----------------------------------------------------------------------------------

PLAN_DEPTH = 6
PLAN_PUZZLES = [join_puzzle(LAMP, LAMP_P)] + [join_puzzle(DOMAIN, problem(3, seed)) for seed in (2, 5, 7)]


def plan_within_depth(puzzle: str) -> bool:
    """The planner's optimal plan fits the search's depth limit."""
    task = Planning()
    res = plan(read_problem(puzzle), task.root(puzzle).atoms, 30, "optimal")
    assert res.status != "unknown"
    return res.plan is not None and len(res.plan) <= PLAN_DEPTH


def test_planning_tiny_domains() -> None:
    assert any(plan_within_depth(p) for p in PLAN_PUZZLES)
    steps: Any = st.builds(Budget, st.one_of(st.none(), st.integers(0, 12)), st.none(), st.integers(1, 12))
    check_search_invariants(
        Planning(max_depth=PLAN_DEPTH), PLAN_PUZZLES, max_examples=examples(25), budget=steps,
        solvable=plan_within_depth,
        # the planner oracle knows plans of any length, the search only up to its depth: it orders
        iff_methods=(("tot-complete", "oracle"), ("tot-complete", "prior")))
    assert split_puzzle(PLAN_PUZZLES[0])  # the puzzles are well formed


def test_a_replay_counts_the_tokens_of_identical_requests_in_flight_as_the_live_run_did() -> None:
    # Found by the kit: a session remembered an answer only once it arrived, so identical requests
    # in flight together (two states with the same value prompt, scored concurrently) all reached
    # the model and counted their tokens, while a replay, whose recorded answers arrive at once,
    # counted them once. Now an identical request waits for the first one's answer.
    puzzle = list(WRITING)[0]
    s = WRITING[puzzle]
    pool = ("a " + s[0], "b " + s[0], "plan one", "\n\n".join(s))
    case = Case(puzzle, settings_of("tot-bfs", "sample", "likelihood", breadth=3, k=4),
                Script(0, 1.0, 0.0, 0.0, 0.0, 3, pool))
    check_replay(Writing("plan"), case)
