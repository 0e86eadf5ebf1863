"""Planning as a Task: a state is the set of true ground atoms; a thought is one action with its
arguments; the gate is the PDDL simulator; the oracle is a planner call with a time limit.

The class holds the five methods search and verification need; its optional parts (applicable
actions, prompts, the planner as oracle and evaluator, restore, options) are the objects in
``parts``, from ``tasks/planning/parts.py``."""

from __future__ import annotations

from solver.task import Thought
from tasks.planning.grammar import PlanningGrammar
from tasks.planning.parts import (
    ApplicableActions,
    PlannerJudge,
    PlannerOracle,
    PlanningOptions,
    PlanPrompts,
    ReplayPlan,
    ShortPrompts,
)
from tasks.planning.state import OracleUnknown, PlanState, read_problem, step
from verifiers.planner import Mode, oracle_default, resolve
from verifiers.planning import report_plan
from verifiers.report import AnswerReport
from verifiers.verdict import Verdict

__all__ = ["OracleUnknown", "PlanState", "Planning", "PlannerOracle", "report_answer"]


class Planning:
    name = "planning"

    def __init__(self, max_depth: int = 40, oracle_seconds: float = 10.0, oracle_mode: Mode = "satisficing",
                 planner: str | None = None) -> None:
        self.max_depth = max_depth
        self.oracle_seconds = oracle_seconds
        self.oracle_mode: Mode = oracle_mode
        self.planner = resolve(planner) if planner is not None else oracle_default()
        self.parts = (ApplicableActions(), PlanPrompts(), PlannerJudge(oracle_seconds, oracle_mode, self.planner),
                      ReplayPlan(), PlanningOptions(max_depth, oracle_seconds, oracle_mode, self.planner),
                      PlanningGrammar(), ShortPrompts())

    def root(self, puzzle: str) -> PlanState:
        p = read_problem(puzzle)
        return PlanState(p.init, p)

    def check(self, state: PlanState, thought: Thought) -> Verdict[PlanState]:
        return step(state, thought)

    def answer(self, state: PlanState) -> str:
        return "\n".join(state.plan)

    def report_answer(self, puzzle: str, answer: str, optimum: int | None = None) -> AnswerReport:
        return report_plan(read_problem(puzzle), answer, optimum)

    def describe(self, state: PlanState) -> str:
        return f"after {len(state.plan)} actions: {' '.join(state.plan) or '(start)'}"


def report_answer(puzzle: str, answer: str) -> AnswerReport:
    """The answer report of a plan for a puzzle (a domain and a problem in PDDL)."""
    return Planning().report_answer(puzzle, answer)
