"""Sudoku as a Task: a state is the board so far with the puzzle's givens; a thought is the next
board (the model writes it as JSON; the parser turns it into the board syntax)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from solver.generators import Propose, Sample
from solver.task import Thought
from tasks.sudoku import prompts
from tasks.sudoku.grammar import SudokuGrammar
from tasks.sudoku.parse import extract_boards
from verifiers.report import AnswerReport, Check, as_invalid
from verifiers.sudoku import (
    Board,
    blanks,
    box_shape,
    check_step,
    completable,
    format_board,
    parse_board,
    report_solution,
    rule_break,
    rules_text,
    solutions,
    uses_boxes,
)
from verifiers.verdict import Invalid, Solved, Valid, Verdict

BASELINE_SHOTS = {"zero-shot": 0, "one-shot": 1, "few-shot": 3}
ANSWER_TOKENS = 96  # one JSON line of a 9x9 board is about 60 tokens


@dataclass(frozen=True, slots=True)
class SudokuState:
    """The board so far and the puzzle's givens. ``steps`` is history, not identity."""

    board: Board
    givens: Board
    steps: int = field(default=0, compare=False)


class Sudoku:
    """The Sudoku task. ``boxes=True`` (default): the standard rules, with the boxes of sizes 4, 6,
    8 and 9; ``boxes=False``: Long (2023)'s Latin-square variant, rows and columns only."""

    name = "sudoku"
    max_depth = 81  # each step fills at least one cell

    def __init__(self, boxes: bool = True) -> None:
        self.boxes = boxes
        self.parts = (*getattr(self, "parts", ()), SudokuGrammar(boxes))

    def options(self) -> dict[str, Any]:
        """What rebuilds this task (recorded in traces): the rule set."""
        return {"rules": "standard" if self.boxes else "latin"}

    def rules(self, puzzle: str) -> str:
        return rules_text(len(self.givens(puzzle)), self.boxes)

    def givens(self, puzzle: str) -> Board:
        board = parse_board(puzzle)
        problem = rule_break(board, self.boxes)
        if problem is not None:
            raise ValueError(f"the puzzle itself breaks a rule: {problem}")
        return board

    def root(self, puzzle: str) -> SudokuState:
        board = self.givens(puzzle)
        return SudokuState(board, board)

    def depth(self, state: SudokuState) -> int:
        return state.steps

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

    def legal_thoughts(self, state: SudokuState) -> Sequence[Thought]:
        """Every digit that breaks no rule in one cell: the blank cell with the fewest such digits
        (the first in row order on ties). Every completion of the board puts one of these digits
        there, so branching on that cell alone loses no solution, and a blank cell with no
        possible digit gives no thoughts: a dead end is seen at once."""
        n = len(state.board)
        best: tuple[int, int, int, list[int]] | None = None
        for r in range(n):
            for c in range(n):
                if state.board[r][c] == 0:
                    ok = [d for d in range(1, n + 1) if d not in self._seen(state.board, r, c)]
                    if best is None or len(ok) < best[0]:
                        best = (len(ok), r, c, ok)
        if best is None:
            return []
        _k, r, c, ok = best
        return [Thought(format_board(_put(state.board, r, c, d))) for d in ok]

    def _seen(self, board: Board, r: int, c: int) -> set[int]:
        """Digits already in the row, column (and box) of cell (r, c)."""
        seen = set(board[r]) | {row[c] for row in board}
        if uses_boxes(len(board), self.boxes):
            bh, bw = box_shape(len(board))
            r0, c0 = r - r % bh, c - c % bw
            seen |= {board[i][j] for i in range(r0, r0 + bh) for j in range(c0, c0 + bw)}
        return seen

    def _rules(self, n: int) -> str:
        boxes = prompts.BOXES.format(h=box_shape(n)[0], w=box_shape(n)[1]) if uses_boxes(n, self.boxes) else ""
        return prompts.RULES.format(n=n, boxes=boxes)

    def propose_prompt(self, state: SudokuState, chat: bool) -> str:
        body = prompts.STEP.format(rules=self._rules(len(state.board)), examples=prompts.STEP_EXAMPLES,
                                   board=format_board(state.board))
        return prompts.CHAT_PREFIX + body if chat else body

    def sample_prompt(self, state: SudokuState, chat: bool) -> str:
        return self.propose_prompt(state, chat)

    def solution_prompt(self, puzzle: str, style: str, chat: bool) -> str:
        """A baseline prompt asking for the whole solution: zero-, one- or few-shot."""
        if style not in BASELINE_SHOTS:
            raise ValueError(f"unknown baseline {style!r}; choose one of {', '.join(BASELINE_SHOTS)}")
        board = self.givens(puzzle)
        shots = prompts.SOLUTION_EXAMPLES[:BASELINE_SHOTS[style]]
        examples = "".join(f"Board: {b}\nSolution: {s}\n\n" for b, s in shots)
        body = prompts.SOLUTION.format(rules=self._rules(len(board)), examples=examples,
                                       board=format_board(board))
        return prompts.CHAT_PREFIX + body if chat else body

    # -- baselines: Long's zero-/one-/few-shot (tasks/sudoku/baselines.py, run by the core's runner)
    baseline_stop = ("\n",)  # the answer is one line of JSON

    @property
    def own_baselines(self) -> dict[str, Any]:
        from tasks.sudoku.baselines import BASELINES, shot_baseline

        return {style: shot_baseline(style) for style in BASELINES}

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The first board in a whole-solution answer (unchecked); None when there is none."""
        thoughts = self.parse_proposals(self.root(puzzle), text)[:1]
        return thoughts[0].text if thoughts else None

    def tune(self, generator: Any, evaluator: Any) -> tuple[Any, Any]:
        """The answer is one line of JSON: stop at the line's end (a base model otherwise goes on
        with examples of its own) and allow enough tokens for a 9x9 board."""
        if isinstance(generator, (Propose, Sample)):
            generator = dataclasses.replace(
                generator, params=dataclasses.replace(generator.params, max_tokens=ANSWER_TOKENS, stop=("\n",)))
        return generator, evaluator

    def parse_proposals(self, state: SudokuState, text: str) -> list[Thought]:
        # A base model continues with further "Board:" examples of its own; read only its answer.
        answer = re.split(r"\n\s*Board\s*:", text, maxsplit=1)[0]
        return [Thought(format_board(b)) for b in extract_boards(answer, state.board)]

    def value_prompt(self, state: SudokuState, chat: bool) -> str:
        return prompts.VALUE.format(rules=self._rules(len(state.board)), board=format_board(state.board))

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[SudokuState], chat: bool) -> str:
        choices = "\n".join(f"Choice {k}: {format_board(s.board)}" for k, s in enumerate(states, 1))
        n = len(states[0].board) if states else 3
        return prompts.VOTE.format(rules=self._rules(n), choices=choices)

    def oracle(self, state: SudokuState) -> bool:
        return completable(state.board, self.boxes)

    def solve_exactly(self, puzzle: str) -> Board | None:
        """The exact solver's completion of a puzzle (None when it has none), for audits."""
        found = solutions(self.givens(puzzle), self.boxes, 1)
        return found[0] if found else None

    def answer(self, state: SudokuState) -> str:
        return format_board(state.board)

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every exact check of ``answer`` from the puzzle text alone, under this task's rules."""
        try:
            givens = self.givens(puzzle)
        except ValueError as exc:
            return AnswerReport("Sudoku (puzzle unreadable)", (Check("the puzzle is a valid board", False, str(exc)),))
        try:
            board = parse_board(answer, len(givens))
        except ValueError as exc:
            n = len(givens)
            return AnswerReport(rules_text(n, self.boxes),
                                (Check(f"a {n}x{n} board of digits 1-{n}", False, str(exc)),))
        return report_solution(givens, board, self.boxes)

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        report = self.report_answer(puzzle, answer)
        return as_invalid(report)

    def restore(self, puzzle: str, description: str) -> SudokuState:
        """The state ``describe`` wrote (for ``tot audit``); how it was reached is not kept."""
        givens = self.givens(puzzle)
        board = parse_board(description.split(" (", 1)[0], len(givens))
        if any(g and g != v for grow, brow in zip(givens, board, strict=True) for g, v in zip(grow, brow, strict=True)):
            raise ValueError("the described board does not keep the puzzle's givens")
        return SudokuState(board, givens)

    def describe(self, state: SudokuState) -> str:
        return f"{format_board(state.board)} ({blanks(state.board)} blank)"


def _put(board: Board, r: int, c: int, d: int) -> Board:
    return tuple(tuple(d if (i, j) == (r, c) else v for j, v in enumerate(row)) for i, row in enumerate(board))
