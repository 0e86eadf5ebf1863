"""The one writer of search traces: JSON lines, one event per line, flushed at once so a killed
run keeps them. The format (events, fields, version) is ``solver.trace_format`` and
docs/trace-format.md; ``solver.trace_reader`` reads it back."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import IO, Any

from solver.trace_format import FORMAT, HEADER_EVENT, VERSION, EventName

__all__ = ["Trace", "write_events"]


class Trace:
    """Collects events in memory and, when given a path, appends them to a JSON-lines file.

    Before its first event the file gets this writer's header line (format and version), so a
    file with runs appended by several writers says the version of each part. ``events`` holds
    the run's events only, never the header."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self._fh: IO[str] | None = None
        self._header: dict[str, Any] | None = None
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            cut = _ends_mid_line(p)
            self._fh = p.open("a", encoding="utf-8")
            self._header = {"event": HEADER_EVENT, "format": FORMAT, "version": VERSION}
            if cut:  # a killed run left half a line: end it, and say so, so the reader skips it
                self._fh.write("\n")
                self._header["previous_line_cut"] = True
        self._t0 = time.monotonic()

    def emit(self, event: EventName, **fields: Any) -> None:
        """Write one event (``event`` one of the trace format's names: mypy refuses another)."""
        record = {"event": event, "t": round(time.monotonic() - self._t0, 4), **fields}
        self.events.append(record)
        self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        if self._fh is not None:
            text = json.dumps(record, ensure_ascii=False, default=str) + "\n"
            if self._header is not None:
                text = json.dumps(self._header) + "\n" + text
                self._header = None
            self._fh.write(text)
            self._fh.flush()

    def of(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == event]

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _ends_mid_line(path: Path) -> bool:
    """Whether a regular file at ``path`` is non-empty and does not end with a newline."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return False
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def write_events(path: str | Path, events: list[dict[str, Any]]) -> None:
    """Append one run's ``events`` (recorded elsewhere, e.g. by a worker) to the trace file at
    ``path``, after this writer's header line, as ``Trace`` would have written them."""
    trace = Trace(path)
    try:
        for record in events:
            trace._write(record)
    finally:
        trace.close()
