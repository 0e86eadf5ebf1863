"""Countdown puzzle sets: the fixed train / val / test sets shipped with the package (made once by
``verifiers.countdown.generate`` from the seeds in ``SPLITS``; ``python -m tasks.countdown.data
--check`` regenerates them and compares), and user files of numbers and targets (``--data FILE``:
JSON lines or CSV), both with ``--range``.

Every read is bounded (``solver.inputs.read_text``) and every bad row is a one-line ValueError
naming the file and the line."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solver.inputs import MAX_DATA_FILE, read_text
from tasks.countdown.state import puzzle_text
from tasks.datafiles import parse_span
from verifiers import countdown as cd

__all__ = ["DATA_DIR", "SPLITS", "Split", "load_file", "load_split", "normalise", "parse_range", "split_path"]

DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Part:
    """``count`` puzzles of ``generate(count, seed, size=size, solvable_only=solvable)``: the
    television pool, targets 100-999, solvability under each-number-once rules."""

    count: int
    seed: int
    size: int | tuple[int, int]
    solvable: bool | None


@dataclass(frozen=True)
class Split:
    name: str
    parts: tuple[Part, ...]
    about: str


# The sets, in the order a puzzle wins when two sets draw it: test first, then val, then train
# (a later set drops a puzzle an earlier one holds, so no puzzle is in two sets).
SPLITS: dict[str, Split] = {
    "test": Split("test", (Part(100, 5803, 6, True), Part(20, 5804, 6, False)),
                  "100 solvable 6-number puzzles (1-100), then 20 unsolvable ones (101-120)"),
    "val": Split("val", (Part(100, 5801, 6, True), Part(20, 5802, 6, False)),
                 "100 solvable 6-number puzzles (1-100), then 20 unsolvable ones (101-120)"),
    "train": Split("train", (Part(2000, 5800, (3, 6), None),),
                   "2,000 puzzles of 3 to 6 numbers, solvable or not as drawn, less any of val or test"),
}


def normalise(numbers: tuple[int, ...], target: int) -> str:
    """A puzzle's text with its numbers ascending: the form held-out sets are compared in."""
    return puzzle_text(sorted(numbers), target)


def parse_range(text: str) -> tuple[int, int]:
    """``1-100`` or ``7`` -> inclusive 1-based row bounds."""
    return parse_span(text, 1, "1-100 or 7", "range")


def split_path(name: str) -> Path:
    if name not in SPLITS:
        raise ValueError(f"unknown Countdown set {name!r}; choose from {', '.join(SPLITS)}")
    return DATA_DIR / f"{name}.jsonl"


def generate_split(name: str) -> list[tuple[tuple[int, ...], int]]:
    """The set ``name`` made from its seeds (what the shipped file holds)."""
    taken: set[str] = set()
    for earlier in SPLITS:
        if earlier == name:
            break
        taken |= {normalise(n, t) for n, t in generate_split(earlier)}
    out = []
    for part in SPLITS[name].parts:
        for p in cd.generate(part.count, part.seed, size=part.size, solvable_only=part.solvable):
            key = normalise(p.numbers, p.target)
            if key not in taken:
                taken.add(key)
                out.append((p.numbers, p.target))
    return out


def _row(obj: Any, where: str) -> tuple[tuple[int, ...], int]:
    """(numbers, target) of one JSON object: ``numbers`` (or TinyZero's ``nums``) and ``target``."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object with 'numbers' and 'target'")
    nums = obj.get("numbers", obj.get("nums"))
    target = obj.get("target")
    if isinstance(nums, str):
        numbers = cd.parse_numbers(nums)
    elif isinstance(nums, list) and nums and all(type(n) is int for n in nums):
        numbers = cd.parse_numbers(" ".join(str(n) for n in nums))
    else:
        raise ValueError(f"{where}: 'numbers' must be a list of whole numbers or a text such as \"25 50 75\"")
    if type(target) is not int and not isinstance(target, str):
        raise ValueError(f"{where}: 'target' must be a whole number")
    return numbers, cd.parse_target(target)


def _rows_jsonl(text: str, path: Path) -> list[tuple[tuple[int, ...], int]]:
    out = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise ValueError(f"{path} line {line_no}: not JSON") from None
        try:
            out.append(_row(obj, f"{path} line {line_no}"))
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith(str(path)) else f"{path} line {line_no}: {msg}") from None
    return out


def _rows_csv(text: str, path: Path) -> list[tuple[tuple[int, ...], int]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        fields = reader.fieldnames
        rows = list(reader)
    except csv.Error as exc:
        raise ValueError(f"{path} is not a readable CSV file: {exc}") from None
    if fields is None or "target" not in fields or not ({"numbers", "nums"} & set(fields)):
        raise ValueError(f"{path} has no 'numbers' and 'target' columns")
    out = []
    for line_no, row in enumerate(rows, 2):
        nums = row.get("numbers", row.get("nums"))
        target = row.get("target")
        if not isinstance(nums, str) or not isinstance(target, str):
            raise ValueError(f"{path} line {line_no}: 'numbers' and 'target' must both be present")
        try:
            out.append((cd.parse_numbers(nums), cd.parse_target(target)))
        except ValueError as exc:
            raise ValueError(f"{path} line {line_no}: {exc}") from None
    return out


def _select(rows: list[tuple[tuple[int, ...], int]], ranks: str | None, what: str,
            prefix: str) -> list[tuple[str, str]]:
    lo, hi = parse_range(ranks) if ranks else (1, len(rows))
    out = [(f"{prefix}{i}", puzzle_text(n, t)) for i, (n, t) in enumerate(rows, 1) if lo <= i <= hi]
    if not out:
        raise ValueError(f"no puzzles in rows {ranks} of {what} ({len(rows)} rows)")
    return out


def load_file(path: str | Path, ranks: str | None = None) -> list[tuple[str, str]]:
    """(id, puzzle text) of a user's file: JSON lines (``{"numbers": [25, 50, 75, 100, 3, 6],
    "target": 952}``; ``nums`` is read as ``numbers``) or, for a ``.csv`` name, CSV with the
    columns ``numbers`` (space-separated) and ``target``; rows ``ranks`` (1-based) only."""
    p = Path(path)
    text = read_text(p, "data file", MAX_DATA_FILE)
    rows = _rows_csv(text, p) if p.suffix.lower() == ".csv" else _rows_jsonl(text, p)
    if not rows:
        raise ValueError(f"{p} holds no puzzles")
    return _select(rows, ranks, str(p), "")


def load_split(name: str, ranks: str | None = None) -> list[tuple[str, str]]:
    """(``NAME:ROW``, puzzle text) of a shipped set, rows ``ranks`` only."""
    path = split_path(name)
    rows = _rows_jsonl(read_text(path, f"the shipped Countdown {name} set", MAX_DATA_FILE), path)
    return _select(rows, ranks, f"the {name} set", f"{name}:")


def _write(name: str) -> str:
    return "".join(json.dumps({"numbers": list(n), "target": t}) + "\n" for n, t in generate_split(name))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tasks.countdown.data",
                                 description="regenerate the shipped Countdown sets from their seeds")
    ap.add_argument("--write", action="store_true", help="write the files (default: compare only)")
    args = ap.parse_args(argv)
    status = 0
    for name in SPLITS:
        text, path = _write(name), split_path(name)
        if args.write:
            DATA_DIR.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({text.count(chr(10))} puzzles)")
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            print(f"{path} differs from its seeds", file=sys.stderr)
            status = 1
        else:
            print(f"{path}: the same as its seeds ({text.count(chr(10))} puzzles)")
    return status


if __name__ == "__main__":
    sys.exit(main())
