"""Logs of the official ToT code (princeton-nlp/tree-of-thought-llm): not our traces. Each task
that can import them registers an importer (entry points ``tot.log_importers``) that turns a log
into events of our format for the audit; this module finds the importer and detects the task."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from typing import Any, Callable

from solver.inputs import MAX_DATA_FILE, read_text

LOG_IMPORTERS = "tot.log_importers"  # entry-point group: task name -> importer of foreign logs


def log_importer(task: str) -> Callable[[str], list[dict[str, Any]]]:
    """The importer of foreign search logs registered by a task (entry points ``tot.log_importers``)."""
    for ep in entry_points(group=LOG_IMPORTERS):
        if ep.name == task:
            return ep.load()  # type: ignore[no-any-return]
    known = ", ".join(sorted(ep.name for ep in entry_points(group=LOG_IMPORTERS))) or "none"
    raise ValueError(f"no importer of official logs for task {task!r} (have: {known})")


def detect_log_task(path: str) -> str:
    """The task of an official ToT log, from its shape: a list of puzzle entries with ``steps``
    (Game of 24 BFS) or a list of games that are lists of steps with ``actions`` (crosswords DFS)."""
    text = read_text(path, "log file", MAX_DATA_FILE)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ValueError(f"{path} is not a JSON file") from None
    if isinstance(data, list) and data and all(isinstance(g, list) for g in data):
        return "crosswords"
    if isinstance(data, list) and data and all(isinstance(e, dict) and "steps" in e for e in data):
        return "game24"
    raise ValueError(f"{path}: not a log of the official ToT code I know (give --task)")
