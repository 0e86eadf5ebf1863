"""The puzzles of ``tot export sudoku`` (the label export, solver/tools/export.py): generated
puzzles whose seeds lie apart from every seed a results table uses, and a held-out set that no
split ever meets.

The docs' and README's Sudoku tables use seeds 1-10 of sizes 3, 4 and 9 (docs/sudoku.md); seeds
1-100 of every size are held out. Train puzzles come from seeds 1001 on, validation puzzles from
seeds 2001 on. Small boards repeat across seeds (there are few 3x3 puzzles), so a seed's puzzle
is skipped when its board is a held-out puzzle, or one that a held-out puzzle extends (the walk
from it could reach that puzzle's board: a walk keeps the givens and fills blanks), and a
validation puzzle is skipped when it is a train puzzle. A split then holds fewer puzzles than
asked where the seeds run out of new boards.
"""

from __future__ import annotations

import argparse
from functools import lru_cache

from tasks.sudoku.generator import generate
from verifiers.sudoku import Board, format_board

__all__ = ["HELD_OUT", "SPLITS", "add_export_args", "export_options", "export_puzzles", "held_out_puzzles"]

SPLITS = ("train", "val")
FIRST_SEED = {"train": 1001, "val": 2001}
SEEDS_PER_SPLIT = 1000  # train: seeds 1001-2000, val: 2001-3000
HELD_OUT_SEEDS = range(1, 101)
HELD_OUT = ("generated puzzles of seeds 1-100 of every size (the docs' and README's Sudoku tables use seeds 1-10 "
            "of sizes 3, 4 and 9), at the generator's default blanks and at --blanks, and every puzzle whose "
            "walk could reach one of their boards")
MAX_STATES = 2000  # a 9x9 walk visits every gated state, dead ends included: cut it per puzzle


def add_export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", type=int, default=4, help="board size, 1-9 (default 4; 9 has dead ends to learn)")
    parser.add_argument("--blanks", type=int, default=None,
                        help="blank cells of each puzzle (default: the generator's, e.g. 8 for 4x4, 45 for 9x9)")
    parser.add_argument("--count", type=int, default=200, help="train puzzles, seeds from 1001 (default 200)")
    parser.add_argument("--val-count", type=int, default=50, help="validation puzzles, seeds from 2001 (default 50)")


@lru_cache(maxsize=8192)
def _givens(size: int, seed: int, blanks: int | None, boxes: bool) -> Board:
    return generate(size, seed, blanks, boxes).givens


def _options(args: argparse.Namespace) -> tuple[int, int | None, bool]:
    for what in ("count", "val_count"):
        if not 1 <= getattr(args, what) <= SEEDS_PER_SPLIT:
            raise ValueError(f"--{what.replace('_', '-')} must be 1..{SEEDS_PER_SPLIT}")
    _givens(args.size, FIRST_SEED["train"], args.blanks, not args.latin)  # bad size or blanks: one line here
    return args.size, args.blanks, not args.latin


def _held_boards(size: int, blanks: int | None, boxes: bool) -> list[Board]:
    out = {_givens(size, s, None, boxes) for s in HELD_OUT_SEEDS}
    if blanks is not None:
        out |= {_givens(size, s, blanks, boxes) for s in HELD_OUT_SEEDS}
    return sorted(out)


def _extends(big: Board, small: Board) -> bool:
    """Every digit of ``small`` stands in the same cell of ``big`` (``big`` may fill more)."""
    return all(s == 0 or s == b for brow, srow in zip(big, small, strict=True) for b, s in zip(brow, srow, strict=True))


def _split(split: str, size: int, blanks: int | None, boxes: bool, count: int,
           taken: set[str]) -> list[tuple[str, str]]:
    held = _held_boards(size, blanks, boxes)
    out: list[tuple[str, str]] = []
    seen = set(taken)
    tag = f"size{size}-" + (f"blanks{blanks}-" if blanks is not None else "") + ("latin-" if not boxes else "")
    for seed in range(FIRST_SEED[split], FIRST_SEED[split] + SEEDS_PER_SPLIT):
        if len(out) == count:
            break
        board = _givens(size, seed, blanks, boxes)
        text = format_board(board)
        if text in seen or any(_extends(h, board) for h in held):
            continue
        seen.add(text)
        out.append((f"{tag}seed{seed}", text))
    return out


def export_puzzles(split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
    """train: ``--count`` puzzles from seed 1001; val: ``--val-count`` from seed 2001, none a train
    puzzle; neither meets a held-out puzzle."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    size, blanks, boxes = _options(args)
    limit = getattr(args, "limit", None)
    if split == "train":  # only the first --limit are exported
        return _split("train", size, blanks, boxes, min(args.count, limit or args.count), set())
    train = {text for _, text in _split("train", size, blanks, boxes, args.count, set())}
    return _split("val", size, blanks, boxes, args.val_count, train)


def held_out_puzzles(args: argparse.Namespace) -> set[str]:
    size, blanks, boxes = _options(args)
    return {format_board(b) for b in _held_boards(size, blanks, boxes)}


def export_options(args: argparse.Namespace) -> dict[str, object]:
    """The options that make the splits: the board size, blanks, rules and both counts (val leaves
    out the first ``--count`` train puzzles, so it depends on that count too)."""
    size, blanks, boxes = _options(args)
    return {"size": size, "blanks": blanks, "latin": not boxes, "count": args.count, "val_count": args.val_count}
