"""Game of 24 as a Task: states are exact multisets of rationals with the expressions behind them.

The class holds the five methods search and verification need; its optional parts (legal steps,
prompts, the oracle, restore, the unchecked mode, options, baselines) are the objects in
``parts``, from ``tasks/game24/parts.py`` and ``tasks/game24/baselines.py``."""

from __future__ import annotations

from solver.task import Thought
from tasks.game24.baselines import Baselines
from tasks.game24.grammar import Game24Grammar
from tasks.game24.parts import (
    GateOptions,
    LegalSteps,
    Reach24,
    RestoreNumbers,
    SearchPrompts,
    ShortPrompts,
    TrustedSteps,
)
from tasks.game24.state import MAX_INPUT, TARGET, State24, apply_step, parse_puzzle, root_state
from verifiers.arithmetic import RULES_24, Policy, check_step, report_answer, unbracket
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Verdict

__all__ = ["MAX_INPUT", "TARGET", "Game24", "State24", "parse_puzzle"]


class Game24:
    """The Game-of-24 task. ``policy`` is the checker's stance on wrong stated facts."""

    name = "game24"
    max_depth = 3

    def __init__(self, policy: Policy = "reject") -> None:
        self.policy: Policy = policy
        self.parts = (LegalSteps(), SearchPrompts(), Reach24(), RestoreNumbers(), TrustedSteps(),
                      GateOptions(policy), Baselines(), Game24Grammar(), ShortPrompts())

    def root(self, puzzle: str) -> State24:
        return root_state(puzzle)

    def check(self, state: State24, thought: Thought) -> Verdict[State24]:
        if len(state.numbers) < 2:
            return Invalid("no step is possible: one number is left")
        step = check_step(state.numbers, thought.text, self.policy)
        if isinstance(step, Invalid):
            return step
        return apply_step(state, step.i, step.j, step.op, step.result, step.note)

    def answer(self, state: State24) -> str:
        expr = state.exprs[0]
        return unbracket(expr)

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every exact check of ``answer`` from the puzzle text alone."""
        try:
            nums = parse_puzzle(puzzle)
        except ValueError as exc:
            return AnswerReport(RULES_24.format(target=TARGET),
                                (Check("the puzzle is four whole numbers", False, str(exc)),))
        return report_answer(nums, answer, TARGET)

    def describe(self, state: State24) -> str:
        return state.text()

