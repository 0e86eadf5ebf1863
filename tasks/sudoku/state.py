"""Sudoku states, the puzzle's givens and the rules text of the prompts, shared by the task and
its parts."""

from __future__ import annotations

from dataclasses import dataclass, field

from tasks.sudoku import prompts
from verifiers.sudoku import Board, box_shape, parse_board, rule_break, uses_boxes


@dataclass(frozen=True, slots=True)
class SudokuState:
    """The board so far and the puzzle's givens. ``steps`` is history, not identity."""

    board: Board
    givens: Board
    steps: int = field(default=0, compare=False)


def read_givens(puzzle: str, boxes: bool) -> Board:
    """The puzzle's board; ValueError with a one-line reason when it is unreadable or breaks a rule."""
    board = parse_board(puzzle)
    problem = rule_break(board, boxes)
    if problem is not None:
        raise ValueError(f"the puzzle itself breaks a rule: {problem}")
    return board


def prompt_rules(n: int, boxes: bool) -> str:
    """The rules paragraph of the prompts for an n x n board."""
    text = prompts.BOXES.format(h=box_shape(n)[0], w=box_shape(n)[1]) if uses_boxes(n, boxes) else ""
    return prompts.RULES.format(n=n, boxes=text)
