"""examples/minimal_task.py, as a user would run it and as the testing kit checks a task: the
script solves its puzzle and prints a verified answer with its report; its task is the core in
five methods plus one composed part; the kit's search invariants hold on it.

The references here share no code with the example: the answer is replayed with plain
arithmetic, and which puzzles are solvable is a breadth-first search written below."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from hypothesis import strategies as st

from solver.task import Task
from solver.task_capabilities import LegalMoves, find
from solver.testing import check_search_invariants
from solver.testing.parts import check_parts
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "minimal_task.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("minimal_task", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["minimal_task"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


EXAMPLE = _load()


def _replay(start: int, answer: str) -> int:
    """The number an answer's steps reach from ``start`` (an independent reading)."""
    value = start
    for op in answer.split():
        assert op in ("+3", "*2"), op
        value = value + 3 if op == "+3" else value * 2
    return value


def _fewest_steps(start: int, target: int) -> int | None:
    """Breadth-first over numbers up to the target: the fewest steps, or None when unreachable."""
    level, seen, depth = {start}, {start}, 0
    while level:
        if target in level:
            return depth
        level = {n for v in level for n in (v + 3, v * 2) if n <= target and n not in seen}
        seen |= level
        depth += 1
    return None


def test_the_script_solves_its_puzzle_and_prints_a_verified_answer_with_its_report() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120,
                         cwd=str(ROOT))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "puzzle: 3 99"
    answer = lines[1].removeprefix("answer: ")
    assert lines[1].startswith("answer: ") and _replay(3, answer) == 99
    assert len(answer.split()) <= 12
    assert lines[2] == "verified: True"
    assert lines[3] == "verified under steps +3 and *2, at most 12"
    assert [ln.split()[0] for ln in lines[4:]] == ["pass", "pass", "pass"]


def test_the_task_is_the_core_in_five_methods_and_composes_one_part() -> None:
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ReachTarget")
    methods = [n.name for n in cls.body if isinstance(n, ast.FunctionDef)]
    assert [m for m in methods if m != "__init__"] == ["root", "check", "answer", "report_answer", "describe"]
    task = EXAMPLE.ReachTarget()
    assert isinstance(task, Task)
    assert find(task, LegalMoves) is task.parts[0]
    assert set(check_parts(task)) == {LegalMoves}


def test_the_report_refuses_wrong_answers() -> None:
    task = EXAMPLE.ReachTarget()
    assert task.report_answer("3 99", "+3 *2 *2 *2 +3 +3 +3").verified is False  # reaches 57
    assert task.report_answer("3 99", "+3 +3 +3 +3 +3 +3 +3 *2 *2 +3").verified
    assert task.report_answer("3 99", "+4").verified is False
    assert task.report_answer("3 9x", "+3").verified is False


def _solvable(puzzle: str) -> bool:
    start, target = map(int, puzzle.split())
    fewest = _fewest_steps(start, target)
    return fewest is not None and fewest <= EXAMPLE.ReachTarget.max_depth


def test_the_testing_kits_search_invariants_hold_on_the_example() -> None:
    puzzles = st.tuples(st.integers(1, 30), st.integers(1, 120)).map(lambda p: f"{p[0]} {p[1]}")
    check_search_invariants(EXAMPLE.ReachTarget, puzzles, max_examples=examples(25), solvable=_solvable,
                            answer_ok=lambda p, a: _replay(int(p.split()[0]), a) == int(p.split()[1]))


def test_docs_task_protocol_starts_from_the_example_as_it_is() -> None:
    import re

    doc = (ROOT / "docs" / "task-protocol.md").read_text(encoding="utf-8")
    source = SCRIPT.read_text(encoding="utf-8")
    excerpts = re.findall(r"```py\n(.*?)```", doc, re.S)
    assert len(excerpts) >= 2 and all(e in source for e in excerpts)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120,
                         cwd=str(ROOT))
    shown = re.findall(r"```console\n\$ python examples/minimal_task.py\n(.*?)```", doc, re.S)
    assert shown == [out.stdout]
