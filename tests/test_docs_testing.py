"""docs/testing.md runs as written: its Python blocks are executed in order and the test they
define passes; the same task with a state-mutating bug is caught, with the message the page shows."""

from __future__ import annotations

import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from solver.testing import InvariantBroken

DOC = Path(__file__).resolve().parents[1] / "docs" / "testing.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def _run_doc() -> dict[str, Any]:
    module = types.ModuleType("docs_testing")  # a real module: dataclasses and pickle look classes up there
    sys.modules[module.__name__] = module
    for block in _blocks():
        exec(compile(block, str(DOC), "exec"), module.__dict__)  # our own documentation, never model text
    return module.__dict__


def test_the_worked_example_runs_as_written() -> None:
    blocks = _blocks()
    assert len(blocks) == 2
    task_lines = [ln for ln in blocks[0].splitlines() if ln.strip()]
    test_lines = [ln for ln in blocks[1].splitlines() if ln.strip() and not ln.startswith(("from", "import"))]
    assert len(task_lines) <= 40 and len(test_lines) <= 5  # "a small task in a few lines"
    ns = _run_doc()
    ns["test_make_change_search_invariants"]()


def test_the_worked_example_catches_the_bug_the_page_shows() -> None:
    ns = _run_doc()

    @dataclass(frozen=True)
    class LeakyPurse:
        left: int
        coins: list[str] = field(default_factory=list, compare=False, hash=False)

        def __getitem__(self, i: int) -> Any:
            return (self.left, tuple(self.coins))[i]

    base: Any = ns["MakeChange"]

    class Leaky(base):  # type: ignore[misc,valid-type]
        """Keeps the coins paid in one list that a state and its children share."""

        def root(self, puzzle: str) -> Any:
            return LeakyPurse(int(puzzle))

        def check(self, s: Any, thought: Any) -> Any:
            verdict = super().check(s, thought)
            if hasattr(verdict, "state"):
                s.coins.append(verdict.state[1][-1])  # the bug: the parent's list grows
                verdict = type(verdict)(LeakyPurse(verdict.state[0], s.coins))
            return verdict

    with pytest.raises(InvariantBroken) as caught:
        ns["check_search_invariants"](Leaky(), ns["st"].integers(1, 120).map(str), max_examples=40)
    # (the exact case is hypothesis's smallest; the page shows the one the "ci" profile finds)
    message = str(caught.value)
    assert message.startswith("states are never mutated: a state changed after the task made it")
    assert "\n  case: Case(puzzle=" in message
