"""Sudoku after Long (2023): boards proposed as JSON, gated by the exact checker."""

from tasks.sudoku.task import Sudoku, SudokuState

__all__ = ["Sudoku", "SudokuState"]
