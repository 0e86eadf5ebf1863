"""How many of a set of answer words a lexicon holds, per frequency floor and source set."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from lexicon.lexicon import Lexicon

__all__ = ["Coverage", "coverage"]


@dataclass(frozen=True, slots=True)
class Coverage:
    sources: tuple[str, ...]
    min_zipf: float
    words_held: int
    words_total: int
    groups_complete: int  # groups (e.g. puzzles) all of whose words are held
    groups_total: int

    @property
    def share(self) -> float:
        return self.words_held / self.words_total if self.words_total else 0.0


def coverage(lexicon: Lexicon, groups: Sequence[Iterable[str]], floors: Sequence[float] = (0.0,),
             source_sets: Sequence[Sequence[str]] | None = None) -> list[Coverage]:
    """One row per (source set, floor): answer words held, and groups held entirely."""
    word_groups = [[w.lower() for w in g] for g in groups]
    rows = []
    for sources in source_sets or [lexicon.sources]:
        for floor in floors:
            view = lexicon.restrict(min_zipf=floor, sources=sources)
            held = [[w in view for w in g] for g in word_groups]
            rows.append(Coverage(tuple(sources), floor, sum(sum(h) for h in held), sum(len(h) for h in held),
                                 sum(all(h) for h in held), len(held)))
    return rows
