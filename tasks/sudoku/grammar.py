"""The grammar of Sudoku steps a state allows: the next board as one JSON line (the answer format
of the prompts, ``{"rows": ["32*", ...]}``) with exactly one blank filled by a digit that breaks no
rule of the current board. Every such placement is derivable, and each derivation is a step the
gate accepts. (The gate also accepts several cells filled at once; the grammar asks for one, as
the prompts do.)"""

from __future__ import annotations

from typing import Any

from solver.grammar import alternation, grammar, literal
from verifiers.sudoku import Board, box_shape, uses_boxes

__all__ = ["SudokuGrammar", "placements"]


def _row_text(row: tuple[int, ...]) -> str:
    return "".join(str(v) if v else "*" for v in row)


def placements(board: Board, boxes: bool) -> dict[int, list[tuple[int, ...]]]:
    """Row index -> every version of that row with one blank filled by a digit not yet in the
    cell's row, column or box (rows with none are left out)."""
    n = len(board)
    out: dict[int, list[tuple[int, ...]]] = {}
    box = box_shape(n) if uses_boxes(n, boxes) else None
    for r in range(n):
        for c in range(n):
            if board[r][c]:
                continue
            seen = set(board[r]) | {board[i][c] for i in range(n)}
            if box is not None:
                r0, c0 = r - r % box[0], c - c % box[1]
                seen |= {board[i][j] for i in range(r0, r0 + box[0]) for j in range(c0, c0 + box[1])}
            for d in range(1, n + 1):
                if d not in seen:
                    out.setdefault(r, []).append(board[r][:c] + (d,) + board[r][c + 1:])
    return out


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
