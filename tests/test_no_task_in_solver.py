"""The core and its tools name no task: no identifier, import or code value (a string that is a
word, a path or a module name, not a sentence for a person) under ``solver/`` names one of the
tasks, and no file there is named for one. A task's own parts (its adapters, its answer's look,
its official logs' shape) live with the task and reach ``solver`` through its plugin.

Sentences (help texts, field descriptions) and docstrings and comments are not code here: a task
given there as an example is no dependency on it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("game24", "game_24", "sudoku", "crossword", "writing", "planning")
NAMES = re.compile("|".join(TASKS), re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def task_names_in(source: str) -> list[tuple[int, str]]:
    """(line, text) of each identifier, import or code string in ``source`` that names a task."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for n in ast.walk(tree):
        texts: list[str] = []
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            texts = [n.value] if not any(c.isspace() for c in n.value) else []  # a sentence is for a person
        elif isinstance(n, ast.Name):
            texts = [n.id]
        elif isinstance(n, ast.Attribute):
            texts = [n.attr]
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            texts = [n.name]
        elif isinstance(n, ast.arg):
            texts = [n.arg]
        elif isinstance(n, ast.keyword) and n.arg:
            texts = [n.arg]
        elif isinstance(n, ast.alias):
            texts = [n.name, n.asname or ""]
        elif isinstance(n, ast.ImportFrom):
            texts = [n.module or ""]
        found += [(getattr(n, "lineno", 0), t) for t in texts if NAMES.search(t)]
    return found


def test_the_check_finds_a_task_named_in_code() -> None:
    code = ('import tasks.sudoku\nfrom tasks.planning import x\ndef f(task, game24_path):\n'
            '    crossword = 1\n    return " = 24" if task == "game24" else "tasks/writing/x.json"\n')
    assert [t for _, t in task_names_in(code)] != []
    assert {t for _, t in task_names_in(code)} >= {"tasks.sudoku", "tasks.planning", "game24_path", "crossword",
                                                   "game24", "tasks/writing/x.json"}
    prose = '"""A docstring on game24."""\nHELP = "an example: writing\'s refine"  # sudoku\n'
    assert task_names_in(prose) == []


def test_no_module_under_solver_names_a_task() -> None:
    found = [f"{p.relative_to(ROOT)}:{line}: {text!r}" for p in sorted((ROOT / "solver").rglob("*.py"))
             for line, text in task_names_in(p.read_text(encoding="utf-8"))]
    assert found == [], "\n".join(found)


def test_no_file_under_solver_is_named_for_a_task() -> None:
    named = [str(p.relative_to(ROOT)) for p in (ROOT / "solver").rglob("*")
             if "__pycache__" not in p.parts and NAMES.search(p.name)]
    assert named == []


def test_the_answer_is_printed_with_the_task_plugins_own_suffix(capsys: pytest.CaptureFixture[str]) -> None:
    from solver.tools.cli import main

    assert main(["solve", "game24", "4 9 10 13", "--generator", "enumerate", "--evaluator", "oracle"]) == 0
    assert " = 24 [verified]" in capsys.readouterr().out  # Game of 24's plugin: answer_suffix


def test_an_official_log_is_told_by_the_importer_that_recognises_it(tmp_path: Path) -> None:
    import json

    from solver.tools.audit.logs import detect_log_task

    shapes = {"game24": [{"idx": 900, "steps": []}], "crosswords": [[{"step": 0, "actions": []}]]}
    for task, data in shapes.items():
        (tmp_path / f"{task}.json").write_text(json.dumps(data), encoding="utf-8")
        assert detect_log_task(str(tmp_path / f"{task}.json")) == task
    (tmp_path / "other.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="give --task"):
        detect_log_task(str(tmp_path / "other.json"))
