"""Word sources for the lexicon: wordfreq (frequencies), english-words (gcide, web2), the
system's dictionary files (Debian's wamerican-insane / wbritish-insane when installed) and user
word lists. Every source yields lowercase ASCII words; anything else is skipped, not guessed."""

from __future__ import annotations

import functools
import math
import os
import unicodedata
from pathlib import Path
from typing import Iterable

from solver.inputs import MAX_DATA_FILE, read_bytes

__all__ = ["ENGLISH_WORDS_LISTS", "SYSTEM_DICT_FILES", "WORDFREQ_LIST", "english_words", "normalize",
           "read_word_file", "system_dict_files", "system_words", "wordfreq_zipf"]

# Files installed by Debian's wamerican-insane and wbritish-insane (and the small default list).
SYSTEM_DICT_FILES: tuple[str, ...] = (
    "/usr/share/dict/american-english-insane",
    "/usr/share/dict/british-english-insane",
    "/usr/share/dict/words",
)
# Lists of the PyPI package english-words: GCIDE (Webster 1913 and more) and Webster's 2nd (web2),
# which hold many of the rare and archaic words mini crosswords use ("attle", "lerot").
ENGLISH_WORDS_LISTS: tuple[str, ...] = ("gcide", "web2")
WORDFREQ_LIST = "large"


def normalize(word: str) -> str | None:
    """Lowercase ASCII letters only; accents are dropped ("café" -> "cafe"); words with other
    characters (apostrophes, hyphens, digits, spaces) are rejected."""
    w = word.strip()
    if not w:
        return None
    if not w.isascii():
        w = "".join(ch for ch in unicodedata.normalize("NFKD", w) if not unicodedata.combining(ch))
    w = w.lower()
    if not (w.isascii() and w.isalpha()):
        return None
    return w


@functools.lru_cache(maxsize=1)
def wordfreq_zipf() -> dict[str, float]:
    """Every wordfreq English word (the 'large' list) with its Zipf frequency (log10 per billion).
    Cached per process; callers must not modify the dict."""
    from wordfreq import get_frequency_dict

    out: dict[str, float] = {}
    for word, freq in get_frequency_dict("en", wordlist=WORDFREQ_LIST).items():
        w = normalize(word)
        if w is None or freq <= 0:
            continue
        z = round(math.log10(freq) + 9.0, 2)
        if z > out.get(w, -1.0):
            out[w] = z
    return out


@functools.lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The gcide and web2 lists of the PyPI package english-words; empty when not installed."""
    try:
        from english_words import get_english_words_set
    except ImportError:
        return frozenset()
    raw = get_english_words_set(list(ENGLISH_WORDS_LISTS), lower=True)
    return frozenset(w for w in (normalize(x) for x in raw) if w is not None)


def read_word_file(path: str | Path) -> set[str]:
    """Words of a plain-text list, one per line (``#`` starts a comment line). Possessives such as
    "abbot's" are skipped like any word with a non-letter."""
    out: set[str] = set()
    data = read_bytes(path, "word list", MAX_DATA_FILE)
    for line in data.decode("utf-8", errors="replace").splitlines():
        if line.startswith("#"):
            continue
        w = normalize(line)
        if w is not None:
            out.add(w)
    return out


def system_dict_files() -> tuple[str, ...]:
    """SYSTEM_DICT_FILES, or the colon-separated paths in $TOT_SYSTEM_DICTS ('' for none)."""
    env = os.environ.get("TOT_SYSTEM_DICTS")
    if env is None:
        return SYSTEM_DICT_FILES
    return tuple(p for p in env.split(":") if p)


def system_words(paths: Iterable[str | Path] | None = None) -> set[str]:
    """Union of those dictionary files that exist; empty when none is installed."""
    out: set[str] = set()
    paths = system_dict_files() if paths is None else paths
    for p in paths:
        if Path(p).is_file():
            out |= read_word_file(p)
    return out
