"""The crossword exact layer is complete and its caps are never silent.

References share no code with what they check: python-constraint (``tests/references.py``)
enumerates every fill of a word list, and the path check below walks a known fill through the
task's own enumeration. The enumeration (``--candidates all``) must offer, at every state on the
way to any lexicon fill, that fill's word for the slot it branches on; a capped enumeration must
say how much it left out; the oracle mode must solve a shipped puzzle exactly when its ten answers
are lexicon words."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexicon import build_lexicon, default_lexicon
from solver.budget import Budget
from solver.run import SearchSettings, Settings, solve
from solver.task import Thought
from solver.task_capabilities import LegalMoves, LimitedMoves, find
from solver.tools.cli import main
from solver.trace import Trace
from tasks.crosswords import Crosswords
from tasks.crosswords.data import TEST_INDICES, default_data, load_puzzles
from tests.profiles import examples
from tests.references import SLOTS_5X5, crossword_fills
from verifiers.verdict import Solved, Valid

PUZZLES = load_puzzles(default_data())
ORACLE = Settings(search=SearchSettings(method="tot-dfs", generator="enumerate", evaluator="oracle"),
                  budget=Budget(steps=100))


def _puzzle(board: str) -> str:
    return json.dumps({"clues": [f"clue {i}" for i in range(10)], "board": board})


def _words_of(board: str) -> dict[str, str]:
    return {name: "".join(board[c] for c in cells) for name, cells in SLOTS_5X5.items()}


def _walk(task: Crosswords, fill: str) -> bool:
    """Follow ``fill`` through the task's enumeration from the empty grid: at each state the
    enumeration must offer the fill's word for some open slot, and placing it must be accepted."""
    moves = find(task, LegalMoves)
    assert moves is not None
    state = task.root(_puzzle(fill))
    want = _words_of(fill)
    while "_" in state.board:
        offered = {t.text for t in moves.legal_thoughts(state)}
        step = next((f"{s}. {w}" for s, w in want.items() if f"{s}. {w}" in offered), None)
        if step is None:
            return False
        verdict = task.check(state, Thought(step))
        assert isinstance(verdict, (Valid, Solved)), verdict
        state = verdict.state
    return state.board == fill


# Words over a four-letter alphabet, so that small lists still have fills (and several of them).
_word = st.text(alphabet="ABDE", min_size=5, max_size=5)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(_word, min_size=5, max_size=40, unique=True))
def test_every_lexicon_fill_is_reachable_through_the_enumeration(words: list[str]) -> None:
    fills = crossword_fills("_" * 25, words)  # the reference: python-constraint, every fill
    task = Crosswords(build_lexicon(sources=(), user_words=words), candidates=None, lexicon_gate="slots")
    for fill in fills[:20]:
        assert _walk(task, fill), fill
    if not fills:  # no fill of lexicon words: the enumeration gives nothing at the root, or dead ends
        moves = find(task, LegalMoves)
        assert moves is not None
        limited = find(task, LimitedMoves)
        assert limited is not None and limited.enumeration_cut(task.root(_puzzle("A" * 25))) is None


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(_word, min_size=5, max_size=40, unique=True))
def test_the_oracle_mode_finds_a_fill_exactly_when_one_exists(words: list[str]) -> None:
    fills = crossword_fills("_" * 25, words)
    task = Crosswords(build_lexicon(sources=(), user_words=words), candidates=None)
    for key in fills[:3] or ["A" * 25]:
        res = asyncio.run(solve(task, _puzzle(key), ORACLE, None, Trace()))
        assert (res.answer == key) == bool(fills), (key, res.answer, res.stopped_by)
        assert not res.exhausted  # lexicon gate none: the enumeration is lexicon fills only, never a proof


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(_word, min_size=5, max_size=40, unique=True), st.integers(1, 6))
def test_a_capped_enumeration_reports_exactly_what_it_left_out(words: list[str], cap: int) -> None:
    lex = build_lexicon(sources=(), user_words=words)
    task = Crosswords(lex, candidates=cap)
    state = task.root(_puzzle("A" * 25))
    offered = find(task, LegalMoves).legal_thoughts(state)  # type: ignore[union-attr]
    cut = find(task, LimitedMoves).enumeration_cut(state)  # type: ignore[union-attr]
    # Every word fits every open slot of the empty grid: 10 slots, len(words) words each.
    left_out = 10 * max(0, len(words) - cap)
    assert len(offered) == 10 * min(len(words), cap)
    assert (cut is None) == (left_out == 0)
    if cut is not None:
        assert cut[0] == left_out and "--candidates" in cut[1]


def test_a_cut_run_says_so_in_output_json_and_trace(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "run.jsonl"
    assert main(["solve", "crosswords", "--index", "1", "--generator", "enumerate", "--evaluator", "oracle",
                 "--candidates", "10", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "no verified solution found; incomplete: 424,640 candidates not tried (--candidates 10 per slot)" in out
    assert "no solution exists" not in out
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    inc = [e for e in events if e["event"] == "incomplete"]
    assert inc and inc[0]["not_tried"] == 424640 and inc[0]["node"] == 0
    end = events[-1]
    assert end["event"] == "end" and end["not_tried"] >= 424640 and end["exhausted"] is False
    assert main(["solve", "crosswords", "--index", "1", "--generator", "enumerate", "--evaluator", "oracle",
                 "--candidates", "10", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["not_tried"] >= 424640 and got["limit"] == "--candidates 10 per slot" and got["answer"] is None


def test_the_complete_search_claims_no_proof_when_the_enumeration_was_cut() -> None:
    # No fill of lexicon words exists (and the gate "slots" wants every entry a word); a cap of 1
    # leaves one word of each slot out, so the complete search proves nothing.
    lex = build_lexicon(sources=(), user_words=["ABCDE", "FGHIJ"])
    s = Settings(search=SearchSettings(method="tot-complete", generator="enumerate", evaluator="random"))
    res = asyncio.run(solve(Crosswords(lex, candidates=1, lexicon_gate="slots"), _puzzle("A" * 25), s, None, Trace()))
    assert res.answer is None and not res.exhausted and res.not_tried > 0 and res.limit == "--candidates 1 per slot"
    # Uncut, the same search is a proof.
    res = asyncio.run(solve(Crosswords(lex, candidates=None, lexicon_gate="slots"), _puzzle("A" * 25), s, None,
                            Trace()))
    assert res.answer is None and res.exhausted and res.not_tried == 0 and res.limit is None


@pytest.mark.parametrize("index", [TEST_INDICES[0], TEST_INDICES[3], TEST_INDICES[12]])
def test_the_oracle_mode_solves_shipped_puzzles_exactly_when_the_answers_are_lexicon_words(index: int) -> None:
    """The shipped puzzles (a sample: each run takes about a second), against python-constraint
    over the puzzle's answers and their lexicon neighbours (words one letter away): the key's
    fill is one of the reference's fills exactly when the oracle mode returns it."""
    lex = default_lexicon()
    p = PUZZLES[index - 1]
    assert p.answer is not None
    res = asyncio.run(solve(Crosswords(lex, candidates=None), p.text(), ORACLE, None, Trace()))
    near: set[str] = set()
    for w in p.words():
        for pos in range(5):
            near.update(x.upper() for x in lex.match(w[:pos].lower() + "?" + w[pos + 1:].lower(), 3))
    vocab = sorted(near | {w for w in p.words() if w in lex})
    reference = crossword_fills("_" * 25, vocab)
    assert (p.answer in reference) == (res.answer == p.answer)
    assert (res.answer == p.answer) == all(w in lex for w in p.words())
