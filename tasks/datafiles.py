"""Where the papers' data files live, and the ``A-B`` span syntax the CLIs share."""

from __future__ import annotations

import os
from pathlib import Path

from solver.inputs import ascii_int


def shared_data(relative: str | Path) -> Path:
    """``$TOT_DATA_DIR/<relative>``, else ``../shared/data/tot/<relative>`` beside the checkout
    (or beside the working directory). Returns the last candidate when none exists, so the
    caller's "no such data file" error names a sensible path."""
    rel = Path(relative)
    candidates = []
    if os.environ.get("TOT_DATA_DIR"):
        candidates.append(Path(os.environ["TOT_DATA_DIR"]) / rel)
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data" / "tot" / rel)
    candidates.append(Path.cwd().parent / "shared" / "data" / "tot" / rel)
    for c in candidates:
        if c.is_file():
            return c
    return candidates[-1]


def parse_span(text: str, first: int, example: str, unit: str) -> tuple[int, int]:
    """``905`` or ``901-1000`` -> inclusive bounds; ``first`` is the smallest allowed number.
    ValueError with a one-line reason otherwise."""
    parts = text.strip().split("-")
    try:
        if len(parts) == 1:
            lo = hi = ascii_int(parts[0])
        elif len(parts) == 2:
            lo, hi = ascii_int(parts[0]), ascii_int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise ValueError(f"bad {unit} {text!r}: use e.g. {example}") from None
    if lo < first or hi < lo:
        raise ValueError(f"bad {unit} {text!r}: they start at {first} and the end is not before the start")
    return lo, hi
