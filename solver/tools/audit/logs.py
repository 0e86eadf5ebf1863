"""Logs of the official ToT code (princeton-nlp/tree-of-thought-llm): not our traces. Each task
that can import them registers an importer (entry points ``tot.log_importers``) that turns a log
into events of our format for the audit; this module finds the importer and detects the task: the
one whose importer's module says it recognises the log (its ``recognises(data) -> bool``, beside
the importer). No task is named here."""

from __future__ import annotations

import importlib
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


def log_tasks() -> list[str]:
    """The tasks with an importer of official logs, by name."""
    return sorted(ep.name for ep in entry_points(group=LOG_IMPORTERS))


def detect_log_task(path: str) -> str:
    """The task of an official ToT log, from its shape: the one task whose importer's module
    ``recognises`` the parsed JSON; ValueError (one line) where none or several do."""
    text = read_text(path, "log file", MAX_DATA_FILE)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ValueError(f"{path} is not a JSON file") from None
    found = []
    for ep in sorted(entry_points(group=LOG_IMPORTERS), key=lambda e: e.name):
        recognises = getattr(importlib.import_module(ep.module), "recognises", None)
        if recognises is not None and recognises(data):
            found.append(ep.name)
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f"{path}: the shape of a log of {' and of '.join(found)} (give --task)")
    raise ValueError(f"{path}: not a log of the official ToT code I know (give --task)")
