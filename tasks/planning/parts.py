"""The optional parts of the planning task, each a small object the task composes: applicable
actions, the prompts and their parsers, the planner as exact oracle (and as the task's own
``oracle`` evaluator), restore by replaying a plan, and the options that rebuild the task."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from solver.task import Thought
from solver.task_capabilities import Needs, require
from tasks.planning import prompts
from tasks.planning.state import OracleUnknown, PlanState, read_problem, step
from verifiers.pddl_model import Problem, atom_text
from verifiers.planner import Mode, PlanSearch, applicable_actions, plan
from verifiers.planning import apply, goal_holds, parse_action
from verifiers.verdict import Invalid

__all__ = ["MAX_PROMPT_FACTS", "ApplicableActions", "PlanPrompts", "PlannerJudge", "PlannerOracle",
           "PlanningOptions", "ReplayPlan", "ShortPrompts"]

MAX_PROMPT_FACTS = 200


class ApplicableActions:
    """LegalMoves: every ground action whose preconditions hold."""

    def legal_thoughts(self, state: PlanState) -> Sequence[Thought]:
        return [Thought(a.text()) for a in applicable_actions(state.problem, state.atoms)]


def state_text(state: PlanState) -> str:
    """The actions, the true facts (at most MAX_PROMPT_FACTS), the goal and the plan so far."""
    p = state.problem
    actions = ", ".join(f"({s.name} {' '.join(v for v, _ in s.params)})".replace(" )", ")") for s in p.schemas)
    facts = " ".join(sorted(atom_text(a) for a in state.atoms)[:MAX_PROMPT_FACTS])
    goal = " ".join(("" if pos else "not ") + atom_text(a) for pos, a in p.goal)
    return prompts.STATE.format(actions=actions, facts=facts, goal=goal, plan=" ".join(state.plan) or "(none)")


class PlanPrompts:
    """ProposePrompts, SamplePrompts, ValuePrompts and VotePrompt."""

    def propose_prompt(self, state: PlanState, chat: bool) -> str:
        return prompts.PROPOSE.format(state=state_text(state))

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
        return prompts.VALUE.format(state=state_text(state))

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[PlanState], chat: bool) -> str:
        goal = " ".join(atom_text(a) for _pos, a in states[0].problem.goal) if states else ""
        choices = "\n".join(f"Choice {k}: {' '.join(s.plan) or '(no actions yet)'}" for k, s in enumerate(states, 1))
        return prompts.VOTE.format(goal=goal, choices=choices)


class ShortPrompts:
    """TrainingPrompts: the zero-shot prompts of ``tot export planning`` and of the adapters trained
    on its data: the domain's name, every true fact, the goal; labels ` sure`/` impossible`, steps
    as one action, ``(name argument ...)``."""

    def _fields(self, state: PlanState) -> dict[str, str]:
        p = state.problem
        return {"domain": p.domain_name, "facts": " ".join(sorted(atom_text(a) for a in state.atoms)),
                "goal": " ".join(("" if pos else "not ") + atom_text(a) for pos, a in p.goal)}

    def train_value_prompt(self, state: PlanState) -> str:
        return prompts.TRAIN_VALUE.format(**self._fields(state))

    def train_step_prompt(self, state: PlanState) -> str:
        return prompts.TRAIN_STEP.format(**self._fields(state))


MEMO_STATES = 100_000  # proved answers the oracle keeps per task (a state's atoms and its distance)


class PlannerJudge:
    """HasOracle and OwnEvaluators: the planner, with a time limit, as the exact oracle, and the
    task's own ``oracle`` evaluator (``PlannerOracle``: nearer the goal ranks first).

    The grounding is made once per problem (the backends cache it). Answers that are proved are
    remembered: a state with no plan, and every state along a plan found (each has the rest of the
    plan, and in optimal mode the rest of an optimal plan is optimal), so the false-prune audit and
    the evaluator, which ask about neighbouring states thousands of times, mostly find the answer
    already known. "unknown" (the time ran out) is never remembered: a later call may prove more."""

    def __init__(self, seconds: float, mode: Mode, planner: str | None = None) -> None:
        self.seconds = seconds
        self.mode: Mode = mode
        self.planner = planner
        # per problem (held, so that its id is not reused): state atoms -> distance, -1 for proved no plan
        self._known: dict[int, tuple[Problem, dict[frozenset[tuple[str, ...]], int]]] = {}

    def _search(self, state: PlanState) -> int | None:
        memo = self._known.setdefault(id(state.problem), (state.problem, {}))[1]
        if state.atoms in memo:
            return memo[state.atoms]
        res: PlanSearch = plan(state.problem, state.atoms, self.seconds, self.mode, self.planner)
        if res.status == "unknown":
            return None
        if len(memo) > MEMO_STATES:
            memo.clear()
        if res.plan is None:
            memo[state.atoms] = -1
            return -1
        cur = state.atoms
        for i, act in enumerate(res.plan):  # every state on the plan: the rest of the plan reaches the goal
            memo[cur] = len(res.plan) - i
            cur = apply(state.problem, cur, act)
        return len(res.plan)

    def oracle_verdict(self, state: PlanState) -> bool | None:
        """True: a plan from here exists; False: proved none; None: the time limit ran out."""
        if goal_holds(state.problem, state.atoms):
            return True
        dist = self._search(state)
        return None if dist is None else dist >= 0

    def distance(self, state: PlanState) -> int | None:
        """The length of the planner's plan from here (-1: proved none; None: time limit ran out).
        Exact (HasDistance, the label export) only in optimal mode with a planner that counts actions;
        in satisficing mode it is the length of some plan (enough for the evaluator's order)."""
        if goal_holds(state.problem, state.atoms):
            return 0
        return self._search(state)

    def oracle(self, state: PlanState) -> bool:
        verdict = self.oracle_verdict(state)
        if verdict is None:
            raise OracleUnknown(f"the planner found neither a plan nor a proof of none in {self.seconds:g} s")
        return verdict

    def make_evaluator(self, name: str, settings: Any) -> Any:
        return PlannerOracle() if name == "oracle" else None


class ReplayPlan:
    """Restorable: the state ``describe`` wrote (for ``tot audit``), rebuilt by replaying its actions."""

    def restore(self, puzzle: str, description: str) -> PlanState:
        problem = read_problem(puzzle)
        state = PlanState(problem.init, problem)
        _, sep, actions = description.partition(": ")
        if not sep or not description.startswith("after "):
            raise ValueError(f"not a planning state description: {description[:60]!r}")
        for piece in re.findall(r"\([^()]*\)", actions if actions != "(start)" else ""):
            verdict = step(state, Thought(piece))
            if isinstance(verdict, Invalid):
                raise ValueError(f"the described plan does not replay: {verdict.reason}")
            state = verdict.state
        return state


class PlanningOptions:
    """HasOptions: what rebuilds the task (recorded in traces): the step limit and the oracle's planner."""

    def __init__(self, max_depth: int, seconds: float, mode: Mode, planner: str) -> None:
        self.max_depth, self.seconds, self.planner = max_depth, seconds, planner
        self.mode: Mode = mode

    def options(self) -> dict[str, Any]:
        return {"max_depth": self.max_depth, "oracle_seconds": self.seconds, "oracle_mode": self.mode,
                "oracle_planner": self.planner}


@dataclass(frozen=True, slots=True)
class PlannerOracle:
    """The exact oracle as an evaluator. A state with no plan scores 0 (pruned); a state with a
    plan scores 0.5 + 0.5 / (1 + its plan's length), so states nearer the goal rank first (the
    upper bound of what a perfect evaluator could do); when the planner's time limit runs out
    the state scores 0.5 (kept, not pruned): the search is not told a guess."""

    name: str = "oracle"
    prune_below: float = 0.5
    needs: ClassVar[Needs] = Needs((PlannerJudge,))  # the planning task's planner; no model

    async def __call__(self, task: Any, nodes: Sequence[Any], model: Any) -> list[tuple[float, Any]]:
        judge = require(task, PlannerJudge, f"evaluator `{self.name}`")
        out: list[tuple[float, Any]] = []
        for nd in nodes:
            dist = judge.distance(nd.state)
            if dist is None:
                out.append((0.5, "unknown"))
            else:
                out.append((0.0, "no plan") if dist < 0 else (0.5 + 0.5 / (1 + dist), f"plan of {dist}"))
        return out
