"""Mini-crossword puzzles: the paper's mini0505.json (156 puzzles), single puzzle files, and
the puzzle text handed to search (JSON with the clues and, when known, the answer board)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.datafiles import shared_data
from verifiers.crossword import LAYOUT_5X5, parse_board

N_CLUES = len(LAYOUT_5X5.slots)  # h1-h5 then v1-v5
# The paper keeps these (1-based) for few-shot prompts; prompts.py may use only these.
FEWSHOT_INDICES: tuple[int, ...] = (136, 141, 146, 151, 156)
# The paper's 20 test puzzles: every 5th of the first 100 (0-based 0, 5, ..., 95).
TEST_INDICES: tuple[int, ...] = tuple(range(1, 101, 5))
MAX_CLUE_CHARS = 300


@dataclass(frozen=True, slots=True)
class Puzzle:
    clues: tuple[str, ...]
    answer: str | None = None  # 25 uppercase letters when known

    def text(self) -> str:
        """The puzzle text search works on (JSON; ``board`` only when known)."""
        obj: dict[str, Any] = {"clues": list(self.clues)}
        if self.answer is not None:
            obj["board"] = self.answer
        return json.dumps(obj, ensure_ascii=False)

    def words(self) -> list[str]:
        """The answer words in slot order (h1-h5, v1-v5)."""
        if self.answer is None:
            return []
        return ["".join(self.answer[c] for c in s.cells) for s in LAYOUT_5X5.slots]


def default_data() -> Path:
    """$TOT_DATA_DIR/crosswords/mini0505.json if present, else the copy shipped in tasks/data/tot."""
    return shared_data(Path("crosswords") / "mini0505.json")


def parse_puzzle(obj: object, where: str = "puzzle") -> Puzzle:
    """``[clues, board]`` (the paper's shape) or ``{"clues": [...], "board": ...}``; the board is a
    list of 25 letters or a 25-letter string, and may be absent or null when unknown."""
    board: object = None
    if isinstance(obj, dict):
        if "clues" not in obj:
            raise ValueError(f"{where}: no 'clues' key")
        clues, board = obj["clues"], obj.get("board")
    elif isinstance(obj, list) and len(obj) in (1, 2):
        clues = obj[0]
        board = obj[1] if len(obj) == 2 else None
    else:
        raise ValueError(f"{where}: expected [clues, board] or {{\"clues\": [...], \"board\": ...}}")
    if not isinstance(clues, list) or len(clues) != N_CLUES:
        got = len(clues) if isinstance(clues, list) else type(clues).__name__
        raise ValueError(f"{where}: a 5x5 mini crossword has {N_CLUES} clues (h1-h5, v1-v5); got {got}")
    for k, c in enumerate(clues):
        if not isinstance(c, str) or not c.strip() or len(c) > MAX_CLUE_CHARS:
            raise ValueError(f"{where}: clue {k + 1} must be non-empty text of at most {MAX_CLUE_CHARS} characters")
    answer = None
    if board is not None:
        if isinstance(board, list) and all(isinstance(x, str) for x in board):
            board = "".join(board)
        if not isinstance(board, str):
            raise ValueError(f"{where}: the board must be 25 letters (a string or a list of letters)")
        try:
            answer = parse_board(board, allow_empty=False)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return Puzzle(tuple(c.strip() for c in clues), answer)


def parse_puzzle_text(text: str) -> Puzzle:
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ValueError("the crossword puzzle text is not JSON") from None
    return parse_puzzle(obj)


def load_file(path: str | Path) -> Any:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no such puzzle file: {p}")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ValueError(f"{p} is not valid JSON") from None


def load_puzzles(path: str | Path | None = None) -> list[Puzzle]:
    """Every puzzle of a mini0505.json-shaped file (a JSON list of [clues, board])."""
    p = Path(path) if path is not None else default_data()
    obj = load_file(p)
    if not isinstance(obj, list) or not obj:
        raise ValueError(f"{p}: expected a JSON list of [clues, board] puzzles")
    return [parse_puzzle(x, f"{p.name} puzzle {i}") for i, x in enumerate(obj, 1)]


def load_puzzle_file(path: str | Path) -> Puzzle:
    """One puzzle in a file of its own (the same shape as one entry of mini0505.json)."""
    return parse_puzzle(load_file(path), str(path))
