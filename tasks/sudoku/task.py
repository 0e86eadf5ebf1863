"""Sudoku as a Task: a state is the board so far with the puzzle's givens; a thought is the next
board (the model writes it as JSON; the parser turns it into the board syntax).

The class holds the five methods search and verification need; its optional parts (legal digits,
prompts, the exact oracle, restore, options, tuning, Long's baselines) are the objects in
``parts``, from ``tasks/sudoku/parts.py`` and ``tasks/sudoku/baselines.py``."""

from __future__ import annotations

from solver.task import Thought
from tasks.sudoku.baselines import BASELINE_SHOTS, ShotBaselines
from tasks.sudoku.grammar import SudokuGrammar
from tasks.sudoku.parts import (
    BoardPrompts,
    CellMoves,
    Completable,
    OneLineAnswers,
    RestoreBoard,
    RuleSet,
    ShortPrompts,
)
from tasks.sudoku.state import SudokuState, read_givens
from verifiers.report import AnswerReport, Check
from verifiers.sudoku import blanks, check_step, format_board, parse_board, report_solution, rules_text
from verifiers.verdict import Invalid, Solved, Valid, Verdict

__all__ = ["BASELINE_SHOTS", "Sudoku", "SudokuState"]


class Sudoku:
    """The Sudoku task. ``boxes=True`` (default): the standard rules, with the boxes of sizes 4, 6,
    8 and 9; ``boxes=False``: Long (2023)'s Latin-square variant, rows and columns only."""

    name = "sudoku"
    max_depth = 81  # each step fills at least one cell

    def __init__(self, boxes: bool = True) -> None:
        self.boxes = boxes
        self.parts = (CellMoves(boxes), BoardPrompts(boxes), OneLineAnswers(), Completable(boxes),
                      RestoreBoard(boxes), RuleSet(boxes), ShotBaselines(boxes), SudokuGrammar(boxes),
                      ShortPrompts(boxes))

    def root(self, puzzle: str) -> SudokuState:
        board = read_givens(puzzle, self.boxes)
        return SudokuState(board, board)

    def check(self, state: SudokuState, thought: Thought) -> Verdict[SudokuState]:
        try:
            proposed = parse_board(thought.text, len(state.givens))
        except ValueError as exc:
            return Invalid(f"not a board: {exc}")
        verdict = check_step(state.givens, state.board, proposed, self.boxes)
        if isinstance(verdict, Invalid):
            return verdict
        nxt = SudokuState(verdict.state, state.givens, state.steps + 1)
        return Solved(nxt) if isinstance(verdict, Solved) else Valid(nxt)

    def answer(self, state: SudokuState) -> str:
        return format_board(state.board)

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every exact check of ``answer`` from the puzzle text alone, under this task's rules."""
        try:
            givens = read_givens(puzzle, self.boxes)
        except ValueError as exc:
            return AnswerReport("Sudoku (puzzle unreadable)", (Check("the puzzle is a valid board", False, str(exc)),))
        try:
            board = parse_board(answer, len(givens))
        except ValueError as exc:
            n = len(givens)
            return AnswerReport(rules_text(n, self.boxes),
                                (Check(f"a {n}x{n} board of digits 1-{n}", False, str(exc)),))
        return report_solution(givens, board, self.boxes)

    def describe(self, state: SudokuState) -> str:
        return f"{format_board(state.board)} ({blanks(state.board)} blank)"
