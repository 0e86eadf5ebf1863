"""The one reader of search traces (the format: ``solver.trace_format``, docs/trace-format.md).

Every command that reads a trace (``tot show``, ``tot audit``, ``tot verify --trace``) and the
audit API read it here. Malformed input is a ``ValueError`` of one line naming the file and the
line: not JSON, not an event, a field of the wrong type, a required field missing, a version newer
than this reader; and so is a file that is missing, not a regular file, or larger than
``MAX_TRACE_FILE``. A killed run's half-written last line is skipped (the file's last line, with
no newline after it, or the line just before a header that says ``previous_line_cut``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from solver.inputs import MAX_TRACE_FILE, read_text
from solver.trace_format import FORMAT, HEADER_EVENT, VERSION, check_event

__all__ = ["read_trace", "parse_trace", "check_events", "check_event"]

def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The events of a trace file, in order, without the writers' header lines."""
    if not os.path.lexists(path):
        raise ValueError(f"trace file not found: {path}")
    return parse_trace(read_text(path, "trace file", MAX_TRACE_FILE), str(path))


def parse_trace(text: str, source: str = "trace") -> list[dict[str, Any]]:
    """The events of a trace's text (``source`` names it in errors)."""
    lines = text.split("\n")
    last = max((k for k, ln in enumerate(lines) if ln.strip()), default=-1)
    out: list[dict[str, Any]] = []
    pending_cut: int | None = None  # a line that is not JSON, forgiven only if a header says so
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            if k == last and not text.endswith("\n"):
                continue  # the line a killed run was writing
            if pending_cut is not None:
                break
            pending_cut = k
            continue
        if pending_cut is not None:
            if not (isinstance(ev, dict) and ev.get("event") == HEADER_EVENT and ev.get("previous_line_cut") is True):
                break
            pending_cut = None
        where = f"{source} line {k + 1}"
        problem = check_event(ev)
        if problem is not None:
            raise ValueError(f"{where} {problem}: not a trace")
        if ev["event"] == HEADER_EVENT:
            _header_version(ev, where)
            continue
        out.append(ev)
    if pending_cut is not None:
        raise ValueError(f"{source} line {pending_cut + 1} is not JSON: not a trace")
    return out


def _header_version(ev: dict[str, Any], where: str) -> int:
    if ev.get("format") != FORMAT:
        raise ValueError(f"{where} is a header of format {str(ev.get('format'))[:40]!r}, not {FORMAT!r}")
    version = int(ev["version"])
    if version > VERSION:
        raise ValueError(f"{where}: trace format version {version} is newer than this reader "
                         f"(it reads 1 to {VERSION}); upgrade verified-tot")
    if version < 1:
        raise ValueError(f"{where}: trace format version {version} does not exist (versions start at 1)")
    return version


def check_events(events: Iterable[Any], source: str = "events") -> list[dict[str, Any]]:
    """Events given in memory (e.g. ``Trace.events``), checked as the reader checks a file's lines;
    header events are dropped. ValueError naming the first bad one (1-based)."""
    out: list[dict[str, Any]] = []
    for k, ev in enumerate(events, 1):
        problem = check_event(ev)
        if problem is not None:
            raise ValueError(f"{source} event {k} {problem}: not a trace")
        if ev["event"] == HEADER_EVENT:
            _header_version(ev, f"{source} event {k}")
            continue
        out.append(ev)
    return out
