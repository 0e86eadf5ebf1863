"""The gated step: every search checks each thought through one GatedStep, once."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from solver.evaluators import make_evaluator
from solver.generators import make_generator
from solver.searches import run_search
from solver.task import Thought
from solver.trace import Trace
from tasks.game24 import Game24

ROOT = Path(__file__).resolve().parent.parent


class CountingGame24(Game24):
    """Game of 24 that counts the calls of its exact check."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[Any, str]] = []

    def check(self, state: Any, thought: Thought) -> Any:
        self.calls.append((state, thought.text))
        return super().check(state, thought)


def _runs(task: CountingGame24, puzzle: str, trace: Trace) -> Any:
    gen, oracle = make_generator("enumerate"), make_evaluator("oracle")
    return {
        "tot-bfs": lambda: run_search("tot-bfs", task, puzzle, gen, oracle, None, breadth=2, trace=trace),
        "tot-dfs": lambda: run_search("tot-dfs", task, puzzle, gen, oracle, None, trace=trace),
        "tot-complete": lambda: run_search("tot-complete", task, puzzle, gen, make_evaluator("prior"), None,
                                           trace=trace),
        "long": lambda: run_search("long", task, puzzle, gen, None, None, max_rounds=40, trace=trace),
        "long+oracle": lambda: run_search("long", task, puzzle, gen, oracle, None, trace=trace),
    }


@pytest.mark.parametrize("puzzle", ["4 9 10 13", "1 1 1 1"])
@pytest.mark.parametrize("method", ["tot-bfs", "tot-dfs", "tot-complete", "long", "long+oracle"])
def test_each_thought_met_is_checked_exactly_once_and_traced(method: str, puzzle: str) -> None:
    task, trace = CountingGame24(), Trace()
    res = asyncio.run(_runs(task, puzzle, trace)[method]())
    # Every thought a search met is in the trace once, as a proposal or as a scored probe (Long's
    # controller with an evaluator scores thoughts before its rounds try them); each was checked
    # exactly once, however many events name it.
    met: list[tuple[int, str]] = []
    for ev in trace.events:
        if ev["event"] == "proposal" or (ev["event"] == "score" and "parent" in ev):
            met.append((ev["parent"], ev["thought"]))
    assert len(task.calls) == len(set(met))
    if method != "long+oracle":
        assert len(task.calls) == res.proposed  # no probes: one check per proposal
    assert res.proposed == sum(1 for ev in trace.events if ev["event"] == "proposal")
    assert res.rejected == sum(1 for ev in trace.events if ev["event"] == "verdict" and ev["verdict"] == "invalid")


def test_task_check_is_called_in_one_place_of_the_core() -> None:
    """Only the gated step calls a task's exact check (the tools that re-check a trace are not
    the core)."""
    callers = []
    for path in sorted((ROOT / "solver").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("solver/tools/", "solver/testing/")):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\.check\(", line):
                callers.append(f"{rel}:{n}")
    assert len(callers) == 1 and callers[0].startswith("solver/step.py:"), callers
