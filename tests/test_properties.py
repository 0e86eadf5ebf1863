"""Property tests of search invariants on a tiny toy task and on Game of 24, run through the kit
users get (``solver.testing``): scripted models mixing legal, illegal and garbage thoughts and
failing calls, every search method, generator and evaluator, random budgets.

References share no code with what they check: the toy's solvability is brute force over move
sequences written here; Game of 24's answers and solvability are checked with sympy
(tests/references.py).
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.budget import Budget
from solver.task import Thought
from solver.testing import (
    Case,
    Script,
    SearchSettings,
    budgets,
    check_complete_iff,
    check_outcome,
    check_replay,
    check_search_invariants,
    run_case,
    search_settings,
    settings_of,
)
from tasks.game24 import Game24
from tests.profiles import examples
from tests.references import game24_ok, sym_reaches
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Solved, Valid, Verdict

# ---- a tiny generic task ----------------------------------------------------------------------
OPS: tuple[tuple[str, int], ...] = (("+", 1), ("+", 3), ("*", 2))
CAP = 200  # a value above this is never useful for the targets the tests draw
_STEP = re.compile(r"^\s*(\d{1,6})\s*([+*])\s*(\d{1,6})\s*=\s*(\d{1,7})\s*$")


@dataclass(frozen=True, slots=True)
class ToyState:
    """The current value; ``path`` is history (two states with the same value are the same)."""

    value: int
    target: int
    path: tuple[str, ...] = field(default=(), compare=False)


def apply(value: int, op: str, k: int) -> int:
    return value + k if op == "+" else value * k


def step_text(value: int, op: str, k: int) -> str:
    return f"{value} {op} {k} = {apply(value, op, k)}"


class ToyReach:
    """Reach ``target`` from ``start`` (puzzle text "start target") in at most ``max_depth`` steps."""

    name = "toy-reach"

    def __init__(self, max_depth: int = 3) -> None:
        self.max_depth = max_depth

    @staticmethod
    def parse(puzzle: str) -> tuple[int, int]:
        parts = puzzle.split()
        if len(parts) != 2 or not all(p.isdigit() and len(p) <= 4 for p in parts):
            raise ValueError(f"expected 'start target', got {puzzle[:40]!r}")
        return int(parts[0]), int(parts[1])

    def root(self, puzzle: str) -> ToyState:
        start, target = self.parse(puzzle)
        return ToyState(start, target)

    def depth(self, state: ToyState) -> int:
        return len(state.path)

    def check(self, state: ToyState, thought: Thought) -> Verdict[ToyState]:
        m = _STEP.match(thought.text)
        if not m:
            return Invalid("not of the form 'a op k = r'")
        a, op, k, r = int(m[1]), m[2], int(m[3]), int(m[4])
        if a != state.value:
            return Invalid(f"{a} is not the current value {state.value}")
        if (op, k) not in OPS:
            return Invalid(f"'{op} {k}' is not an allowed move")
        if apply(a, op, k) != r:
            return Invalid(f"{a} {op} {k} is {apply(a, op, k)}, not {r}")
        if r > CAP:
            return Invalid(f"{r} is above the cap {CAP}")
        new = ToyState(r, state.target, state.path + (f"{op}{k}",))
        return Solved(new) if r == state.target else Valid(new)

    def legal_thoughts(self, state: ToyState) -> Sequence[Thought]:
        return [Thought(step_text(state.value, op, k)) for op, k in OPS if apply(state.value, op, k) <= CAP]

    def propose_prompt(self, state: ToyState, chat: bool) -> str:
        return f"Propose moves.\nValue: {state.value} depth {len(state.path)}\n"

    def sample_prompt(self, state: ToyState, chat: bool) -> str:
        return f"One move.\nValue: {state.value} depth {len(state.path)}\n"

    def parse_proposals(self, state: ToyState, text: str) -> list[Thought]:
        return [Thought(line.strip()) for line in text.splitlines()[:20] if 0 < len(line.strip()) <= 80]

    def value_prompt(self, state: ToyState, chat: bool) -> str:
        return f"Judge: {state.value} depth {len(state.path)}\nJudgement:"

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[ToyState], chat: bool) -> str:
        return "Vote:\n" + "\n".join(f"Choice {i}: {s.value}" for i, s in enumerate(states, 1))

    @staticmethod
    def reachable(value: int, target: int, steps: int) -> bool:
        """Exact: can ``value`` reach ``target`` in at most ``steps`` moves under the cap?"""
        frontier = {value}
        for _ in range(steps + 1):
            if target in frontier:
                return True
            frontier = {apply(v, op, k) for v in frontier for op, k in OPS if apply(v, op, k) <= CAP}
        return False

    def oracle(self, state: ToyState) -> bool:
        return self.reachable(state.value, state.target, self.max_depth - len(state.path))

    def answer(self, state: ToyState) -> str:
        return " ".join(state.path)

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        start, target = self.parse(puzzle)
        moves = answer.split()
        if len(moves) > self.max_depth:
            return Invalid(f"{len(moves)} moves; at most {self.max_depth} allowed")
        value = start
        for mv in moves:
            op, k = mv[:1], mv[1:]
            if not k.isdigit() or (op, int(k)) not in OPS:
                return Invalid(f"unknown move {mv!r}")
            value = apply(value, op, int(k))
            if value > CAP:
                return Invalid("above the cap")
        return None if value == target else Invalid(f"ends at {value}, not {target}")

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        problem = self.verify_answer(puzzle, answer)
        return AnswerReport("toy: reach the target", (Check("reaches the target", problem is None,
                                                            problem.reason if problem else ""),))

    def describe(self, state: ToyState) -> str:
        return str(state.value)


# ---- references, written apart from the task ----------------------------------------------------


def solvable_with_steps(puzzle: str, steps: int) -> bool:
    """Ground truth by brute force over every move sequence of length 0..steps (a puzzle whose
    start is its target is answered at the root, with no step)."""
    start, target = (int(x) for x in puzzle.split())
    return any(_ends_at(start, target, seq) for n in range(0, steps + 1) for seq in itertools.product(OPS, repeat=n))


def _ends_at(start: int, target: int, seq: tuple[tuple[str, int], ...]) -> bool:
    v = start
    for op, k in seq:
        v = v + k if op == "+" else v * k
        if v > CAP:
            return False
    return v == target


def game24_solvable(puzzle: str) -> bool:
    return sym_reaches([int(x) for x in puzzle.split()], 24)


TOY_PUZZLES = st.builds(lambda s, t: f"{s} {t}", st.integers(0, 12), st.integers(0, 40))
GAME24_PUZZLES = st.lists(st.integers(1, 13), min_size=4, max_size=4).map(lambda ns: " ".join(map(str, ns)))
# Exhaustive without the oracle too: complete search, BFS with an unbounded beam, DFS with no cap.
ALL_IFF = (("tot-complete", "oracle"), ("tot-complete", "prior"), ("tot-dfs", "oracle"), ("tot-bfs", "oracle"),
           ("tot-dfs", "prior"), ("tot-bfs", "prior"))


# ---- properties ---------------------------------------------------------------------------------


def test_toy_search_invariants() -> None:
    # Each property of the kit on every run, each run replayed from a recording, and the iff check
    # against brute force once per puzzle, for every step limit the toy allows.
    for max_depth in (1, 2, 3, 4):
        check_search_invariants(ToyReach(max_depth), TOY_PUZZLES, max_examples=examples(15),
                                settings=search_settings(max_depth=max_depth),
                                solvable=functools.partial(solvable_with_steps, steps=max_depth), iff_methods=ALL_IFF)


def test_game24_search_invariants() -> None:
    for policy in ("reject", "repair"):
        check_search_invariants(Game24(policy=policy), GAME24_PUZZLES, max_examples=examples(12),
                                settings=search_settings(max_breadth=3),
                                budget=budgets(max_calls=8, max_tokens=None, max_steps=6),
                                answer_ok=game24_ok, solvable=game24_solvable)


@settings(max_examples=examples(60))
@given(TOY_PUZZLES, st.integers(1, 4))
def test_toy_exhaustive_search_finds_a_solution_iff_one_exists(puzzle: str, max_depth: int) -> None:
    # With the exact oracle, and with no help from it (every state tried), against brute force.
    check_complete_iff(ToyReach(max_depth), puzzle, solvable=lambda p: solvable_with_steps(p, max_depth),
                       methods=ALL_IFF)


@settings(max_examples=examples(15))
@given(GAME24_PUZZLES)
def test_game24_enumerate_with_oracle_finds_a_solution_iff_one_exists(puzzle: str) -> None:
    check_complete_iff(Game24(), puzzle, solvable=game24_solvable, answer_ok=game24_ok)  # sympy's verdict


class LyingToy(ToyReach):
    """A task whose answer text is sometimes wrong: search must never return it."""

    def __init__(self, max_depth: int, lie: int) -> None:
        super().__init__(max_depth)
        self.lie = lie

    def answer(self, state: ToyState) -> str:
        honest = super().answer(state)
        return honest if self.lie == 0 else honest + " +1" * self.lie


@settings(max_examples=examples(60))
@given(TOY_PUZZLES, st.integers(1, 4), search_settings(generators=["enumerate"], evaluators=["oracle", "prior"]),
       st.integers(0, 2))
def test_unverifiable_answers_are_never_returned(puzzle: str, max_depth: int, how: SearchSettings, lie: int) -> None:
    o = run_case(LyingToy(max_depth, lie), Case(puzzle, how), model=False)
    honest = ToyReach(max_depth)
    check_outcome(o, answer_ok=lambda p, a: honest.verify_answer(p, a) is None)
    if o.result.answer is not None:
        assert honest.verify_answer(puzzle, o.result.answer) is None
    if lie:
        assert o.result.answer is None


def test_token_budget_replays_identically() -> None:
    # Cache hits count the tokens recorded with them, so a token budget stops a replay where it
    # stopped the live run.
    case = Case("0 0", settings_of("tot-bfs", "propose", "value", breadth=1), Script(0, legal=1.0, illegal=0.0,
                                                                                       garbage=0.0),
                Budget(tokens=1))
    check_replay(ToyReach(1), case)


def test_dfs_step_cap_is_exact() -> None:
    # The kit checks steps <= budget, and that a search stopped by its step budget used every step.
    check_search_invariants(ToyReach(4), TOY_PUZZLES, max_examples=examples(40), replay=False, iff=False,
                            settings=search_settings(methods=["tot-dfs", "tot-complete"], generators=["enumerate"],
                                                     evaluators=["prior"]),
                            budget=budgets(max_calls=None, max_tokens=None, max_steps=6))
