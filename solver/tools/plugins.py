"""How the CLI finds tasks without importing them: entry points in the group ``tot.tasks``.

A task package registers an object with this shape in its pyproject, e.g.
``[project.entry-points."tot.tasks"] game24 = "tasks.game24.cli:PLUGIN"``.
"""

from __future__ import annotations

import argparse
from importlib.metadata import entry_points
from typing import Any, Protocol


class TaskPlugin(Protocol):
    name: str
    help: str

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        """Task-specific options of ``tot solve TASK`` (the puzzle argument included)."""

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        """(id, puzzle text) pairs to solve; ValueError with a one-line reason on bad input."""

    def make_task(self, args: argparse.Namespace) -> Any:
        """The Task object for these options."""

    def add_verify_args(self, parser: argparse.ArgumentParser) -> None:
        """Arguments of ``tot verify TASK``."""

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        """(verified, the answer report's lines); ValueError for malformed input (exit status 2)."""

    # Optional: ``adapters``, the LoRA adapters the task ships (paths of GGUF files, each with its
    # JSON manifest beside it, e.g. ``tasks/game24/adapters/``): ``--adapter auto`` takes the first
    # whose manifest makes it the default (solver.lm.adapters), and llama.cpp's server launcher
    # loads it for ``--adapter TASK``.
    # Optional: ``answer_suffix``, printed after each answer by ``tot solve`` (e.g. " = 24").
    # Optional: ``task_from_options(options: dict) -> Task`` rebuilds the task a trace's run header
    # describes (the ``options`` that ``Task.options()`` recorded), for ``tot verify --trace``.
    # Optional, for a task's own methods and bench (planning): ``methods`` with
    # ``run_method(args, settings, make_client)``, and ``add_bench_args`` with
    # ``run_bench(args, settings, claim_out, searches)``, with ``bench_methods`` (its own method
    # names; any other ``--methods`` label is parsed as a search and handed over in ``searches``,
    # label -> Settings). The command line hands over the run's ``Settings``
    # (solver.run) and what else it owns, so that a task never imports ``solver.tools``.


def load_plugins() -> dict[str, TaskPlugin]:
    found: dict[str, TaskPlugin] = {}
    for ep in sorted(entry_points(group="tot.tasks"), key=lambda e: e.name):
        found[ep.name] = ep.load()
    return found
