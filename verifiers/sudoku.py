"""Exact Sudoku checks: board syntax, the step gate, final verification and completability oracles.

Boards are n x n (1 <= n <= 9) tuples of rows; 0 is a blank, 1..n are digits. Rows and columns
always hold distinct digits. The standard rules (``boxes=True``, the default everywhere) add the
boxes of the sizes that have them: 4 (2x2 boxes), 6 (2x3), 8 (2x4) and 9 (3x3); other sizes have
rows and columns only. ``boxes=False`` is Long (2023)'s Latin-square variant: rows and columns
only, at every size. Nothing here calls a model.

Board syntax: rows separated by ``|`` (or ``/`` or new lines); a row is either a run of single
characters (``3*1``) or cells separated by commas or spaces (``3,*,1``); ``*``, ``.``, ``_``
and ``0`` are blanks. Example: ``3*1|*2*|1**``.
"""

from __future__ import annotations

import random
import re
from typing import Iterator

from verifiers.answers import find_answer, read_block
from verifiers.report import AnswerReport, Check, as_invalid
from verifiers.verdict import Invalid, Solved, Valid, Verdict

__all__ = ["BLANKS", "BOX_SHAPES", "Board", "MAX_SIZE", "blanks", "box_shape", "check_step", "completable",
           "completable_csp", "count_solutions", "format_board", "parse_board", "read_board_answer", "read_givens",
           "report_solution", "rule_break", "rules_text", "solutions", "uses_boxes", "verify_solution"]

Board = tuple[tuple[int, ...], ...]

MAX_SIZE = 9
BLANKS = "*._0"
_ROW_SPLIT = re.compile(r"\s*(?:\||/|\r?\n)\s*")
_CELL_SPLIT = re.compile(r"[\s,]+")


# Box height x width of the sizes that have boxes (rows of boxes are as wide as possible).
BOX_SHAPES: dict[int, tuple[int, int]] = {4: (2, 2), 6: (2, 3), 8: (2, 4), 9: (3, 3)}


def box_shape(n: int) -> tuple[int, int]:
    """Box height and width of a size with boxes; ValueError for sizes without."""
    if n not in BOX_SHAPES:
        raise ValueError(f"a {n}x{n} board has no boxes; boxes exist for sizes {', '.join(map(str, BOX_SHAPES))}")
    return BOX_SHAPES[n]


def uses_boxes(n: int, boxes: bool) -> bool:
    """Whether boxes are checked on an n x n board: standard rules and a size with boxes."""
    return boxes and n in BOX_SHAPES


def rules_text(n: int, boxes: bool) -> str:
    """The rule set checked on an n x n board, in words (named in every answer report)."""
    if uses_boxes(n, boxes):
        bh, bw = BOX_SHAPES[n]
        return f"Sudoku {n}x{n}, standard rules: rows, columns and {bh}x{bw} boxes hold each digit 1-{n} once"
    if boxes:
        return f"Sudoku {n}x{n}, standard rules: rows and columns hold each digit 1-{n} once (size {n} has no boxes)"
    return f"Sudoku {n}x{n}, Latin square (--latin, Long 2023): rows and columns hold each digit 1-{n} once"


def parse_board(text: str, size: int | None = None) -> Board:
    """Read the board syntax above; ValueError with a one-line reason on malformed input."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError('empty board: give rows separated by "|", e.g. "3*1|*2*|1**"')
    if len(text) > 2000:
        raise ValueError("board text is too long")
    rows_text = _ROW_SPLIT.split(text.strip().strip("|/").strip())
    n = len(rows_text)
    empty = next((k for k, rt in enumerate(rows_text, 1) if not rt.strip()), None)
    if empty is not None:
        raise ValueError(f"row {empty} is empty")
    if not 1 <= n <= MAX_SIZE:
        raise ValueError(f"a board has 1 to {MAX_SIZE} rows separated by '|'; got {n}")
    if size is not None and n != size:
        raise ValueError(f"expected {size} rows (a {size}x{size} board); got {n}")
    rows: list[tuple[int, ...]] = []
    for k, rt in enumerate(rows_text, 1):
        cells = [c for c in _CELL_SPLIT.split(rt.strip()) if c] if re.search(r"[\s,]", rt) else list(rt)
        if len(cells) != n:
            raise ValueError(f"row {k} ({rt[:20]!r}) has {len(cells)} cells; a {n}x{n} board needs {n}")
        row = []
        for c in cells:
            if len(c) == 1 and c in BLANKS:
                row.append(0)
            elif len(c) == 1 and "1" <= c <= "9" and int(c) <= n:  # ASCII digits only
                row.append(int(c))
            else:
                raise ValueError(f"row {k}: {c[:10]!r} is not a digit 1..{n} or a blank (* . _ 0)")
        rows.append(tuple(row))
    return tuple(rows)


def format_board(board: Board) -> str:
    """The board syntax with ``*`` for blanks, e.g. ``3*1|*2*|1**``."""
    return "|".join("".join(str(v) if v else "*" for v in row) for row in board)


def blanks(board: Board) -> int:
    return sum(v == 0 for row in board for v in row)


def _units(n: int, boxes: bool) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    for r in range(n):
        yield f"row {r + 1}", [(r, c) for c in range(n)]
    for c in range(n):
        yield f"column {c + 1}", [(r, c) for r in range(n)]
    if uses_boxes(n, boxes):
        bh, bw = box_shape(n)
        for br in range(0, n, bh):
            for bc in range(0, n, bw):
                yield (f"the box at rows {br + 1}-{br + bh}, columns {bc + 1}-{bc + bw}",
                       [(r, c) for r in range(br, br + bh) for c in range(bc, bc + bw)])


def rule_break(board: Board, boxes: bool = True) -> str | None:
    """The first repeated digit in a row, column (or box), as a reason; None when none repeats."""
    n = len(board)
    for name, cells in _units(n, boxes):
        seen: set[int] = set()
        for r, c in cells:
            v = board[r][c]
            if v and v in seen:
                return f"{name} has two {v}s"
            seen.add(v)
    return None


def _shape_problem(board: Board, n: int) -> str | None:
    if len(board) != n or any(len(row) != n for row in board):
        return f"the board is not {n}x{n}"
    if any(not 0 <= v <= n for row in board for v in row):
        return f"digits must be 1..{n}"
    return None


def check_step(givens: Board, current: Board, proposed: Board, boxes: bool = True) -> Verdict[Board]:
    """The gate for one step. A step keeps every given and every digit already placed (going back
    is the controller's job, by returning to a board it still holds), fills at least one blank and
    breaks no rule. A full board that passes is Solved."""
    n = len(givens)
    shape = _shape_problem(proposed, n)
    if shape is not None:
        return Invalid(shape)
    for r in range(n):
        for c in range(n):
            g, cur, new = givens[r][c], current[r][c], proposed[r][c]
            if g and new != g:
                what = "erases" if new == 0 else f"changes it to {new}"
                return Invalid(f"the given {g} at row {r + 1}, column {c + 1} is fixed; the step {what}")
            if cur and new != cur:
                what = "erases" if new == 0 else f"changes it to {new}"
                return Invalid(f"the {cur} at row {r + 1}, column {c + 1} was placed earlier; the step {what}")
    if proposed == current:
        return Invalid("the step fills no new cell")
    problem = rule_break(proposed, boxes)
    if problem is not None:
        return Invalid(problem)
    return Solved(proposed) if blanks(proposed) == 0 else Valid(proposed)


def report_solution(givens: Board, board: Board, boxes: bool = True) -> AnswerReport:
    """Every exact check of a completed board against its puzzle, from scratch, each named."""
    n = len(givens)
    rules = rules_text(n, boxes)
    shape = _shape_problem(board, n)
    if shape is not None:
        return AnswerReport(rules, (Check(f"a {n}x{n} board of digits 1-{n}", False, shape),))
    checks = [Check(f"a {n}x{n} board of digits 1-{n}", True)]
    changed = next(((r, c) for r in range(n) for c in range(n) if givens[r][c] and board[r][c] != givens[r][c]), None)
    checks.append(Check("keeps every given", changed is None,
                        "" if changed is None else f"row {changed[0] + 1}, column {changed[1] + 1} must be the "
                                                   f"given {givens[changed[0]][changed[1]]}"))
    missing = blanks(board)
    checks.append(Check("complete (no blank cell)", missing == 0,
                        f"{missing} blank cell{'s' if missing > 1 else ''}" if missing else ""))
    kinds = [("row", "every row holds each digit once"), ("column", "every column holds each digit once")]
    if uses_boxes(n, boxes):
        kinds.append(("the box", f"every {BOX_SHAPES[n][0]}x{BOX_SHAPES[n][1]} box holds each digit once"))
    for prefix, name in kinds:
        bad = None
        for unit, cells in _units(n, boxes):
            if not unit.startswith(prefix + " " if prefix != "the box" else prefix):
                continue
            seen: set[int] = set()
            for r, c in cells:
                v = board[r][c]
                if v and v in seen:
                    bad = f"{unit} has two {v}s"
                    break
                seen.add(v)
            if bad:
                break
        checks.append(Check(name, bad is None, bad or ""))
    return AnswerReport(rules, tuple(checks))


def verify_solution(givens: Board, board: Board, boxes: bool = True) -> Invalid | None:
    """A completed board against its puzzle, from scratch: None when it is a valid solution
    (the first failed check of ``report_solution`` otherwise)."""
    report = report_solution(givens, board, boxes)
    return as_invalid(report)


def _peers(n: int, boxes: bool) -> list[list[int]]:
    """For each cell index, the indices of the cells sharing a unit with it."""
    peers: list[set[int]] = [set() for _ in range(n * n)]
    for _name, cells in _units(n, boxes):
        idx = [r * n + c for r, c in cells]
        for i in idx:
            peers[i].update(j for j in idx if j != i)
    return [sorted(p) for p in peers]


def solutions(board: Board, boxes: bool = True, limit: int = 2,
              rng: random.Random | None = None) -> list[Board]:
    """Up to ``limit`` completions of ``board`` by exact backtracking (most constrained cell
    first); with ``rng``, digits are tried in random order (for generating boards)."""
    n = len(board)
    if rule_break(board, boxes) is not None:
        return []
    peers = _peers(n, boxes)
    cells = [v for row in board for v in row]
    full = (1 << (n + 1)) - 2  # bits 1..n
    out: list[Board] = []

    def candidates(i: int) -> int:
        used = 0
        for j in peers[i]:
            used |= 1 << cells[j]
        return full & ~used

    def go() -> bool:
        best, best_mask, best_count = -1, 0, n + 1
        for i, v in enumerate(cells):
            if v == 0:
                mask = candidates(i)
                count = bin(mask).count("1")
                if count < best_count:
                    best, best_mask, best_count = i, mask, count
                    if count <= 1:
                        break
        if best < 0:
            out.append(tuple(tuple(cells[r * n:(r + 1) * n]) for r in range(n)))
            return len(out) >= limit
        digits = [d for d in range(1, n + 1) if best_mask >> d & 1]
        if rng is not None:
            rng.shuffle(digits)
        for d in digits:
            cells[best] = d
            if go():
                return True
        cells[best] = 0
        return False

    go()
    return out


def count_solutions(board: Board, boxes: bool = True, limit: int = 2) -> int:
    """Number of completions, counted up to ``limit``."""
    return len(solutions(board, boxes, limit))


def completable(board: Board, boxes: bool = True) -> bool:
    """Exact oracle: can this partial board still be completed without breaking a rule?"""
    return count_solutions(board, boxes, 1) == 1


def completable_csp(board: Board, boxes: bool = True) -> bool:
    """The same question answered independently by python-constraint2 (for audits and tests)."""
    from constraint import AllDifferentConstraint, Problem

    if rule_break(board, boxes) is not None:
        return False
    n = len(board)
    problem = Problem()
    for r in range(n):
        for c in range(n):
            problem.addVariable((r, c), [board[r][c]] if board[r][c] else list(range(1, n + 1)))
    for _name, cells in _units(n, boxes):
        problem.addConstraint(AllDifferentConstraint(), cells)
    return problem.getSolution() is not None


def read_givens(puzzle: str, boxes: bool) -> Board:
    """The puzzle's board; ValueError with a one-line reason when it is unreadable or breaks a rule.
    The one reader of a Sudoku puzzle: the task, ``tot verify`` and the rewards."""
    board = parse_board(puzzle)
    problem = rule_break(board, boxes)
    if problem is not None:
        raise ValueError(f"the puzzle itself breaks a rule: {problem}")
    return board


def read_board_answer(text: str, n: int) -> Board | None:
    """The n x n board a model's text answers with, or None (``verifiers.answers``: inside tags or
    a box, all of it; after ``Answer:``, its line or the n lines starting there; unmarked, the last
    board, a line alone first). The one answer reader of Sudoku: the rewards and ``tot verify``."""
    def read(block: str) -> Board | None:
        try:
            return parse_board(block, n)
        except ValueError:
            return None

    return read_block(find_answer(text), n, read) if isinstance(text, str) else None
