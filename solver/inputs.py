"""Bounded reads of the files the CLI is given: puzzles, passages, data, traces, word lists.

Every such file must be a regular file no larger than a stated cap, checked before it is opened
for reading, so a FIFO, a device such as /dev/zero or /dev/stdin, or a huge file is refused with a
one-line ValueError instead of blocking or filling memory. Also the one way a file's sha256 is
computed (``file_sha256``: export manifests, training data, adapters, the data a task reads).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

__all__ = ["MAX_CACHE_FILE", "MAX_DATA_FILE", "MAX_PUZZLE_FILE", "MAX_TRACE_FILE", "MB", "ascii_int",
           "file_sha256", "read_bytes", "read_text", "regular_file"]

MB = 1 << 20
# Caps by kind of file (bytes). Generous for real data; small enough to read into memory.
MAX_PUZZLE_FILE = 1 * MB  # one puzzle, a passage, --puzzle JSON
MAX_DATA_FILE = 64 * MB  # the papers' data sets, word lists, official logs, bench results
MAX_TRACE_FILE = 512 * MB  # search traces (JSON lines)
MAX_CACHE_FILE = 4096 * MB  # record/replay stores (sqlite; read by page, not into memory)


def regular_file(path: str | Path, what: str, max_bytes: int) -> Path:
    """``path`` when it is an existing regular file of at most ``max_bytes``; ValueError otherwise."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise ValueError(f"no such {what}: {p}") from None
    except OSError as exc:
        raise ValueError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{what} {p} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what} {p} is not a regular file (a pipe, device or socket is not read)")
    if st.st_size > max_bytes:
        raise ValueError(f"{what} {p} is {st.st_size} bytes; at most {max_bytes} are read")
    return p


def file_sha256(path: str | Path) -> str:
    """The sha256 of the file at ``path`` (hex), read a MiB at a time; OSError where it cannot be read."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MB), b""):
            h.update(block)
    return h.hexdigest()


def read_bytes(path: str | Path, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (re-checked while reading, in case
    the file grew after the check)."""
    p = regular_file(path, what, max_bytes)
    try:
        with p.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise ValueError(f"{what} {p} is larger than {max_bytes} bytes")
    return data


def read_text(path: str | Path, what: str, max_bytes: int) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``; ValueError with one line otherwise."""
    data = read_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what} {path} is not UTF-8 text") from None


def ascii_int(text: str) -> int:
    """A whole number written with the ASCII digits 0-9 only (at most 9 of them); ValueError
    otherwise. ``int`` alone would also take other scripts' digits, ``_`` and spaces."""
    t = text.strip()
    if not t or len(t) > 9 or not all("0" <= ch <= "9" for ch in t):
        raise ValueError(f"not a whole number: {text[:20]!r}")
    return int(t)
