"""The one planner interface: the oracle, ``--method planner``, ``--method llmp`` and the planning
bench call ``plan`` and nothing else. A backend searches under a time budget; its plan is taken
only after the project's own simulator has replayed it from the start state to the goal (a
planner's plan is never trusted unvalidated); a search that ran out of time answers "unknown",
never a guess.

Backends: ``fast-downward`` (compiled, from the optional ``planners`` extra; the default when
installed), ``pyperplan`` (pure Python, always installed; the exact oracle's default) and
``pymimir`` (compiled, in process, optional ``mimir`` extra; used when named). A plan is judged by
the problem's objective: its total cost where the problem minimises action costs (floortile), as
Fast Downward reads the original files, else its number of actions. Fast Downward minimises
costs; pyperplan and pymimir count actions (pyperplan has no costs; pymimir 0.13's A* with costs
reported "exhausted" on a solvable problem), and their runs say so. ``optimal`` is True exactly
when an optimal search (A* with an admissible heuristic: LM-cut, or h-max in pymimir) of the
problem's objective finished with the plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Literal

from verifiers import planner_fd, planner_mimir, planner_pyperplan
from verifiers.pddl_model import Problem
from verifiers.planner_pyperplan import MAX_GROUND_ACTIONS, Grounded, Mode, Raw, applicable_actions, ground
from verifiers.planning import GroundAction, State, simulate

__all__ = ["BACKENDS", "Grounded", "HONOURS_COSTS", "MAX_GROUND_ACTIONS", "Mode", "ORACLE_DEFAULT", "PlanSearch",
           "applicable_actions", "available", "default_planner", "ground", "oracle_default", "plan",
           "planner_line", "resolve"]

Backend = Callable[[Problem, State, float, Mode], Raw]
# The backends that minimise a problem's action costs (the others count actions).
HONOURS_COSTS = frozenset({"fast-downward"})
# name -> (search function, whether it is installed)
BACKENDS: dict[str, tuple[Backend, Callable[[], bool]]] = {
    "fast-downward": (planner_fd.search, lambda: planner_fd.driver() is not None),
    "pyperplan": (planner_pyperplan.search, lambda: True),
    "pymimir": (planner_mimir.search, planner_mimir.installed),  # optional, named with --planner
}
PREFERRED = ("fast-downward", "pyperplan")
# The exact oracle asks about thousands of neighbouring states of one problem. On LLM+P Blocksworld
# p01-p19 (benchmarks/oracle_speed.py, docs/planners.md) it answered 314 calls/s with pymimir, 8.9
# with pyperplan (in process, grounding and heuristics kept per problem) and 6.6 with Fast Downward
# (a process and a translation per call). pyperplan stays the default: its answers are the same
# from run to run, while pymimir's satisficing plans (the evaluator's distances) varied between
# identical calls; --planner pymimir chooses the fast one.
ORACLE_DEFAULT = "pyperplan"


def oracle_default() -> str:
    return ORACLE_DEFAULT


@dataclass(frozen=True, slots=True)
class PlanSearch:
    """A planner's answer: status "solved" (with a plan the simulator validated), "unsolvable"
    (proved), or "unknown" (the budget ran out, or the backend gave no proof or a plan that failed
    validation: ``detail`` says which)."""

    status: Literal["solved", "unsolvable", "unknown"]
    plan: tuple[GroundAction, ...] | None
    expanded: int
    seconds: float
    mode: Mode
    planner: str = "pyperplan"
    detail: str = ""
    peak_kb: int | None = None  # the planner process's peak memory (Fast Downward); None in-process
    costs_ignored: bool = False  # the problem minimises action costs; this backend counted actions
    cost: int | None = None  # the plan's total cost (the simulator's count); None without costs or plan
    action_costs: bool = False  # the problem minimises action costs (the objective is ``cost``)

    @property
    def fewest_actions(self) -> bool:
        """An optimal search of the number of actions finished with this plan (costs do not apply,
        or this backend did not use them)."""
        return self.status == "solved" and self.mode == "optimal" and (not self.action_costs or self.costs_ignored)

    @property
    def optimal(self) -> bool:
        """An optimal search of the problem's objective finished with this plan: no plan has fewer
        actions, or, where the problem minimises action costs, a smaller total cost."""
        return self.status == "solved" and self.mode == "optimal" and not self.costs_ignored

    @property
    def optimal_length(self) -> int | None:
        """The plan's length when it is optimal."""
        return len(self.plan) if self.optimal and self.plan is not None else None

    @property
    def optimal_cost(self) -> int | None:
        """The plan's total cost when it is optimal and the problem minimises costs."""
        return self.cost if self.optimal and self.action_costs else None

    @property
    def optimum(self) -> int | None:
        """The least value of the problem's objective, when this run proved it: the optimal cost
        where costs apply, else the optimal length."""
        return self.optimal_cost if self.action_costs else self.optimal_length

    def summary(self) -> str:
        """One line: status, backend, search, plan length (and whether it is proved optimal), time."""
        what = ("satisficing search" if self.mode == "satisficing"
                else "A* with h-max" if self.planner == "pymimir" else "A* with LM-cut")
        # a backend that does not report expanded states (pymimir; Fast Downward killed at its limit) says 0
        count = f", {self.expanded} expanded" if self.expanded else ""
        head = f"{self.status} ({self.planner}, {what}, {self.seconds:.1f} s{count})"
        if self.plan is not None:
            head += f": {len(self.plan)} steps"
            if self.action_costs and not self.costs_ignored:
                head += f", total cost {self.cost}, " + ("proved optimal (the least total cost)" if self.optimal
                                                          else "optimality not proved")
            elif self.costs_ignored:
                head += (f", total cost {self.cost}, " + ("the fewest actions proved" if self.fewest_actions
                                                          else "optimality not proved")
                         + f"; {self.planner} does not use the domain's action costs, so the least total cost "
                         "is not proved (--planner fast-downward minimises them)")
            else:
                head += ", " + ("proved optimal" if self.optimal else "optimality not proved")
        elif self.detail:
            head += f": {self.detail}"
            if self.costs_ignored:
                head += f"; {self.planner} does not use the domain's action costs"
        return head


def available() -> list[str]:
    """The installed backends, in order of preference."""
    order = [*PREFERRED, *(n for n in BACKENDS if n not in PREFERRED)]
    return [n for n in order if BACKENDS[n][1]()]


def default_planner() -> str:
    return available()[0]


def resolve(name: str | None) -> str:
    """The backend to run: ``name``, or the default; ValueError in one line for an unknown or
    missing one, naming those available."""
    if name is None or name == "default":
        return default_planner()
    if name not in BACKENDS:
        raise ValueError(f"unknown planner {name!r}; available: {', '.join(available())}")
    if not BACKENDS[name][1]():
        raise ValueError(f"planner {name!r} is not installed (pip install 'verified-tot[planners]'); "
                         f"available: {', '.join(available())}")
    return name


def planner_line(name: str | None) -> str:
    """What a run says at its start: which planner runs, and why when it is the fallback."""
    chosen = resolve(name)
    if chosen == "pyperplan" and name in (None, "default"):
        return ("planner: pyperplan (pure Python; Fast Downward is not installed: "
                "pip install 'verified-tot[planners]' for the compiled one)")
    return f"planner: {chosen}"


def plan(problem: Problem, state: State | None = None, time_limit: float = 10.0,
         mode: Mode = "optimal", planner: str | None = None) -> PlanSearch:
    """Search for a plan from ``state`` (the initial state by default) within ``time_limit``
    seconds with the named backend (default: the preferred installed one)."""
    name = resolve(planner)
    start = time.monotonic()
    cur = problem.init if state is None else state
    raw = BACKENDS[name][0](problem, cur, time_limit, mode)
    seconds = time.monotonic() - start
    costs = problem.action_costs
    ignored = costs and name not in HONOURS_COSTS
    if raw.status != "solved" or raw.plan is None:
        return PlanSearch(raw.status, None, raw.expanded, seconds, mode, name, raw.detail, raw.peak_kb, ignored,
                          action_costs=costs)
    check = simulate(problem, list(raw.plan), cur)
    if not check.valid:  # a backend's bug or a translation gap: reported, never passed on as a plan
        return PlanSearch("unknown", None, raw.expanded, seconds, mode, name,
                          f"{name}'s plan failed validation: {check.reason}", raw.peak_kb, ignored, action_costs=costs)
    return PlanSearch("solved", raw.plan, raw.expanded, seconds, mode, name, "", raw.peak_kb, ignored,
                      check.cost if costs else None, costs)
