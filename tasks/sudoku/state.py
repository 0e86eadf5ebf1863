"""Sudoku states, the puzzle's givens and the rules text of the prompts, shared by the task and
its parts."""

from __future__ import annotations

from dataclasses import dataclass, field

from tasks.sudoku import prompts
from verifiers.sudoku import Board, box_shape, read_givens, uses_boxes

__all__ = ["SudokuState", "prompt_rules", "read_givens"]


@dataclass(frozen=True, slots=True)
class SudokuState:
    """The board so far and the puzzle's givens. ``steps`` is history, not identity."""

    board: Board
    givens: Board
    steps: int = field(default=0, compare=False)


def prompt_rules(n: int, boxes: bool) -> str:
    """The rules paragraph of the prompts for an n x n board."""
    text = prompts.BOXES.format(h=box_shape(n)[0], w=box_shape(n)[1]) if uses_boxes(n, boxes) else ""
    return prompts.RULES.format(n=n, boxes=text)
