"""The optional parts of the Sudoku task, each a small object the task composes: legal digits of
the most constrained cell, the prompts and their parsers, the tuning of the model's parts, the
exact oracle, restore from a trace and the options that rebuild the task."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Sequence

from solver.generators import Propose, Sample
from solver.task import Thought
from tasks.sudoku import prompts
from tasks.sudoku.parse import extract_boards
from tasks.sudoku.state import SudokuState, prompt_rules, read_givens
from verifiers.sudoku import Board, box_shape, completable, format_board, parse_board, solutions, uses_boxes

__all__ = ["ANSWER_TOKENS", "BoardPrompts", "CellMoves", "Completable", "OneLineAnswers", "RestoreBoard",
           "RuleSet", "ShortPrompts", "first_board"]

ANSWER_TOKENS = 96  # one JSON line of a 9x9 board is about 60 tokens


class CellMoves:
    """LegalMoves: every digit that breaks no rule in one cell, the blank cell with the fewest such
    digits (the first in row order on ties). Every completion of the board puts one of these
    digits there, so branching on that cell alone loses no solution, and a blank cell with no
    possible digit gives no thoughts: a dead end is seen at once."""

    def __init__(self, boxes: bool) -> None:
        self.boxes = boxes

    def legal_thoughts(self, state: SudokuState) -> Sequence[Thought]:
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


def first_board(state: SudokuState, text: str) -> list[Thought]:
    """The boards in a model answer, as thoughts. A base model continues with further "Board:"
    examples of its own; only its answer is read. Without a JSON board, the answer's first line
    in the board syntax (``32*|*32|*13``: how the short training prompts' steps are written)."""
    answer = re.split(r"\n\s*Board\s*:", text, maxsplit=1)[0]
    found = [Thought(format_board(b)) for b in extract_boards(answer, state.board)]
    if found or not answer.strip():
        return found
    try:
        return [Thought(format_board(parse_board(answer.strip().splitlines()[0], len(state.board))))]
    except ValueError:
        return []


class BoardPrompts:
    """ProposePrompts, SamplePrompts (one next board either way), ValuePrompts and VotePrompt."""

    def __init__(self, boxes: bool) -> None:
        self.boxes = boxes

    def propose_prompt(self, state: SudokuState, chat: bool) -> str:
        body = prompts.STEP.format(rules=prompt_rules(len(state.board), self.boxes), examples=prompts.STEP_EXAMPLES,
                                   board=format_board(state.board))
        return prompts.CHAT_PREFIX + body if chat else body

    def sample_prompt(self, state: SudokuState, chat: bool) -> str:
        return self.propose_prompt(state, chat)

    def parse_proposals(self, state: SudokuState, text: str) -> list[Thought]:
        return first_board(state, text)

    def value_prompt(self, state: SudokuState, chat: bool) -> str:
        return prompts.VALUE.format(rules=prompt_rules(len(state.board), self.boxes), board=format_board(state.board))

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[SudokuState], chat: bool) -> str:
        choices = "\n".join(f"Choice {k}: {format_board(s.board)}" for k, s in enumerate(states, 1))
        n = len(states[0].board) if states else 3
        return prompts.VOTE.format(rules=prompt_rules(n, self.boxes), choices=choices)


class ShortPrompts:
    """TrainingPrompts: the zero-shot prompts of ``tot export sudoku`` and of the adapters trained
    on its data; labels ` sure`/` impossible`, steps as the next board in the board syntax."""

    def __init__(self, boxes: bool) -> None:
        self.boxes = boxes

    def _fields(self, state: SudokuState) -> dict[str, Any]:
        n = len(state.board)
        return {"n": n, "rules": "boxes" if uses_boxes(n, self.boxes) else "no boxes",
                "board": format_board(state.board)}

    def train_value_prompt(self, state: SudokuState) -> str:
        return prompts.TRAIN_VALUE.format(**self._fields(state))

    def train_step_prompt(self, state: SudokuState) -> str:
        return prompts.TRAIN_STEP.format(**self._fields(state))


class OneLineAnswers:
    """TunesParts: the answer is one line of JSON: stop at the line's end (a base model otherwise
    goes on with examples of its own) and allow enough tokens for a 9x9 board."""

    def tune(self, generator: Any, evaluator: Any) -> tuple[Any, Any]:
        if isinstance(generator, (Propose, Sample)):
            generator = dataclasses.replace(
                generator, params=dataclasses.replace(generator.params, max_tokens=ANSWER_TOKENS, stop=("\n",)))
        return generator, evaluator


class Completable:
    """HasOracle: can the board still be completed under the rules (exact solver)."""

    def __init__(self, boxes: bool) -> None:
        self.boxes = boxes

    def oracle(self, state: SudokuState) -> bool:
        return completable(state.board, self.boxes)

    def solve_exactly(self, puzzle: str) -> Board | None:
        """The exact solver's completion of a puzzle (None when it has none), for audits."""
        found = solutions(read_givens(puzzle, self.boxes), self.boxes, 1)
        return found[0] if found else None


class RestoreBoard:
    """Restorable: the state ``describe`` wrote (for ``tot audit``); how it was reached is not kept."""

    def __init__(self, boxes: bool) -> None:
        self.boxes = boxes

    def restore(self, puzzle: str, description: str) -> SudokuState:
        givens = read_givens(puzzle, self.boxes)
        board = parse_board(description.split(" (", 1)[0], len(givens))
        if any(g and g != v for grow, brow in zip(givens, board, strict=True) for g, v in zip(grow, brow, strict=True)):
            raise ValueError("the described board does not keep the puzzle's givens")
        return SudokuState(board, givens)


class RuleSet:
    """HasOptions: what rebuilds the task (recorded in traces): the rule set."""

    def __init__(self, boxes: bool) -> None:
        self.boxes = boxes

    def options(self) -> dict[str, Any]:
        return {"rules": "standard" if self.boxes else "latin"}


def _put(board: Board, r: int, c: int, d: int) -> Board:
    return tuple(tuple(d if (i, j) == (r, c) else v for j, v in enumerate(row)) for i, row in enumerate(board))
