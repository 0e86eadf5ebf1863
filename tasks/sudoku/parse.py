"""Tolerant extraction of boards from model text: JSON anywhere in the text (fences and prose
around it are skipped), read with ``json`` only. Nothing is ever evaluated."""

from __future__ import annotations

import json
from typing import Any

from verifiers.sudoku import BLANKS, Board

MAX_TEXT = 6000
MAX_OBJECTS = 8
_DECODER = json.JSONDecoder()
_BOARD_KEYS = ("rows", "board", "solution", "grid", "next", "sudoku")
_CELL_KEYS = ("cells", "moves", "fill", "updates")


def _cell(x: Any) -> int | None:
    """A cell value 0..9 (0 blank) from an int or a one-character string; None otherwise."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x if 0 <= x <= 9 else None
    if isinstance(x, str):
        s = x.strip()
        if s == "" or (len(s) == 1 and s in BLANKS):
            return 0
        if len(s) == 1 and "0" <= s <= "9":  # ASCII only: int() also reads other scripts' digits
            return int(s)
    return None


def _row(x: Any) -> tuple[int, ...] | None:
    if isinstance(x, list):
        cells = [_cell(v) for v in x]
    elif isinstance(x, str):
        parts = x.replace(",", " ").split() if ("," in x or " " in x.strip()) else list(x.strip())
        cells = [_cell(v) for v in parts]
    else:
        return None
    if not cells or any(v is None for v in cells):
        return None
    return tuple(v for v in cells if v is not None)


def _board(x: Any) -> Board | None:
    if isinstance(x, str) and "|" in x:
        x = x.split("|")
    if not isinstance(x, list) or not 1 <= len(x) <= 9:
        return None
    rows = [_row(r) for r in x]
    if any(r is None for r in rows):
        return None
    return tuple(r for r in rows if r is not None)


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    s = x.strip() if isinstance(x, str) else ""
    if 0 < len(s) <= 2 and all("0" <= ch <= "9" for ch in s):  # ASCII only, as in verifiers.sudoku
        return int(s)
    return None


def _apply_cells(x: Any, current: Board) -> Board | None:
    """Cells given as [row, column, digit] triples or {"row", "col", "value"} objects, 1-based."""
    if isinstance(x, dict):
        x = [x]
    if not isinstance(x, list) or not x:
        return None
    n = len(current)
    cells = [list(row) for row in current]
    for item in x:
        if isinstance(item, list) and len(item) == 3:
            r, c, v = _int(item[0]), _int(item[1]), _int(item[2])
        elif isinstance(item, dict):
            r = _int(item.get("row", item.get("r")))
            c = _int(item.get("col", item.get("column", item.get("c"))))
            v = _int(item.get("value", item.get("digit", item.get("v"))))
        else:
            return None
        if r is None or c is None or v is None or not (1 <= r <= n and 1 <= c <= n and 0 <= v <= 9):
            return None
        cells[r - 1][c - 1] = v
    return tuple(tuple(row) for row in cells)


def _interpret(obj: Any, current: Board | None) -> Board | None:
    if isinstance(obj, dict):
        for key in _BOARD_KEYS:
            if key in obj:
                board = _board(obj[key])
                if board is not None:
                    return board
        if current is not None:
            for key in _CELL_KEYS:
                if key in obj:
                    return _apply_cells(obj[key], current)
            if "row" in obj and ("col" in obj or "column" in obj):
                return _apply_cells(obj, current)
        return None
    return _board(obj)


MAX_DECODE_ATTEMPTS = 200


def extract_boards(text: str, current: Board | None = None, limit: int = MAX_OBJECTS) -> list[Board]:
    """Every board found in ``text``, in order: full boards ({"rows": [...]}, a bare list of rows)
    or, given the ``current`` board, cell updates ({"cells": [[row, col, digit], ...]})."""
    text = text[:MAX_TEXT]
    out: list[Board] = []
    i = 0
    attempts = 0  # each failed decode can scan to the end of the text: bound the total work
    while i < len(text) and len(out) < limit and attempts < MAX_DECODE_ATTEMPTS:
        if text[i] not in "{[":
            i += 1
            continue
        attempts += 1
        try:
            obj, end = _DECODER.raw_decode(text, i)
        except (json.JSONDecodeError, RecursionError, ValueError):  # ValueError: a >4300-digit integer
            i += 1
            continue
        board = _interpret(obj, current)
        if board is not None:
            out.append(board)
            i = end
        else:
            i += 1  # maybe a nested object inside holds the board
    return out
