"""Planning states, the puzzle's problem and the gate's step (the PDDL simulator), shared by the
task and its parts."""

from __future__ import annotations

from dataclasses import dataclass, field

from solver.task import Thought
from tasks.planning.files import split_puzzle
from verifiers.pddl_model import Problem, parse_problem
from verifiers.planning import apply, failed_precondition, goal_holds, parse_action
from verifiers.verdict import Invalid, Solved, Valid, Verdict

__all__ = ["OracleUnknown", "PlanState", "read_problem", "step"]


@dataclass(frozen=True, slots=True)
class PlanState:
    """The true atoms. The problem and the plan so far travel along but are not the state's identity."""

    atoms: frozenset[tuple[str, ...]]
    problem: Problem = field(compare=False, repr=False)
    plan: tuple[str, ...] = field(default=(), compare=False)


class OracleUnknown(ValueError):
    """The planner's time limit ran out before it found a plan or proved there is none."""


def read_problem(puzzle: str) -> Problem:
    """The PDDL problem of a puzzle (its domain and problem text); ValueError when unreadable."""
    domain, prob = split_puzzle(puzzle)
    return parse_problem(domain, prob)


def step(state: PlanState, thought: Thought) -> Verdict[PlanState]:
    """The exact gate: the action must parse and its preconditions hold; Solved when the goal holds after it."""
    try:
        action = parse_action(thought.text)
    except ValueError as e:
        return Invalid(str(e))
    reason = failed_precondition(state.problem, state.atoms, action)
    if reason is not None:
        return Invalid(reason)
    nxt = PlanState(apply(state.problem, state.atoms, action), state.problem, (*state.plan, action.text()))
    return Solved(nxt) if goal_holds(state.problem, nxt.atoms) else Valid(nxt)
