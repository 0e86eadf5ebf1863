"""The paper's Creative Writing inputs: 100 lines of four sentences (0-based line indices)."""

from __future__ import annotations

from pathlib import Path

from solver.inputs import MAX_DATA_FILE, read_text
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
    """(0-based index, puzzle text) pairs: the line itself when punctuation splits it into four
    sentences, else its four sentences one per line (the fused-fragment rule of
    ``verifiers.writing``); a line with no such split is an error."""
    p = Path(path)
    lines = read_text(p, "data file", MAX_DATA_FILE).splitlines()
    lo, hi = parse_indices(indices) if indices else (0, len(lines) - 1)
    if hi >= len(lines):
        raise ValueError(f"{p} has {len(lines)} lines (0-{len(lines) - 1}); index {hi} is out of range")
    out = []
    for i in range(lo, hi + 1):
        try:
            split_sentences(lines[i])
            out.append((i, lines[i]))
            continue
        except ValueError:
            pass
        try:
            # The paper's five lines with a fused fragment: cut by the documented rule, then handed
            # on one sentence per line, so the four required sentences are explicit.
            out.append((i, "\n".join(split_sentences(lines[i], fragments=True))))
        except ValueError as exc:
            raise ValueError(f"{p} line {i}: {exc}") from None
    return out
