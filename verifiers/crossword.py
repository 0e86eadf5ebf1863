"""Exact crossword checks: the grid, its slots and crossings, the gate for one (slot, word)
thought, lexicon fillability (a soft judgement, since answers may be missing from any lexicon),
and the paper's letter / word / game scores against an answer board. Never calls a model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from verifiers.answers import find_answer, read_block
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid

__all__ = ["BLOCK", "BoardScore", "Crossing", "EMPTY", "FILL_LEVELS", "FillLevel", "Fillability", "Grid",
           "LAYOUT_5X5", "Layout", "Slot", "WordIndex", "arc_domains", "check_word", "consistent", "fillability",
           "parse_answer", "parse_board", "read_grid", "report_grid", "report_rules", "score_board"]

EMPTY = "_"
BLOCK = "#"
_WORD_RE = re.compile(r"[A-Z]+")

FillLevel = Literal["none", "slots", "arc", "full"]
FILL_LEVELS: tuple[str, ...] = ("none", "slots", "arc", "full")


@dataclass(frozen=True, slots=True)
class Slot:
    """An across (hK) or down (vK) run of at least two open cells, cells in reading order."""

    name: str
    cells: tuple[int, ...]

    @property
    def length(self) -> int:
        return len(self.cells)


@dataclass(frozen=True, slots=True)
class Crossing:
    """Cell ``cell`` is letter ``pos`` of this slot and letter ``other_pos`` of slot ``other``."""

    pos: int
    other: str
    other_pos: int
    cell: int


@dataclass(frozen=True, slots=True)
class Layout:
    """An n x n grid shape: block cells, the slots derived from it and where slots cross."""

    n: int
    blocks: frozenset[int] = frozenset()
    slots: tuple[Slot, ...] = field(init=False)
    _crossings: dict[str, tuple[Crossing, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        slots = _derive_slots(self.n, self.blocks)
        object.__setattr__(self, "slots", slots)
        by_cell: dict[int, list[tuple[str, int]]] = {}
        for s in slots:
            for pos, cell in enumerate(s.cells):
                by_cell.setdefault(cell, []).append((s.name, pos))
        crossings: dict[str, list[Crossing]] = {s.name: [] for s in slots}
        for cell, users in by_cell.items():
            for name, pos in users:
                for other, opos in users:
                    if other != name:
                        crossings[name].append(Crossing(pos, other, opos, cell))
        object.__setattr__(self, "_crossings", {k: tuple(v) for k, v in crossings.items()})

    def __hash__(self) -> int:
        return hash((self.n, self.blocks))

    def slot(self, name: str) -> Slot:
        for s in self.slots:
            if s.name == name:
                return s
        raise KeyError(name)

    def crossings(self, name: str) -> tuple[Crossing, ...]:
        return self._crossings[name]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.slots)


def _derive_slots(n: int, blocks: frozenset[int]) -> tuple[Slot, ...]:
    if n < 2:
        raise ValueError("a crossword grid needs at least 2 x 2 cells")

    def runs(lines: list[list[int]], prefix: str) -> list[Slot]:
        out: list[Slot] = []
        for line in lines:
            run: list[int] = []
            for cell in line + [-1]:
                if cell >= 0 and cell not in blocks:
                    run.append(cell)
                    continue
                if len(run) >= 2:
                    out.append(Slot(f"{prefix}{len(out) + 1}", tuple(run)))
                run = []
        return out

    rows = [[r * n + c for c in range(n)] for r in range(n)]
    cols = [[r * n + c for r in range(n)] for c in range(n)]
    return tuple(runs(rows, "h") + runs(cols, "v"))


LAYOUT_5X5 = Layout(5)


@dataclass(frozen=True, slots=True)
class Grid:
    """Cells in row-major order: a letter A-Z, ``_`` for empty, ``#`` for a block. A grid is a
    value; placing a word makes a new grid, so going back means holding on to the old one."""

    layout: Layout
    cells: str

    @staticmethod
    def empty(layout: Layout = LAYOUT_5X5) -> Grid:
        return Grid(layout, "".join(BLOCK if i in layout.blocks else EMPTY for i in range(layout.n ** 2)))

    def pattern(self, slot: Slot) -> str:
        return "".join(self.cells[c] for c in slot.cells)

    def is_open(self, slot: Slot) -> bool:
        return any(self.cells[c] == EMPTY for c in slot.cells)

    def open_slots(self) -> list[Slot]:
        return [s for s in self.layout.slots if self.is_open(s)]

    def is_full(self) -> bool:
        return EMPTY not in self.cells

    def filled(self) -> int:
        return sum(ch not in (EMPTY, BLOCK) for ch in self.cells)

    def rows(self) -> list[str]:
        n = self.layout.n
        return [self.cells[r * n:(r + 1) * n] for r in range(n)]

    def render(self) -> str:
        return "\n".join(" ".join(row) for row in self.rows())


def check_word(grid: Grid, slot_name: str, word: str) -> Grid | Invalid:
    """The gate: the slot exists, the word has its length, only letters, and agrees with every
    letter already in the grid. Returns the new grid or the first violated fact."""
    try:
        slot = grid.layout.slot(slot_name)
    except KeyError:
        return Invalid(f"there is no slot {slot_name!r}; slots are {', '.join(grid.layout.names)}")
    w = word.strip()
    # isascii first: upper() maps look-alikes into A-Z ("ß" -> "SS", the long s -> "S").
    w = w.upper() if w.isascii() else w
    if not _WORD_RE.fullmatch(w):
        return Invalid(f"{slot_name} {word[:30]!r}: only the letters A-Z are allowed")
    if len(w) != slot.length:
        return Invalid(f"{slot_name} {w}: {len(w)} letters, the slot has {slot.length}")
    cells = list(grid.cells)
    for pos, (cell, ch) in enumerate(zip(slot.cells, w, strict=True)):
        have = cells[cell]
        if have not in (EMPTY, ch):
            who = next((f"{c.other}'s letter {c.other_pos + 1}" for c in grid.layout.crossings(slot_name)
                        if c.cell == cell), "the grid")
            return Invalid(f"{slot_name} {w}: letter {pos + 1} {ch!r} conflicts with {who} {have!r}")
        cells[cell] = ch
    return Grid(grid.layout, "".join(cells))


class WordIndex(Protocol):
    """What fillability needs of a lexicon: per length, ranked words and their letter matrix."""

    def index(self, length: int) -> _Index: ...


class _Index(Protocol):
    words: tuple[str, ...]
    letters: np.ndarray

    def indices(self, pattern: str) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Fillability:
    """Whether every slot can still take a lexicon word. ``ok`` is None when the exact search
    hit its node limit (unknown: treated as fillable). ``fill`` is one complete fill if found."""

    ok: bool | None
    reason: str = ""
    fill: str | None = None


def _domains(grid: Grid, lexicon: WordIndex) -> tuple[dict[str, np.ndarray], str]:
    doms: dict[str, np.ndarray] = {}
    for s in grid.layout.slots:
        pat = grid.pattern(s).replace(EMPTY, "?").lower()
        doms[s.name] = lexicon.index(s.length).indices(pat)
        if doms[s.name].size == 0:
            return doms, f"{s.name} {grid.pattern(s)}: no lexicon word fits"
    return doms, ""


def _arc_consistent(grid: Grid, lexicon: WordIndex, doms: dict[str, np.ndarray]) -> str:
    """Shrink domains until every crossing letter is supported on both sides (AC-3). Returns a
    reason when some domain empties, else ''. Only the slots in ``doms`` take part (a slot left
    out is fixed by the letters already in the grid)."""
    layout = grid.layout
    queue = [n for n in layout.names if n in doms]
    queued = set(queue)
    while queue:
        b = queue.pop(0)
        queued.discard(b)
        lb = lexicon.index(layout.slot(b).length).letters
        for cr in layout.crossings(b):
            a = cr.other
            if a not in doms:
                continue
            la = lexicon.index(layout.slot(a).length).letters
            support = np.zeros(26, dtype=bool)
            support[lb[doms[b], cr.pos]] = True
            keep = support[la[doms[a], cr.other_pos]]
            if not keep.all():
                doms[a] = doms[a][keep]
                if doms[a].size == 0:
                    return f"{a}: no lexicon word agrees with the words still possible for {b}"
                if a not in queued:
                    queue.append(a)
                    queued.add(a)
    return ""


def arc_domains(grid: Grid, lexicon: WordIndex) -> tuple[dict[str, np.ndarray], str]:
    """Every lexicon word each *open* slot can still take: the words that fit the slot's letters,
    made arc consistent over the crossings between open slots (a filled slot is fixed by its
    letters, whatever word it holds). Returns (slot -> word positions in the lexicon's rank order,
    most frequent first; '') or (partial domains, the reason some slot has no word left).
    Complete with respect to the lexicon: a word that some full fill from the lexicon puts in a
    slot is never removed (arc consistency removes only words without support)."""
    doms: dict[str, np.ndarray] = {}
    for s in grid.open_slots():
        doms[s.name] = lexicon.index(s.length).indices(grid.pattern(s).replace(EMPTY, "?").lower())
        if doms[s.name].size == 0:
            return doms, f"{s.name} {grid.pattern(s)}: no lexicon word fits"
    return doms, _arc_consistent(grid, lexicon, doms)


def fillability(grid: Grid, lexicon: WordIndex, level: FillLevel = "arc", node_limit: int = 2000) -> Fillability:
    """Can every slot (filled ones included: their letters must form a lexicon word) still take a
    lexicon word? ``slots`` checks each slot alone, ``arc`` adds arc consistency over crossings,
    ``full`` searches for a complete fill (maintaining arc consistency, at most ``node_limit``
    nodes). Not a fact: the true answer may be missing from the lexicon."""
    if level == "none":
        return Fillability(True)
    doms, reason = _domains(grid, lexicon)
    if reason:
        return Fillability(False, reason)
    if level == "slots":
        return Fillability(True)
    reason = _arc_consistent(grid, lexicon, doms)
    if reason:
        return Fillability(False, reason)
    if level == "arc":
        return Fillability(True)
    budget = [node_limit]
    fill = _search(grid, lexicon, doms, budget)
    if fill is None:
        return Fillability(None if budget[0] <= 0 else False,
                           "node limit reached" if budget[0] <= 0 else "no complete fill from the lexicon")
    return Fillability(True, "", fill.cells)


def _search(grid: Grid, lexicon: WordIndex, doms: dict[str, np.ndarray], budget: list[int]) -> Grid | None:
    open_ = [s for s in grid.layout.slots if doms[s.name].size > 1 or grid.is_open(s)]
    if not open_:
        return grid
    slot = min(open_, key=lambda s: doms[s.name].size)  # fewest candidates first
    words = lexicon.index(slot.length).words
    for i in doms[slot.name]:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        nxt = check_word(grid, slot.name, words[i])
        if isinstance(nxt, Invalid):
            continue
        sub = dict(doms)
        sub[slot.name] = np.array([i])
        if _arc_consistent(nxt, lexicon, sub):
            continue
        found = _search(nxt, lexicon, sub, budget)
        if found is not None or budget[0] < 0:
            return found
    return None


# ---- answers ---------------------------------------------------------------------------------

def parse_board(text: str, n: int = 5, allow_empty: bool = True) -> str:
    """A board of n*n cells as letters (``_``, ``.``, ``-`` or ``?`` for an empty cell when
    allowed); spaces, newlines and ``|`` are ignored. Uppercase result; ValueError on bad input."""
    cleaned = re.sub(r"[\s|,]", "", text)
    if len(cleaned) != n * n:
        raise ValueError(f"a {n}x{n} board has {n * n} cells; got {len(cleaned)}")
    out = []
    for ch in cleaned:
        if ch.isascii() and ch.isalpha():
            out.append(ch.upper())
        elif allow_empty and ch in "_.-?":
            out.append(EMPTY)
        else:
            allowed = "letters A-Z or _ for an empty cell" if allow_empty else "letters A-Z only"
            raise ValueError(f"board cell {ch!r} is not allowed: use {allowed}")
    return "".join(out)


def consistent(board: str, truth: str) -> bool:
    """True when every filled cell of ``board`` agrees with ``truth`` (the state is still solvable)."""
    return all(b in (EMPTY, BLOCK) or b == t for b, t in zip(board, truth, strict=True))


@dataclass(frozen=True, slots=True)
class BoardScore:
    """The paper's metrics: share of letters right, share of words right, whole game right."""

    letters_right: int
    letters_total: int
    words_right: int
    words_total: int

    @property
    def letters(self) -> float:
        return self.letters_right / self.letters_total

    @property
    def words(self) -> float:
        return self.words_right / self.words_total

    @property
    def game(self) -> bool:
        return self.words_right == self.words_total

    def as_dict(self) -> dict[str, object]:
        return {"letters": round(self.letters, 4), "words": round(self.words, 4), "game": self.game,
                "letters_right": self.letters_right, "words_right": self.words_right}


def score_board(board: str, truth: str, layout: Layout = LAYOUT_5X5) -> BoardScore:
    if len(board) != len(truth) or len(board) != layout.n ** 2:
        raise ValueError(f"boards must have {layout.n ** 2} cells")
    cells = [i for i in range(len(truth)) if i not in layout.blocks]
    letters = sum(board[i] == truth[i] for i in cells)
    words = sum(all(board[c] == truth[c] for c in s.cells) for s in layout.slots)
    return BoardScore(letters, len(cells), words, len(layout.slots))


# ---- the answer report ------------------------------------------------------------------------

def report_rules(has_key: bool) -> str:
    return ("Mini crossword 5x5: a complete grid of letters A-Z whose crossings agree"
            + ("; the ten words must match the puzzle's answer key" if has_key
               else "; no answer key, so the words cannot be checked against the clues (never verified)"))


def parse_answer(text: str, layout: Layout = LAYOUT_5X5) -> tuple[str, str | None]:
    """An answer as a board: 25 cells (``_`` empty), or the ten words h1-h5 v1-v5 separated by
    spaces or commas. Returns (board, None), or for ten words (across board, first crossing
    that disagrees or None). ValueError when it is neither."""
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w] if isinstance(text, str) else []
    slots = layout.slots
    if len(words) == len(slots) and all(len(w) == s.length for w, s in zip(words, slots, strict=True)):
        if not all(w.isascii() and w.isalpha() for w in words):
            raise ValueError("answer words must be letters A-Z only")
        cells = [EMPTY] * (layout.n ** 2)
        conflict = None
        for w, s in zip(words, slots, strict=True):
            for pos, (cell, ch) in enumerate(zip(s.cells, w.upper(), strict=True)):
                if cells[cell] not in (EMPTY, ch) and conflict is None:
                    other = next(c.other for c in layout.crossings(s.name) if c.cell == cell)
                    conflict = f"{s.name} letter {pos + 1} is {ch!r} but {other} has {cells[cell]!r} there"
                if cells[cell] == EMPTY:
                    cells[cell] = ch
        return "".join(cells), conflict
    return parse_board(text, layout.n), None


def report_grid(answer: str, key: str | None, lexicon: object | None,
                layout: Layout = LAYOUT_5X5) -> AnswerReport:
    """Every check of a crossword answer: a grid of letters, complete, crossings agree (required);
    entries in ``lexicon`` k/10 (reported only, not a rule: answers may be missing from any word
    list); the answer key k/10 (required; not checkable, hence never verified, without a key)."""
    rules = report_rules(key is not None)
    form = f"a {layout.n}x{layout.n} grid of letters A-Z"
    try:
        board, conflict = parse_answer(answer, layout)
    except ValueError as exc:
        return AnswerReport(rules, (Check(form, False, str(exc)),))
    grid = Grid(layout, board)
    empty = board.count(EMPTY)
    checks = [Check(form, True),
              Check("complete grid", empty == 0, f"{empty} empty cell{'s' if empty != 1 else ''}" if empty else ""),
              Check("crossings agree", conflict is None,
                    conflict or "every cell is one letter shared by its across and down word")]
    full = [s for s in layout.slots if not grid.is_open(s)]
    if lexicon is not None:
        found = [s.name for s in full if grid.pattern(s) in lexicon]  # type: ignore[operator]
        missing = [s.name for s in full if s.name not in found]
        unfilled = len(layout.slots) - len(full)
        detail = "; ".join(([f"not found: {' '.join(missing)}"] if missing else [])
                           + ([f"{unfilled} entries not complete"] if unfilled else []))
        checks.append(Check(f"entries found in the lexicon {len(found)}/{len(layout.slots)}",
                            len(found) == len(layout.slots), detail, required=False))
    if key is None:
        checks.append(Check("matches the answer key", None, "no answer key: the words cannot be checked"))
    else:
        right = [s.name for s in layout.slots if grid.pattern(s) == "".join(key[c] for c in s.cells)]
        wrong = [s.name for s in layout.slots if s.name not in right]
        checks.append(Check(f"matches the answer key {len(right)}/{len(layout.slots)}", not wrong,
                            ("wrong: " + " ".join(wrong)) if wrong else ""))
    return AnswerReport(rules, tuple(checks))


def read_grid(text: str, layout: Layout = LAYOUT_5X5) -> str | None:
    """The grid a model's text answers with, as the text ``report_grid`` reads, or None
    (``verifiers.answers``: inside tags, all of it; after ``Answer:``, its line or the n lines
    starting there; unmarked, the last line or n lines that read as a grid, a line alone first).
    The one answer reader of the crosswords: the rewards and ``tot verify``."""
    def read(block: str) -> str | None:
        try:
            parse_answer(block, layout)
        except ValueError:
            return None
        return block

    return read_block(find_answer(text), layout.n, read) if isinstance(text, str) else None
