"""The lexicon: sources, frequency floor, source sets, user lists, ranked pattern queries."""

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexicon import PatternIndex, build_lexicon, default_lexicon, parse_pattern
from lexicon.coverage import coverage
from lexicon.sources import normalize, read_word_file
from tasks.crosswords.data import load_puzzles

DATA = Path(__file__).resolve().parents[1] / "tasks" / "data" / "tot" / "crosswords" / "mini0505.json"


@pytest.fixture(scope="module")
def lex():
    return default_lexicon()  # built once per process (about two seconds)


@pytest.mark.parametrize("raw, want", [("Motor", "motor"), ("café", "cafe"), ("abbot's", None), ("re-do", None),
                                       ("  ", None), ("x2", None), ("Ångström", "angstrom")])
def test_normalize(raw, want):
    assert normalize(raw) == want


def test_rare_crossword_words_come_from_dictionaries_not_wordfreq(lex):
    assert "motor" in lex and lex.zipf("motor") > 4
    assert "attle" in lex and lex.zipf("attle") == 0.0
    assert "english-words" in lex.sources_of("attle")
    only_wordfreq = lex.restrict(sources=("wordfreq",))
    assert "attle" not in only_wordfreq and "motor" in only_wordfreq


def test_frequency_floor(lex):
    floored = lex.restrict(min_zipf=3.0)
    assert "motor" in floored and "attle" not in floored
    assert lex.restrict(min_zipf=0.0).min_zipf == 0.0 and "attle" in lex


def test_pattern_query_ranked_and_exact(lex):
    hits = lex.match("m?t?r", limit=50)
    assert hits[0] == "motor"
    assert all(re.fullmatch("m.t.r", w) for w in hits)
    zipfs = [lex.zipf(w) for w in hits]
    assert zipfs == sorted(zipfs, reverse=True)
    assert lex.match("MOTOR") == ["motor"]
    with pytest.raises(ValueError):
        lex.match("m1t?r")


def test_user_words_and_files(tmp_path):
    f = tmp_path / "words.txt"
    f.write_text("# mine\nqwxyz\nabbot's\nZyzzy\n")
    assert read_word_file(f) == {"qwxyz", "zyzzy"}
    lx = build_lexicon(sources=(), user_files=[f], user_words=["Vwvwv"])
    assert "qwxyz" in lx and "vwvwv" in lx and "motor" not in lx
    assert lx.sources_of("zyzzy") == ("user",)
    assert lx.match("?wxy?") == ["qwxyz"]
    with pytest.raises(ValueError):
        build_lexicon(sources=(), user_words=["two words"])
    with pytest.raises(ValueError):
        build_lexicon(sources=("nonsense",))


def test_missing_system_dictionary_is_not_an_error(tmp_path):
    lx = build_lexicon(sources=("system",), system_files=[tmp_path / "absent"])
    assert len(lx) == 0 and lx.match("?????") == []


WORDS = ["motor", "meter", "rotor", "mater", "tutor", "adobe", "agend", "amass", "sleer", "zzzzz"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, unique=True), st.data())
def test_index_equals_brute_force(words, data):
    idx = PatternIndex(words, 5)
    w = data.draw(st.sampled_from(words))
    mask = data.draw(st.lists(st.booleans(), min_size=5, max_size=5))
    pattern = "".join(ch if keep else "?" for ch, keep in zip(w, mask, strict=False))
    want = [x for x in words if all(p == "?" or p == c for p, c in zip(pattern, x, strict=False))]
    assert idx.match(pattern) == want  # index order is the given (ranked) order
    assert w in idx.match(pattern) and idx.count(pattern) == len(want)


def test_parse_pattern():
    assert parse_pattern("m?T_.") == (5, [(0, 12), (2, 19)])


def test_coverage_of_the_paper_answers(lex):
    groups = [p.words() for p in load_puzzles(DATA)]
    rows = coverage(lex, groups, floors=(0.0, 3.0),
                    source_sets=[("wordfreq",), ("wordfreq", "english-words")])
    by = {(r.sources, r.min_zipf): r for r in rows}
    wf = by[(("wordfreq",), 0.0)]
    both = by[(("wordfreq", "english-words"), 0.0)]
    assert wf.words_total == 1560 and 0.70 < wf.share < 0.80
    assert both.share > 0.97 and both.groups_complete > 120
    assert by[(("wordfreq", "english-words"), 3.0)].share < both.share
