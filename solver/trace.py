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
        if not isinstance(ev, dict) or not isinstance(ev.get("event"), str):
            raise ValueError(f"{path} line {k + 1} is not a trace event (a JSON object with an 'event' name)")
        out.append(ev)
    return out
