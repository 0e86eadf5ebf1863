"""The lexicon: words from several sources, Zipf frequencies from wordfreq, a frequency floor
and a source set chosen per use, and ranked pattern queries."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterable, Sequence

from lexicon import sources as src
from lexicon.pattern import PatternIndex, parse_pattern

__all__ = ["ALL_SOURCES", "Lexicon", "SOURCE_BITS", "build_lexicon", "default_lexicon"]

# Bit of each source in a word's source mask. "user" covers word lists given at build time.
SOURCE_BITS: dict[str, int] = {"wordfreq": 1, "english-words": 2, "system": 4, "user": 8}
ALL_SOURCES: tuple[str, ...] = tuple(SOURCE_BITS)


def _mask(sources: Iterable[str]) -> int:
    m = 0
    for s in sources:
        if s not in SOURCE_BITS:
            raise ValueError(f"unknown word source {s!r}; choose from {', '.join(SOURCE_BITS)}")
        m |= SOURCE_BITS[s]
    return m


class Lexicon:
    """Words with a Zipf frequency (0.0 when wordfreq does not know the word) and the sources
    that list them. ``min_zipf`` and ``sources`` filter membership; ``restrict`` makes a filtered
    view that shares the word data. Pattern indexes are built per length on first use."""

    def __init__(self, zipf: dict[str, float], masks: dict[str, int], *, min_zipf: float = 0.0,
                 sources: Iterable[str] = ALL_SOURCES) -> None:
        self._zipf = zipf
        self._masks = masks
        self.min_zipf = float(min_zipf)
        self.sources: tuple[str, ...] = tuple(sources)
        self._allowed = _mask(self.sources)
        self._indexes: dict[int, PatternIndex] = {}

    def restrict(self, *, min_zipf: float | None = None, sources: Iterable[str] | None = None) -> Lexicon:
        """A view with another frequency floor or source set (word data shared, indexes not)."""
        return Lexicon(self._zipf, self._masks, min_zipf=self.min_zipf if min_zipf is None else min_zipf,
                       sources=self.sources if sources is None else sources)

    def zipf(self, word: str) -> float:
        return self._zipf.get(word.lower(), 0.0)

    def sources_of(self, word: str) -> tuple[str, ...]:
        m = self._masks.get(word.lower(), 0)
        return tuple(s for s, b in SOURCE_BITS.items() if m & b)

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        w = word.lower()
        m = self._masks.get(w, 0)
        if not m & self._allowed:
            return False
        # A floor of 0 keeps words wordfreq does not know (zipf 0.0); any higher floor drops them.
        return self.min_zipf <= 0.0 or self._zipf.get(w, 0.0) >= self.min_zipf

    def __len__(self) -> int:
        return sum(1 for w in self._masks if w in self)

    def words(self, length: int) -> list[str]:
        """Member words of ``length`` letters, most frequent first (ties alphabetical)."""
        ws = [w for w in self._masks if len(w) == length and w in self]
        ws.sort(key=lambda w: (-self._zipf.get(w, 0.0), w))
        return ws

    def index(self, length: int) -> PatternIndex:
        idx = self._indexes.get(length)
        if idx is None:
            idx = self._indexes[length] = PatternIndex(self.words(length), length)
        return idx

    def match(self, pattern: str, limit: int | None = None) -> list[str]:
        """Member words matching ``pattern`` (``?`` any letter), most frequent first."""
        length, _ = parse_pattern(pattern)
        return self.index(length).match(pattern, limit)


def build_lexicon(sources: Sequence[str] = ("wordfreq", "english-words", "system"), *,
                  user_files: Iterable[str | Path] = (), user_words: Iterable[str] = (),
                  system_files: Iterable[str | Path] | None = None,
                  lengths: Iterable[int] | None = None, min_zipf: float = 0.0) -> Lexicon:
    """Load the named sources (a missing optional source simply adds nothing) plus user lists.
    ``system_files`` defaults to the Debian lists (or $TOT_SYSTEM_DICTS)."""
    keep = None if lengths is None else set(lengths)
    zipf: dict[str, float] = {}
    masks: dict[str, int] = {}

    def add(words: Iterable[str], bit: int) -> None:
        for w in words:
            if keep is None or len(w) in keep:
                masks[w] = masks.get(w, 0) | bit

    _mask(sources)
    if "wordfreq" in sources:
        freqs = src.wordfreq_zipf()
        zipf = freqs if keep is None else {w: z for w, z in freqs.items() if len(w) in keep}
        add(zipf, SOURCE_BITS["wordfreq"])
    if "english-words" in sources:
        add(src.english_words(), SOURCE_BITS["english-words"])
    if "system" in sources:
        add(src.system_words(system_files), SOURCE_BITS["system"])
    user: set[str] = set()
    for f in user_files:
        user |= src.read_word_file(f)
    for w in user_words:
        n = src.normalize(w)
        if n is None:
            raise ValueError(f"user word {w[:40]!r} has characters other than letters")
        user.add(n)
    add(user, SOURCE_BITS["user"])
    if "wordfreq" not in sources:
        # Without wordfreq as a source of words, its frequencies still rank the others.
        freqs = src.wordfreq_zipf()
        zipf = {w: freqs[w] for w in masks if w in freqs}
    used = list(sources) + (["user"] if user else [])
    return Lexicon(zipf, masks, min_zipf=min_zipf, sources=used)


@functools.lru_cache(maxsize=4)
def default_lexicon(lengths: tuple[int, ...] | None = None) -> Lexicon:
    """Every available source, built once per process (about a second)."""
    return build_lexicon(lengths=lengths)
