"""Mini-crossword states, the thought syntax and the task's lexicon, shared by the task and its
parts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lexicon import Lexicon, default_lexicon
from verifiers.crossword import LAYOUT_5X5, Grid, Slot
from verifiers.verdict import Invalid

# re.ASCII: with IGNORECASE alone, [A-Za-z] also matches look-alikes such as the long s, the dotless
# i and the Kelvin sign, which upper() then turns into A-Z letters.
_THOUGHT_RE = re.compile(r"^\s*([hv])\s*([1-9])\s*[.:)\-]?\s*([A-Za-z][A-Za-z ]*?)\s*(?:\(\s*([a-z]+)\s*\))?\s*$",
                         re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, slots=True)
class CrosswordState:
    """The board (25 cells, ``_`` empty). Equal boards are the same state; the clues, the answer
    key (used only by the exact oracle) and the steps taken are carried along, not compared."""

    board: str
    clues: tuple[str, ...] = field(compare=False)
    truth: str | None = field(default=None, compare=False, repr=False)
    steps: tuple[str, ...] = field(default=(), compare=False)

    @property
    def grid(self) -> Grid:
        return Grid(LAYOUT_5X5, self.board)

    def clue(self, slot: Slot) -> str:
        return self.clues[LAYOUT_5X5.names.index(slot.name)]


def parse_thought(text: str) -> tuple[str, str] | Invalid:
    """``h1. MOTOR``, ``v3: tarot (high)``, ``H2 motor`` -> ("h1", "MOTOR")."""
    m = _THOUGHT_RE.match(text[:120])
    if not m:
        return Invalid(f"{text[:40]!r} is not of the form 'h1. WORD'")
    word = m.group(3).replace(" ", "")
    return f"{m.group(1).lower()}{m.group(2)}", word.upper()


def letters_of(state: CrosswordState, slot: Slot) -> str:
    return " ".join(state.grid.pattern(slot))


class Words:
    """The task's lexicon, loaded on first use (the default one takes a while to load), shared by
    the gate's optional lexicon checks, the candidate words and the fillability evaluator."""

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        self._lexicon = lexicon

    @property
    def lexicon(self) -> Lexicon:
        if self._lexicon is None:
            self._lexicon = default_lexicon()
        return self._lexicon
