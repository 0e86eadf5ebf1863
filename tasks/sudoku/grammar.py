"""The grammar of Sudoku steps a state allows: the next board as one JSON line (the answer format
of the prompts, ``{"rows": ["32*", ...]}``) with exactly one blank filled by a digit that breaks no
rule of the current board. Every such placement is derivable, and each derivation is a step the
gate accepts. (The gate also accepts several cells filled at once; the grammar asks for one, as
the prompts do.)"""

from __future__ import annotations

from typing import Any

from solver.grammar import alternation, grammar, literal
from tasks.sudoku.state import read_givens
from verifiers.sudoku import Board, box_shape, uses_boxes

__all__ = ["SudokuGrammar", "placements"]


def _row_text(row: tuple[int, ...]) -> str:
    return "".join(str(v) if v else "*" for v in row)


def candidates(board: Board, boxes: bool, r: int, c: int) -> list[int]:
    """The digits not yet in cell (r, c)'s row, column or box (boxes where the rules use them)."""
    n = len(board)
    seen = set(board[r]) | {board[i][c] for i in range(n)}
    if uses_boxes(n, boxes):
        h, w = box_shape(n)
        r0, c0 = r - r % h, c - c % w
        seen |= {board[i][j] for i in range(r0, r0 + h) for j in range(c0, c0 + w)}
    return [d for d in range(1, n + 1) if d not in seen]


def placements(board: Board, boxes: bool) -> dict[int, list[tuple[int, ...]]]:
    """Row index -> every version of that row with one blank filled by a digit not yet in the
    cell's row, column or box (rows with none are left out)."""
    out: dict[int, list[tuple[int, ...]]] = {}
    for r, row in enumerate(board):
        for c, v in enumerate(row):
            if not v:
                out.setdefault(r, []).extend(row[:c] + (d,) + row[c + 1:] for d in candidates(board, boxes, r, c))
    return {r: rows for r, rows in out.items() if rows}


class SudokuGrammar:
    """``ThoughtGrammar`` of Sudoku (a part the task composes); ``boxes`` as the task's rules."""

    def __init__(self, boxes: bool = True) -> None:
        self.boxes = boxes

    def thought_grammar(self, state: Any) -> str | None:
        """GBNF of one next board with one more cell filled; None when no blank can take a digit."""
        board: Board = state.board
        rows = placements(board, self.boxes)
        if not rows:
            return None
        same = [literal(f'"{_row_text(row)}"') for row in board]
        rules: dict[str, str] = {}
        boards = []
        for r, versions in rows.items():
            rules[f"row{r}"] = alternation(literal(f'"{_row_text(v)}"') for v in versions)
            cells = [f"row{r}" if k == r else same[k] for k in range(len(board))]
            boards.append("(" + f" {literal(', ')} ".join(cells) + ")")
        head = literal('{"rows": [')
        body = f'{literal(" ")}? {head} {alternation(boards)} {literal("]}")}'
        return grammar({"root": body, **rules})

    def answer_grammar(self, puzzle: str, cot: bool) -> str | None:
        """GBNF of a whole solved board (see the module's docstring); None for a puzzle that does
        not read or has a blank no digit can fill (no solution can be written)."""
        try:
            board = read_givens(puzzle, self.boxes)
        except ValueError:
            return None
        if len(board) > 9:  # one character a digit in the answer format
            return None
        rows = []
        for r, row in enumerate(board):
            cells = []
            for c, v in enumerate(row):
                options = [v] if v else candidates(board, self.boxes, r, c)
                if not options:
                    return None
                cells.append(literal(str(options[0])) if len(options) == 1 else
                             "[" + "".join(str(d) for d in options) + "]")
            rows.append(literal('"') + " " + " ".join(cells) + " " + literal('"'))
        body = f" {literal(', ')} ".join(rows)
        head = literal('{"rows": [')
        return grammar({"root": f'{literal(" ")}? {head} {body} {literal("]}")}'})
