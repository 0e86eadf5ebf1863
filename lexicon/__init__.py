"""English lexicon for crosswords: wordfreq frequencies, several word sources, pattern queries."""

from lexicon.lexicon import ALL_SOURCES, Lexicon, build_lexicon, default_lexicon
from lexicon.pattern import PatternIndex, parse_pattern

__all__ = ["ALL_SOURCES", "Lexicon", "PatternIndex", "build_lexicon", "default_lexicon", "parse_pattern"]
