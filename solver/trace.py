"""Search traces: JSON lines, one event per line, flushed at once so a killed run keeps them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any

from solver.inputs import MAX_TRACE_FILE, read_text


class Trace:
    """Collects events in memory and, when given a path, appends them to a JSON-lines file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self._fh: IO[str] | None = None
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            self._fh = p.open("a", encoding="utf-8")
        self._t0 = time.monotonic()

    def emit(self, event: str, **fields: Any) -> None:
        record = {"event": event, "t": round(time.monotonic() - self._t0, 4), **fields}
        self.events.append(record)
        if self._fh is not None:
            self._fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            self._fh.flush()

    def of(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == event]

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


_INT = "a whole number"
_TEXT = "text"
_NUMBER = "a number"
_BOOL = "true or false"
# The types of the fields that search, tree, audit and verify read. A field of another type makes
# the trace malformed (a one-line error), instead of an internal error deep inside a reader.
FIELD_TYPES: dict[str, str] = {
    "node": _INT, "parent": _INT, "to": _INT, "depth": _INT, "round": _INT, "breadth": _INT, "seed": _INT,
    "thought": _TEXT, "state": _TEXT, "reason": _TEXT, "verdict": _TEXT, "why": _TEXT, "answer": _TEXT,
    "task": _TEXT, "puzzle": _TEXT, "method": _TEXT, "model": _TEXT, "generator": _TEXT, "evaluator": _TEXT,
    "stopped_by": _TEXT, "error": _TEXT, "purpose": _TEXT,
    "prior": _NUMBER, "score": _NUMBER, "t": _NUMBER,
    "verified": _BOOL, "accepted": _BOOL, "valid": _BOOL, "solved": _BOOL, "tie": _BOOL, "gate": _BOOL,
    "solvable": _BOOL,
}


def _type_ok(value: Any, kind: str) -> bool:
    if value is None:
        return True
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 62
    if kind == _TEXT:
        return isinstance(value, str)
    if kind == _NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, bool)


def check_event(ev: Any) -> str | None:
    """Why ``ev`` is not a well-formed trace event (None when it is)."""
    if not isinstance(ev, dict) or not isinstance(ev.get("event"), str):
        return "is not a trace event (a JSON object with an 'event' name)"
    for key, kind in FIELD_TYPES.items():
        if key in ev and not _type_ok(ev[key], kind):
            return f"has {key!r} that is not {kind}"
    return None


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """Read a trace file: every line a JSON object with an ``event`` name. A half-written last
    line (a killed run) is skipped; any other malformed line is a ValueError naming it (one line),
    and so is a file that is not a regular file or larger than ``MAX_TRACE_FILE``."""
    text = read_text(path, "trace", MAX_TRACE_FILE)
    lines = text.split("\n")
    out = []
    last = max((k for k, ln in enumerate(lines) if ln.strip()), default=-1)
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            if k == last and not text.endswith("\n"):
                continue  # the line a killed run was writing
            raise ValueError(f"{path} line {k + 1} is not JSON: not a trace") from None
        problem = check_event(ev)
        if problem is not None:
            raise ValueError(f"{path} line {k + 1} {problem}: not a trace")
        out.append(ev)
    return out
