"""The in-process compiled backend: pymimir (``pip install pymimir``), optional. Each call writes
the problem from the given state (``pddl_write``), lets pymimir parse and ground it (milliseconds on
the LLM+P problems) and searches: greedy best-first with FF (satisficing) or A* with the admissible
h-max (optimal, unit costs). pymimir prints its grounding on the C-level standard output; file
descriptor 1 points at /dev/null during the call so that ``--json`` output stays clean."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import time
from typing import Any, Iterator

from verifiers.pddl_model import Problem
from verifiers.pddl_write import write_domain, write_problem
from verifiers.planner_pyperplan import Mode, Raw
from verifiers.planning import State, parse_plan

__all__ = ["installed", "search"]


def installed() -> bool:
    return importlib.util.find_spec("pymimir") is not None


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def search(problem: Problem, state: State, time_limit: float, mode: Mode) -> Raw:
    import pymimir

    start = time.monotonic()
    result: Any
    with _quiet_stdout():
        domain = pymimir.Domain(write_domain(problem))
        task = pymimir.Problem(domain, write_problem(problem, state), "grounded")
        left = time_limit - (time.monotonic() - start)
        if left <= 0:
            return Raw("unknown", None, 0, "the time limit ran out")
        if mode == "optimal":
            result = pymimir.astar_eager(task, task.get_initial_state(), pymimir.MaxHeuristic(task),
                                         max_time_seconds=left)
        else:
            result = pymimir.gbfs_eager(task, task.get_initial_state(), pymimir.FFHeuristic(task),
                                        max_time_seconds=left)
    status = str(result.status)
    if status == "solved":
        try:
            steps = parse_plan("\n".join(str(a) for a in (result.solution or [])))
        except ValueError as e:
            return Raw("unknown", None, 0, f"pymimir's plan does not parse: {e}")
        return Raw("solved", tuple(steps), 0)
    if status == "unsolvable":  # the search space is exhausted (FF and h-max only prune true dead ends)
        return Raw("unsolvable", None, 0, "pymimir proved there is no plan")
    if status == "out_of_time":
        return Raw("unknown", None, 0, "the time limit ran out")
    return Raw("unknown", None, 0, f"pymimir stopped without an answer ({status})")
