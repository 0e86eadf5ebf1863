"""Creative-writing states, the decompositions, generation limits and text helpers, shared by
the task and its parts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Decomposition = Literal["plan", "paragraphs"]
DECOMPOSITIONS: tuple[str, ...] = ("plan", "paragraphs")

MAX_PLAN_CHARS = 1500
# Generation limits. A passage of four short paragraphs is ~150-240 tokens (the example: ~140); at ~36 tokens/s on
# the embedded model every extra 100 tokens of cap costs ~3 s per sample when the model rambles.
PASSAGE_TOKENS = 240
PARAGRAPH_TOKENS = 110
VOTE_TOKENS = 16
VOTE_SHOW_CHARS = 500  # each choice shown to the judge is cut to this (keeps the prompt in context)

LABEL = re.compile(r'^\s*(?:paragraph\s*\d+\s*(?:\([^)]*\))?\s*:|plan\s*:|passage\s*:)\s*', re.IGNORECASE)
MARKERS = re.compile(r"^\s*(?:Sentences|Plan|Passage|Draft|Improved passage)\s*:|End of passage", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class WritingState:
    """The required sentences and what has been written so far (never changed in place)."""

    sentences: tuple[str, str, str, str]
    plan: str | None = None
    paragraphs: tuple[str, ...] = ()
    passage: str | None = None

    def text(self) -> str:
        """The passage so far: the full passage, or the paragraphs joined by blank lines."""
        return self.passage if self.passage is not None else "\n\n".join(self.paragraphs)


def clean_passage(text: str) -> str:
    """A model's passage text up to the first marker of a new section (no other change)."""
    m = MARKERS.search(text)
    return (text[: m.start()] if m else text).strip()


def shorten(text: str, width: int = VOTE_SHOW_CHARS) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"
