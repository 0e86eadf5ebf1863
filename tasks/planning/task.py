"""Planning as a Task: a state is the set of true ground atoms; a thought is one action with its
arguments; the gate is the PDDL simulator; the oracle is a planner call with a time limit."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from solver.capabilities import Needs
from solver.task import Thought
from tasks.planning import prompts
from tasks.planning.files import split_puzzle
from tasks.planning.grammar import PlanningGrammar
from verifiers.pddl_model import Problem, atom_text, parse_problem
from verifiers.planner import Mode, applicable_actions, plan
from verifiers.planning import apply, failed_precondition, goal_holds, parse_action, report_plan
from verifiers.report import AnswerReport
from verifiers.verdict import Invalid, Solved, Valid, Verdict

MAX_PROMPT_FACTS = 200


@dataclass(frozen=True, slots=True)
class PlanState:
    """The true atoms. The problem and the plan so far travel along but are not the state's identity."""

    atoms: frozenset[tuple[str, ...]]
    problem: Problem = field(compare=False, repr=False)
    plan: tuple[str, ...] = field(default=(), compare=False)


class OracleUnknown(ValueError):
    """The planner's time limit ran out before it found a plan or proved there is none."""


class Planning:
    name = "planning"

    def __init__(self, max_depth: int = 40, oracle_seconds: float = 10.0, oracle_mode: Mode = "satisficing") -> None:
        self.max_depth = max_depth
        self.oracle_seconds = oracle_seconds
        self.oracle_mode: Mode = oracle_mode
        self.parts = (*getattr(self, "parts", ()), PlanningGrammar())

    def options(self) -> dict[str, Any]:
        """What rebuilds this task (recorded in traces): the step limit and the oracle's planner."""
        return {"max_depth": self.max_depth, "oracle_seconds": self.oracle_seconds, "oracle_mode": self.oracle_mode}

    # -- puzzle and state -------------------------------------------------------------------
    def problem(self, puzzle: str) -> Problem:
        domain, prob = split_puzzle(puzzle)
        return parse_problem(domain, prob)

    def root(self, puzzle: str) -> PlanState:
        p = self.problem(puzzle)
        return PlanState(p.init, p)

    def depth(self, state: PlanState) -> int:
        return len(state.plan)

    def check(self, state: PlanState, thought: Thought) -> Verdict[PlanState]:
        try:
            action = parse_action(thought.text)
        except ValueError as e:
            return Invalid(str(e))
        reason = failed_precondition(state.problem, state.atoms, action)
        if reason is not None:
            return Invalid(reason)
        nxt = PlanState(apply(state.problem, state.atoms, action), state.problem, (*state.plan, action.text()))
        return Solved(nxt) if goal_holds(state.problem, nxt.atoms) else Valid(nxt)

    def legal_thoughts(self, state: PlanState) -> Sequence[Thought]:
        return [Thought(a.text()) for a in applicable_actions(state.problem, state.atoms)]

    # -- prompts ----------------------------------------------------------------------------
    def _state_text(self, state: PlanState) -> str:
        p = state.problem
        actions = ", ".join(f"({s.name} {' '.join(v for v, _ in s.params)})".replace(" )", ")") for s in p.schemas)
        facts = " ".join(sorted(atom_text(a) for a in state.atoms)[:MAX_PROMPT_FACTS])
        goal = " ".join(("" if pos else "not ") + atom_text(a) for pos, a in p.goal)
        return prompts.STATE.format(actions=actions, facts=facts, goal=goal, plan=" ".join(state.plan) or "(none)")

    def propose_prompt(self, state: PlanState, chat: bool) -> str:
        return prompts.PROPOSE.format(state=self._state_text(state))

    def sample_prompt(self, state: PlanState, chat: bool) -> str:
        return self.propose_prompt(state, chat)

    def parse_proposals(self, state: PlanState, text: str) -> list[Thought]:
        out: list[Thought] = []
        for line in text.splitlines()[:50]:
            pieces = re.findall(r"\([^()]{1,200}\)", line) or [line]
            for piece in pieces:
                try:
                    thought = Thought(parse_action(piece).text())
                except ValueError:
                    continue
                if thought not in out:
                    out.append(thought)
        return out

    def value_prompt(self, state: PlanState, chat: bool) -> str:
        return prompts.VALUE.format(state=self._state_text(state))

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[PlanState], chat: bool) -> str:
        goal = " ".join(atom_text(a) for _pos, a in states[0].problem.goal) if states else ""
        choices = "\n".join(f"Choice {k}: {' '.join(s.plan) or '(no actions yet)'}" for k, s in enumerate(states, 1))
        return prompts.VOTE.format(goal=goal, choices=choices)

    # -- exact oracle and answers -----------------------------------------------------------
    def oracle_verdict(self, state: PlanState) -> bool | None:
        """True: a plan from here exists; False: proved none; None: the time limit ran out."""
        if goal_holds(state.problem, state.atoms):
            return True
        res = plan(state.problem, state.atoms, self.oracle_seconds, self.oracle_mode)
        return None if res.status == "unknown" else res.status == "solved"

    def distance(self, state: PlanState) -> int | None:
        """The length of the planner's plan from here (-1: proved none; None: time limit ran out)."""
        if goal_holds(state.problem, state.atoms):
            return 0
        res = plan(state.problem, state.atoms, self.oracle_seconds, self.oracle_mode)
        if res.status == "unknown":
            return None
        return len(res.plan) if res.plan is not None else -1

    def oracle(self, state: PlanState) -> bool:
        verdict = self.oracle_verdict(state)
        if verdict is None:
            raise OracleUnknown(f"the planner found neither a plan nor a proof of none in {self.oracle_seconds:g} s")
        return verdict

    def make_evaluator(self, name: str, settings: Any) -> Any:
        return PlannerOracle() if name == "oracle" else None

    def answer(self, state: PlanState) -> str:
        return "\n".join(state.plan)

    def report_answer(self, puzzle: str, answer: str, optimal_length: int | None = None) -> AnswerReport:
        return report_plan(self.problem(puzzle), answer, optimal_length)

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        try:
            rep = self.report_answer(puzzle, answer)
        except ValueError as e:
            return Invalid(str(e))
        return None if rep.verified else Invalid(rep.reason or "not verified")

    def restore(self, puzzle: str, description: str) -> PlanState:
        """The state ``describe`` wrote (for ``tot audit``), rebuilt by replaying its actions."""
        state = self.root(puzzle)
        _, sep, actions = description.partition(": ")
        if not sep or not description.startswith("after "):
            raise ValueError(f"not a planning state description: {description[:60]!r}")
        for piece in re.findall(r"\([^()]*\)", actions if actions != "(start)" else ""):
            verdict = self.check(state, Thought(piece))
            if isinstance(verdict, Invalid):
                raise ValueError(f"the described plan does not replay: {verdict.reason}")
            state = verdict.state
        return state

    def describe(self, state: PlanState) -> str:
        return f"after {len(state.plan)} actions: {' '.join(state.plan) or '(start)'}"


@dataclass(frozen=True, slots=True)
class PlannerOracle:
    """The exact oracle as an evaluator. A state with no plan scores 0 (pruned); a state with a
    plan scores 0.5 + 0.5 / (1 + its plan's length), so states nearer the goal rank first (the
    upper bound of what a perfect evaluator could do); when the planner's time limit runs out
    the state scores 0.5 (kept, not pruned): the search is not told a guess."""

    name: str = "oracle"
    prune_below: float = 0.5
    needs: ClassVar[Needs] = Needs()  # a Planning task (its planner); no model

    async def __call__(self, task: Any, nodes: Sequence[Any], model: Any) -> list[tuple[float, Any]]:
        out: list[tuple[float, Any]] = []
        for nd in nodes:
            dist = task.distance(nd.state)
            if dist is None:
                out.append((0.5, "unknown"))
            else:
                out.append((0.0, "no plan") if dist < 0 else (0.5 + 0.5 / (1 + dist), f"plan of {dist}"))
        return out


def report_answer(puzzle: str, answer: str) -> AnswerReport:
    """The answer report of a plan for a puzzle (a domain and a problem in PDDL)."""
    return Planning().report_answer(puzzle, answer)
