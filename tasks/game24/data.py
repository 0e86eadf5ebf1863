"""Game-of-24 puzzles: the paper's CSV (rank ranges) and a built-in generator of all solvable ones."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

from tasks.datafiles import parse_span, shared_data
from verifiers.arithmetic import can_reach


def default_csv() -> Path:
    """The paper's CSV: $TOT_DATA_DIR/24/24.csv if present, else the copy shipped in tasks/data/tot."""
    return shared_data(Path("24") / "24.csv")


def parse_range(text: str) -> tuple[int, int]:
    """``901-1000`` or ``905`` -> inclusive 1-based rank bounds."""
    return parse_span(text, 1, "901-1000 or 905", "range")


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
