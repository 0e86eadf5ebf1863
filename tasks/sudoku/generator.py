"""Seedable Sudoku puzzles with exactly one solution (checked by the exact solver)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from verifiers.sudoku import Board, count_solutions, format_board, solutions, uses_boxes

SIZES = (3, 4, 5, 6, 8, 9)
# Blanks per size when none is asked for: about half the board for Long's sizes, 45 for 9x9.
DEFAULT_BLANKS = {3: 4, 4: 8, 5: 12, 6: 18, 8: 32, 9: 45}
_ATTEMPTS = 20


@dataclass(frozen=True, slots=True)
class Puzzle:
    size: int
    seed: int
    boxes: bool
    givens: Board
    solution: Board

    @property
    def text(self) -> str:
        return format_board(self.givens)


def generate(size: int, seed: int, blanks: int | None = None, boxes: bool = True) -> Puzzle:
    """A puzzle with ``blanks`` empty cells and a unique solution under the rules (``boxes``: the
    standard rules, boxes for sizes 4, 6, 8, 9; False: Latin square). The same arguments always
    give the same puzzle."""
    if not 1 <= size <= 9:
        raise ValueError(f"size must be 1..9 (sizes {', '.join(map(str, SIZES))} are the usual ones); got {size}")
    use_boxes = uses_boxes(size, boxes)
    want = DEFAULT_BLANKS.get(size, size * size // 2) if blanks is None else blanks
    if not 0 <= want < size * size:
        raise ValueError(f"blanks must be 0..{size * size - 1} for a {size}x{size} board; got {want}")
    rng = random.Random(f"sudoku:{size}:{seed}:{want}:{use_boxes}")
    empty: Board = tuple(tuple(0 for _ in range(size)) for _ in range(size))
    for _ in range(_ATTEMPTS):
        full = solutions(empty, use_boxes, 1, rng)[0]
        cells = [[v for v in row] for row in full]
        order = [(r, c) for r in range(size) for c in range(size)]
        rng.shuffle(order)
        removed = 0
        for r, c in order:
            if removed == want:
                break
            keep = cells[r][c]
            cells[r][c] = 0
            if count_solutions(tuple(map(tuple, cells)), use_boxes, 2) == 1:
                removed += 1
            else:
                cells[r][c] = keep
        if removed == want:
            return Puzzle(size, seed, use_boxes, tuple(map(tuple, cells)), full)
    raise ValueError(f"could not make a {size}x{size} puzzle with {want} blanks and one solution; ask for fewer")
