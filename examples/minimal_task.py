"""A complete puzzle family in five methods: reach a target number from a start with +3 and *2.

The puzzle is two whole numbers, ``"START TARGET"`` (e.g. ``"2 23"``); a thought is one step,
``+3`` or ``*2``; the answer is the steps in order (``"+3 *2 *2 +3"``). The task class is the
required core of ``solver.task.Task``: ``name``, ``max_depth`` and five methods (``root``,
``check``, ``answer``, ``report_answer``, ``describe``). It composes one optional part,
``Steps`` (``solver.task_capabilities.LegalMoves``), so the built-in ``enumerate`` generator and the
complete search run it with no model; docs/task-protocol.md lists the other parts a task may add.

Run it: ``python examples/minimal_task.py`` solves one puzzle and prints the verified answer with
its report. tests/test_examples.py runs this file and the testing kit's properties on the task.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import solver
from solver.task import Thought
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Solved, Valid, Verdict

STEPS = {"+3": lambda n: n + 3, "*2": lambda n: n * 2}
LIMIT = 10_000  # the largest start or target a puzzle may name


@dataclass(frozen=True, slots=True)
class Reach:
    """A state: the number reached and the target. ``steps`` is how it was reached (history, not
    identity: two paths to the same number are one state)."""

    value: int
    target: int
    steps: tuple[str, ...] = field(default=(), compare=False)


def read_puzzle(puzzle: str) -> tuple[int, int]:
    """``"START TARGET"``, both whole numbers from 1 to LIMIT; ValueError with a one-line reason."""
    words = puzzle.split()
    if len(words) != 2 or not all(w.isascii() and w.isdigit() and len(w) <= 5 for w in words):
        raise ValueError(f"a puzzle is two whole numbers, START TARGET; got {puzzle[:40]!r}")
    start, target = int(words[0]), int(words[1])
    if not (1 <= start <= LIMIT and 1 <= target <= LIMIT):
        raise ValueError(f"start and target must be between 1 and {LIMIT}")
    return start, target


class ReachTarget:
    """Reach TARGET from START with steps +3 and *2, at most ``max_depth`` of them."""

    name = "reach-target"
    max_depth = 12

    def __init__(self) -> None:
        self.parts = (Steps(),)  # optional parts, found with solver.task_capabilities.find

    def root(self, puzzle: str) -> Reach:
        start, target = read_puzzle(puzzle)
        return Reach(start, target)

    def check(self, state: Reach, thought: Thought) -> Verdict[Reach]:
        op = thought.text.strip()
        if op not in STEPS:
            return Invalid(f"{op[:20]!r} is not a step; the steps are +3 and *2")
        value = STEPS[op](state.value)
        if value > state.target:  # both steps only grow a positive number: no way back
            return Invalid(f"{op} gives {value}, past the target {state.target}")
        nxt = Reach(value, state.target, state.steps + (op,))
        return Solved(nxt) if value == state.target else Valid(nxt)

    def answer(self, state: Reach) -> str:
        return " ".join(state.steps)

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Replays the answer from the puzzle text alone, each rule a named check."""
        rules = f"steps +3 and *2, at most {self.max_depth}"
        try:
            start, target = read_puzzle(puzzle)
        except ValueError as exc:
            return AnswerReport(rules, (Check("the puzzle is START TARGET", False, str(exc)),))
        ops = answer.split()
        known = all(op in STEPS for op in ops)
        value = start
        for op in ops if known else ():
            value = STEPS[op](value)
        return AnswerReport(rules, (
            Check("every step is +3 or *2", known),
            Check(f"at most {self.max_depth} steps", len(ops) <= self.max_depth),
            Check(f"the steps take {start} to {target}", known and value == target,
                  f"they reach {value}" if known and value != target else "")))

    def describe(self, state: Reach) -> str:
        return f"{state.value} of {state.target}"


class Steps:
    """LegalMoves: every step the gate accepts (those that do not pass the target)."""

    def legal_thoughts(self, state: Reach) -> list[Thought]:
        return [Thought(op) for op, f in STEPS.items() if f(state.value) <= state.target]


def main() -> None:
    task = ReachTarget()
    puzzle = "3 99"
    # The complete search over every legal step, in the task's order: no model (client None).
    result = asyncio.run(solver.complete_dfs(task, puzzle, solver.make_generator("enumerate"),
                                             solver.make_evaluator("prior"), None))
    print(f"puzzle: {puzzle}")
    print(f"answer: {result.answer}")
    print(f"verified: {result.verified}")
    if result.report is not None:
        print("\n".join(result.report.lines()))


if __name__ == "__main__":
    main()
