"""The pure-Python planner backend (pyperplan), always installed: grounds a problem once and
searches it under a time budget. A search that runs out of time answers "unknown", never a guess.

Optimal mode is A* with the LM-cut heuristic (admissible, so the plan has the fewest actions; action
costs are ignored). Satisficing mode is greedy best-first search with the FF heuristic. Negative
preconditions are checked on every expansion; the heuristics ignore them, which keeps LM-cut
admissible (it estimates a relaxation of the problem).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Literal

from pyperplan.heuristics.lm_cut import LmCutHeuristic
from pyperplan.heuristics.relaxation import hFFHeuristic
from pyperplan.search.a_star import astar_search, greedy_best_first_search
from pyperplan.task import Operator, Task

from verifiers.pddl_model import Atom, Problem, Schema, atom_text
from verifiers.planning import GroundAction, State

__all__ = ["Grounded", "MAX_GROUND_ACTIONS", "Mode", "Raw", "applicable_actions", "ground", "search"]

Mode = Literal["optimal", "satisficing"]
MAX_GROUND_ACTIONS = 200_000


class _OutOfTime(Exception):
    pass


class _Operator(Operator):  # type: ignore[misc]
    """A pyperplan operator that also has negative (fluent) preconditions."""

    def __init__(self, name: str, pre: frozenset[str], neg: frozenset[str],
                 add: frozenset[str], delete: frozenset[str], action: GroundAction) -> None:
        super().__init__(name, pre, add, delete)
        self.neg = neg
        self.action = action

    def applicable(self, state: frozenset[str]) -> bool:
        return self.preconditions <= state and not (self.neg & state)


class _BudgetTask(Task):  # type: ignore[misc]
    """A pyperplan task that stops the search when its deadline passes, and knows negative goals."""

    def __init__(self, facts: set[str], init: frozenset[str], goals: frozenset[str],
                 neg_goals: frozenset[str], ops: list[_Operator], deadline: float) -> None:
        super().__init__("task", facts, init, goals, ops)
        self.neg_goals = neg_goals
        self.deadline = deadline
        self.expanded = 0

    def goal_reached(self, state: frozenset[str]) -> bool:
        return self.goals <= state and not (self.neg_goals & state)

    def check_deadline(self) -> None:
        """_OutOfTime once the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise _OutOfTime

    def get_successor_states(self, state: frozenset[str]) -> list[tuple[Operator, frozenset[str]]]:
        self.expanded += 1
        self.check_deadline()
        return [(op, op.apply(state)) for op in self.operators if op.applicable(state)]


class _Timed:
    """A heuristic that checks the task's deadline before each evaluation. The search checks it
    only once an expansion, and one expansion evaluates every successor: on tyreworld p17 (52
    successors, LM-cut 0.44 s each) that ran 23 s past a 30 s limit."""

    def __init__(self, heuristic: object, task: _BudgetTask) -> None:
        self.heuristic = heuristic
        self.task = task

    def __call__(self, node: object) -> float:
        self.task.check_deadline()
        return self.heuristic(node)  # type: ignore[operator,no-any-return]


@dataclass(frozen=True, slots=True)
class Grounded:
    """Every ground action whose static preconditions hold, with its fluent parts."""

    fluents: frozenset[str]  # predicates some action changes
    actions: tuple[tuple[GroundAction, frozenset[Atom], frozenset[Atom], frozenset[Atom], frozenset[Atom]], ...]


def _fluent_predicates(problem: Problem) -> frozenset[str]:
    return frozenset(a[0] for s in problem.schemas for a in (*s.add, *s.delete))


def _bindings(problem: Problem, schema: Schema, fluents: frozenset[str]) -> Iterator[dict[str, str]]:
    """Parameter bindings whose static literals (and equalities) hold, found by backtracking."""
    candidates = [[o for o, t in problem.objects if problem.is_a(t, typ)] for _, typ in schema.params]
    statics = [lit for lit in schema.pre if lit[1][0] not in fluents]
    order = [v for v, _ in schema.params]
    # Check each static literal as soon as its last parameter is bound.
    due: dict[int, list[tuple[bool, Atom]]] = {}
    for lit in statics:
        idx = max((order.index(a) for a in lit[1][1:] if a in order), default=-1)
        due.setdefault(idx, []).append(lit)

    def ok(lit: tuple[bool, Atom], env: dict[str, str]) -> bool:
        pos, atom = lit
        ground = (atom[0], *(env.get(a, a) for a in atom[1:]))
        if ground[0] == "=":
            return (ground[1] == ground[2]) == pos
        return (ground in problem.init) == pos

    if not all(ok(lit, {}) for lit in due.get(-1, [])):
        return

    def rec(i: int, env: dict[str, str]) -> Iterator[dict[str, str]]:
        if i == len(order):
            yield dict(env)
            return
        for obj in candidates[i]:
            env[order[i]] = obj
            if all(ok(lit, env) for lit in due.get(i, [])):
                yield from rec(i + 1, env)
            del env[order[i]]

    yield from rec(0, {})


@lru_cache(maxsize=16)
def ground(problem: Problem) -> Grounded:
    """Ground every action schema over the problem's objects (a pure function of the problem)."""
    fluents = _fluent_predicates(problem)
    out = []
    for schema in problem.schemas:
        for env in _bindings(problem, schema, fluents):

            def b(atom: Atom, env: dict[str, str] = env) -> Atom:
                return (atom[0], *(env.get(a, a) for a in atom[1:]))

            pre = frozenset(b(a) for pos, a in schema.pre if pos and a[0] in fluents)
            neg = frozenset(b(a) for pos, a in schema.pre if not pos and a[0] in fluents)
            args = tuple(env[v] for v, _ in schema.params)
            out.append((GroundAction(schema.name, args), pre, neg,
                        frozenset(b(a) for a in schema.add), frozenset(b(a) for a in schema.delete)))
            if len(out) > MAX_GROUND_ACTIONS:
                raise ValueError(f"the problem has more than {MAX_GROUND_ACTIONS} ground actions: too large to plan")
    return Grounded(fluents, tuple(out))


@dataclass(frozen=True, slots=True)
class Raw:
    """A backend's answer before the interface validates it."""

    status: Literal["solved", "unsolvable", "unknown"]
    plan: tuple[GroundAction, ...] | None
    expanded: int
    detail: str = ""
    peak_kb: int | None = None  # a child process's peak memory, where the backend runs one


def _txt(atoms: frozenset[Atom]) -> frozenset[str]:
    return frozenset(atom_text(a) for a in atoms)


class _Compiled:
    """The pyperplan operators of one problem and its heuristics, built once and reused by every
    search on that problem (the oracle asks thousands of states of one problem). The heuristics
    keep only scratch values that each evaluation resets, so reusing them between searches is
    sound; searches run one at a time (the planner call is synchronous)."""

    def __init__(self, problem: Problem) -> None:
        g = ground(problem)
        self.fluents = g.fluents
        self.ops = [_Operator(ga.text(), _txt(pre), _txt(neg), _txt(add), _txt(dele), ga)
                    for ga, pre, neg, add, dele in g.actions]
        facts = {atom_text(a) for a in problem.init if a[0] in g.fluents}
        for op in self.ops:
            facts |= op.preconditions | op.add_effects | op.del_effects | op.neg
        self.facts = facts
        self.goals = frozenset(atom_text(a) for pos, a in problem.goal if pos and a[0] in g.fluents)
        self.neg_goals = frozenset(atom_text(a) for pos, a in problem.goal if not pos and a[0] in g.fluents)
        self._heuristics: dict[Mode, object] = {}

    def heuristic(self, mode: Mode, task: Task) -> object:
        if mode not in self._heuristics:
            self._heuristics[mode] = LmCutHeuristic(task) if mode == "optimal" else hFFHeuristic(task)
        return self._heuristics[mode]


@lru_cache(maxsize=16)
def _compiled(problem: Problem) -> _Compiled:
    return _Compiled(problem)


def search(problem: Problem, state: State, time_limit: float, mode: Mode) -> Raw:
    """Search from ``state`` within ``time_limit`` seconds: A* with LM-cut (optimal) or greedy
    best-first with FF (satisficing)."""
    start = time.monotonic()
    c = _compiled(problem)
    statics_ok = all((a in state) == pos for pos, a in problem.goal if a[0] not in c.fluents and a[0] != "=")
    eq_ok = all((a[1] == a[2]) == pos for pos, a in problem.goal if a[0] == "=")
    if not (statics_ok and eq_ok):
        return Raw("unsolvable", None, 0, "a goal on a fact no action changes does not hold")
    init = frozenset(atom_text(a) for a in state if a[0] in c.fluents)
    if not init <= c.facts:  # a state no action reaches: its own task, so the heuristic knows its facts
        task = _BudgetTask(c.facts | init, init, c.goals, c.neg_goals, c.ops, start + time_limit)
        h: object = LmCutHeuristic(task) if mode == "optimal" else hFFHeuristic(task)
    else:
        task = _BudgetTask(c.facts, init, c.goals, c.neg_goals, c.ops, start + time_limit)
        h = c.heuristic(mode, task)
    h = _Timed(h, task)
    try:
        found = astar_search(task, h) if mode == "optimal" else greedy_best_first_search(task, h)
    except _OutOfTime:
        return Raw("unknown", None, task.expanded, "the time limit ran out")
    if found is None:
        return Raw("unsolvable", None, task.expanded, "the search space is exhausted")
    return Raw("solved", tuple(op.action for op in found), task.expanded)


def applicable_actions(problem: Problem, state: State) -> list[GroundAction]:
    """Every ground action applicable in ``state`` (static preconditions were checked when grounding)."""
    g = ground(problem)
    return [ga for ga, pre, neg, _a, _d in g.actions if pre <= state and not (neg & state)]
