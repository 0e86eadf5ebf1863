"""Game-of-24 puzzles: the paper's CSV (rank ranges) and a built-in generator of all solvable ones."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

from verifiers.arithmetic import can_reach


def default_csv() -> Path:
    """The paper's CSV: $TOT_DATA_DIR/24/24.csv, else ../shared/data/tot beside the checkout."""
    import os

    candidates = []
    if os.environ.get("TOT_DATA_DIR"):
        candidates.append(Path(os.environ["TOT_DATA_DIR"]) / "24" / "24.csv")
    candidates.append(Path(__file__).resolve().parents[3] / "shared" / "data" / "tot" / "24" / "24.csv")
    candidates.append(Path.cwd().parent / "shared" / "data" / "tot" / "24" / "24.csv")
    for c in candidates:
        if c.is_file():
            return c
    return candidates[-1]


def parse_range(text: str) -> tuple[int, int]:
    """``901-1000`` or ``905`` -> inclusive 1-based rank bounds."""
    parts = text.split("-")
    try:
        if len(parts) == 1:
            lo = hi = int(parts[0])
        elif len(parts) == 2:
            lo, hi = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise ValueError(f"bad range {text!r}: use e.g. 901-1000 or 905") from None
    if lo < 1 or hi < lo:
        raise ValueError(f"bad range {text!r}: ranks start at 1 and the end is not before the start")
    return lo, hi


def load_csv(path: str | Path, ranks: str | None = None) -> list[tuple[int, str]]:
    """(rank, puzzle) rows of the paper's 24.csv, optionally restricted to a rank range."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no such data file: {p}")
    lo, hi = parse_range(ranks) if ranks else (1, 10**9)
    out = []
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or "Puzzles" not in reader.fieldnames or "Rank" not in reader.fieldnames:
            raise ValueError(f"{p} has no 'Rank' and 'Puzzles' columns")
        for row in reader:
            rank = int(row["Rank"])
            if lo <= rank <= hi:
                out.append((rank, row["Puzzles"].strip()))
    if not out:
        raise ValueError(f"no puzzles with rank in {ranks} in {p}")
    return out


def all_multisets(lo: int = 1, hi: int = 13) -> list[tuple[int, int, int, int]]:
    """All 1,820 four-number multisets of 1..13 in ascending order."""
    return list(itertools.combinations_with_replacement(range(lo, hi + 1), 4))  # type: ignore[arg-type]


def solvable_puzzles(lo: int = 1, hi: int = 13) -> list[str]:
    """Every four-number puzzle from lo..hi that can reach 24 (1,362 for 1..13)."""
    return [" ".join(map(str, ms)) for ms in all_multisets(lo, hi) if can_reach(ms)]
