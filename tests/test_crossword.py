"""Exact crossword checks: layout, the gate, fillability, answer scores, board parsing."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexicon import build_lexicon
from tests.profiles import examples
from verifiers.crossword import (
    EMPTY,
    LAYOUT_5X5,
    Grid,
    Layout,
    check_word,
    consistent,
    fillability,
    parse_board,
    score_board,
)
from verifiers.verdict import Invalid

TRUTH = "AGENDMOTORARTSYSALLESLEER"  # puzzle 1 of mini0505.json
ROWS = ["AGEND", "MOTOR", "ARTSY", "SALLE", "SLEER"]
COLS = ["AMASS", "GORAL", "ETTLE", "NOSLE", "DRYER"]


@pytest.fixture(scope="module")
def answers_only():
    return build_lexicon(sources=(), user_words=ROWS + COLS + ["ADAMS", "DOTOR"])


def test_layout_slots_and_crossings():
    names = LAYOUT_5X5.names
    assert names == ("h1", "h2", "h3", "h4", "h5", "v1", "v2", "v3", "v4", "v5")
    for s in LAYOUT_5X5.slots:
        crossings = LAYOUT_5X5.crossings(s.name)
        assert len(crossings) == 5
        for c in crossings:
            back = [b for b in LAYOUT_5X5.crossings(c.other) if b.cell == c.cell]
            assert back and back[0].other == s.name and back[0].other_pos == c.pos
    g = Grid(LAYOUT_5X5, TRUTH)
    assert [g.pattern(s) for s in LAYOUT_5X5.slots] == ROWS + COLS


def test_blocks_split_slots():
    lay = Layout(3, frozenset({4}))  # centre block: four 1-cell runs vanish, 2 across + 2 down remain
    assert [s.cells for s in lay.slots] == [(0, 1, 2), (6, 7, 8), (0, 3, 6), (2, 5, 8)]


@pytest.mark.parametrize("slot, word, why", [
    ("h6", "MOTOR", "no slot"), ("h2", "MOTORS", "6 letters"), ("h2", "MO7OR", "only the letters"),
    ("v1", "BMASS", "conflicts with h1's letter 1"),
])
def test_gate_rejects_facts(slot, word, why):
    g = check_word(Grid.empty(), "h1", "AGEND")
    assert not isinstance(g, Invalid)
    res = check_word(g, slot, word)
    assert isinstance(res, Invalid) and why in res.reason


grids = st.lists(st.tuples(st.sampled_from(LAYOUT_5X5.names), st.text("ABC", min_size=5, max_size=5)), max_size=6)


def _build(steps):
    g = Grid.empty()
    for slot, word in steps:
        nxt = check_word(g, slot, word)
        if not isinstance(nxt, Invalid):
            g = nxt
    return g


@settings(max_examples=examples(200), deadline=None)
@given(grids, st.sampled_from(LAYOUT_5X5.names), st.text("ABC", min_size=5, max_size=5))
def test_gate_never_accepts_a_conflict_and_never_changes_the_parent(steps, slot, word):
    g = _build(steps)
    before = g.cells
    res = check_word(g, slot, word)
    cells = LAYOUT_5X5.slot(slot).cells
    conflict = any(g.cells[c] not in (EMPTY, ch) for c, ch in zip(cells, word, strict=False))
    assert isinstance(res, Invalid) == conflict
    assert g.cells == before  # the parent grid is untouched: going back is holding on to it
    if not conflict:
        assert res.pattern(LAYOUT_5X5.slot(slot)) == word
        assert all(b == EMPTY or b == a for a, b in zip(res.cells, before, strict=False))  # nothing else changed


def test_fillability_levels(answers_only):
    g = check_word(Grid.empty(), "h1", "AGEND")
    for level in ("slots", "arc", "full"):
        assert fillability(g, answers_only, level).ok is True
    full = fillability(g, answers_only, "full")
    assert full.fill is not None and consistent(g.cells, full.fill)
    bad = check_word(Grid.empty(), "h1", "ZZZZZ")  # no lexicon word starts with Z
    assert fillability(bad, answers_only, "slots").ok is False
    assert "no lexicon word" in fillability(bad, answers_only, "slots").reason


def test_arc_consistency_sees_what_single_slots_miss():
    # Every slot alone can take "abcde", but then column 1 would read "aaaaa".
    lx = build_lexicon(sources=(), user_words=["abcde"])
    g = Grid.empty()
    assert fillability(g, lx, "slots").ok is True
    res = fillability(g, lx, "arc")
    assert res.ok is False and "no lexicon word agrees" in res.reason
    assert fillability(g, lx, "full").ok is False


def test_full_search_finds_a_fill():
    # Rows and columns alternate: aaaaa/bbbbb rows and ababa columns, or the transpose.
    lx = build_lexicon(sources=(), user_words=["aaaaa", "bbbbb", "ababa"])
    res = fillability(check_word(Grid.empty(), "h1", "AAAAA"), lx, "full")
    assert res.ok is True and res.fill == "AAAAABBBBBAAAAABBBBBAAAAA"
    assert fillability(check_word(Grid.empty(), "h1", "ABABA"), lx, "full").fill == "ABABA" * 5


def test_score_board_and_consistency():
    s = score_board(TRUTH, TRUTH)
    assert (s.letters, s.words, s.game) == (1.0, 1.0, True)
    wrong = "X" + TRUTH[1:]  # one letter: h1 and v1 wrong
    s = score_board(wrong, TRUTH)
    assert (s.letters_right, s.words_right, s.game) == (24, 8, False)
    assert consistent("AG" + "_" * 23, TRUTH) and not consistent("AX" + "_" * 23, TRUTH)
    assert score_board("_" * 25, TRUTH).letters_right == 0


@pytest.mark.parametrize("text", ["ABC", "A" * 26, "A" * 24 + "1", "A" * 24 + "é"])
def test_parse_board_rejects(text):
    with pytest.raises(ValueError):
        parse_board(text)


def test_parse_board_accepts_rows_and_empties():
    assert parse_board("agend motor artsy salle sleer") == TRUTH
    assert parse_board("AGEND|_____|.....|-----|?????") == "AGEND" + "_" * 20
    with pytest.raises(ValueError):
        parse_board("AGEND" + "_" * 20, allow_empty=False)


def test_bench_false_prunes_count_long_controller_thoughts_that_are_not_nodes() -> None:
    # Long's controller scores and cuts a thought before it is a node (parent and thought, its
    # state on the score event): such a thought is counted like a node, never a KeyError.
    # Solvability here is written out by hand against TRUTH, not computed by the code under test.
    from tasks.crosswords.bench import false_prunes

    right, wrong = "AGEND" + "_" * 20, "AXXXX" + "_" * 20
    events = [
        {"event": "verdict", "verdict": "valid", "node": 1, "state": right},
        {"event": "score", "node": 1, "score": 1.0},
        {"event": "score", "parent": 1, "thought": "h2. MOTOR", "state": "AGENDMOTOR" + "_" * 15, "score": 0.0},
        {"event": "cut", "parent": 1, "thought": "h2. MOTOR", "why": "pruned"},
        {"event": "score", "parent": 1, "thought": "h2. XXXXX", "state": "AGENDXXXXX" + "_" * 15, "score": 0.0},
        {"event": "cut", "parent": 1, "thought": "h2. XXXXX", "why": "pruned"},
        {"event": "verdict", "verdict": "valid", "node": 2, "state": wrong},
        {"event": "score", "node": 2, "score": 0.0},
        {"event": "cut", "node": 2, "why": "pruned"},
    ]
    # scored: node 1 (solvable), MOTOR (solvable, pruned), XXXXX (not), node 2 (not, pruned)
    assert false_prunes(events, TRUTH) == (1, 2, 4)
