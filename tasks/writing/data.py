"""The paper's Creative Writing inputs: 100 lines of four sentences (0-based line indices)."""

from __future__ import annotations

from pathlib import Path

from tasks.datafiles import parse_span, shared_data
from verifiers.writing import split_sentences

DATA_NAME = Path("text") / "data_100_random_text.txt"


def default_data() -> Path:
    """$TOT_DATA_DIR/text/data_100_random_text.txt if present, else the copy shipped in tasks/data/tot."""
    return shared_data(DATA_NAME)


def parse_indices(text: str) -> tuple[int, int]:
    """``5`` or ``0-9`` -> inclusive 0-based line bounds."""
    return parse_span(text, 0, "5 or 0-9 (0-based line numbers)", "index")


def load_lines(path: str | Path, indices: str | None = None) -> list[tuple[int, str]]:
    """(0-based index, line) pairs, each checked to split into four sentences."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no such data file: {p}")
    lines = p.read_text(encoding="utf-8").splitlines()
    lo, hi = parse_indices(indices) if indices else (0, len(lines) - 1)
    if hi >= len(lines):
        raise ValueError(f"{p} has {len(lines)} lines (0-{len(lines) - 1}); index {hi} is out of range")
    out = []
    for i in range(lo, hi + 1):
        try:
            split_sentences(lines[i])
        except ValueError as exc:
            raise ValueError(f"{p} line {i}: {exc}") from None
        out.append((i, lines[i]))
    return out
