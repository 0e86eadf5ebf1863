"""Where the papers' data files live, and the ``A-B`` span syntax the CLIs share."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGED = Path(__file__).resolve().parent / "data" / "tot"


def shared_data(relative: str | Path) -> Path:
    """``$TOT_DATA_DIR/<relative>`` when that file exists, else the papers' data shipped in this
    package (``tasks/data/tot/<relative>``: MIT, from princeton-nlp/tree-of-thought-llm; see the
    README there). Returns the packaged path when neither exists, so the caller's "no such data
    file" error names a sensible path."""
    rel = Path(relative)
    if os.environ.get("TOT_DATA_DIR"):
        override = Path(os.environ["TOT_DATA_DIR"]) / rel
        if override.is_file():
            return override
    return PACKAGED / rel


def parse_span(text: str, first: int, example: str, unit: str) -> tuple[int, int]:
    """``905`` or ``901-1000`` -> inclusive bounds; ``first`` is the smallest allowed number.
    ValueError with a one-line reason otherwise."""
    parts = text.strip().split("-")
    try:
        if len(parts) == 1:
            lo = hi = int(parts[0])
        elif len(parts) == 2:
            lo, hi = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise ValueError(f"bad {unit} {text!r}: use e.g. {example}") from None
    if lo < first or hi < lo:
        raise ValueError(f"bad {unit} {text!r}: they start at {first} and the end is not before the start")
    return lo, hi
