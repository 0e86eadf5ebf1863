"""Crosswords as a Task: thoughts, the gate, prompts, generators, evaluators, DFS and the CLI."""

import asyncio
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexicon import build_lexicon
from solver.budget import Budget, Usage
from solver.evaluators import Oracle, Prior
from solver.expansion import rule_failure
from solver.generators import EnumerateRank
from solver.lm.client import LMClient
from solver.searches import get_search, run_search
from solver.task import Thought
from solver.task_capabilities import HasOracle, LegalMoves, ProposePrompts, Restorable, find
from solver.tools.cli import main
from solver.trace import Trace
from tasks.crosswords import Crosswords, parse_thought, prompts
from tasks.crosswords.data import FEWSHOT_INDICES, TEST_INDICES, Puzzle, load_puzzles
from tasks.crosswords.evaluators import ClueJudge, Fillable
from tasks.crosswords.generators import ClueRank
from tasks.datafiles import shared_data
from tests import references as ref
from tests.fakes import ScriptedBackend
from tests.profiles import examples
from verifiers.verdict import Invalid, Solved, Valid

DATA = shared_data("crosswords/mini0505.json")
PUZZLES = load_puzzles(DATA)
P1 = PUZZLES[0]
DISTRACTORS = ["ADAMS", "DOTOR", "MOTET", "AGENT", "SLEEP", "DRYAD", "GORSE", "ETTIN", "NOSEY", "ARTSE"]


@pytest.fixture(scope="module")
def small_lex():
    return build_lexicon(sources=(), user_words=P1.words() + DISTRACTORS)


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("text, want", [
    ("h1. MOTOR", ("h1", "MOTOR")), ("v3: tarot (high)", ("v3", "TAROT")), ("H2 motor", ("h2", "MOTOR")),
    ("h1.MOTOR", ("h1", "MOTOR")), ("v5) Dryer", ("v5", "DRYER")),
])
def test_parse_thought(text, want):
    assert parse_thought(text) == want


@pytest.mark.parametrize("text", ["MOTOR", "x1. MOTOR", "h1.", "h1. MOTOR - an engine", ""])
def test_parse_thought_rejects(text):
    assert isinstance(parse_thought(text), Invalid)


def test_gate_facts_and_completion(small_lex):
    task = Crosswords(small_lex)
    st0 = task.root(P1.text())
    assert isinstance(task.check(st0, Thought("h1. AGENDA")), Invalid)
    v = task.check(st0, Thought("h1. AGEND"))
    assert isinstance(v, Valid) and v.state.board.startswith("AGEND") and len(v.state.steps) == 1
    assert "conflicts" in task.check(v.state, Thought("v1. BMASS")).reason
    assert "already filled" in task.check(v.state, Thought("h1. AGENT")).reason
    state = st0
    for w, s in zip(P1.words()[:5], ("h1", "h2", "h3", "h4", "h5"), strict=True):
        verdict = task.check(state, Thought(f"{s}. {w}"))
        state = verdict.state
    assert isinstance(verdict, Solved) and task.answer(state) == P1.answer
    assert rule_failure(task, P1.text(), task.answer(state)) is None
    assert rule_failure(task, P1.text(), "AGEND" + "_" * 20) is not None
    keep_going = Crosswords(small_lex, stop_when_full=False)
    assert isinstance(keep_going.check(task.root(P1.text()).__class__(
        state.board[:20] + "_____", state.clues, state.truth), Thought("h5. SLEER")), Valid)


def test_non_fact_gates_say_so(small_lex):
    st0 = Crosswords(small_lex).root(P1.text())
    strict = Crosswords(small_lex, require_word=True)
    r = strict.check(st0, Thought("h1. QQQQQ"))
    assert isinstance(r, Invalid) and "not a fact" in r.reason
    gated = Crosswords(small_lex, lexicon_gate="slots")
    r = gated.check(st0, Thought("h1. ZGEND"))  # no lexicon word for v1 starts with Z
    assert isinstance(r, Invalid) and "not a fact" in r.reason
    assert isinstance(Crosswords(small_lex).check(st0, Thought("h1. ZGEND")), Valid)  # facts alone allow it


def test_oracle_and_restore(small_lex):
    task = Crosswords(small_lex)
    st0 = task.root(P1.text())
    good = task.check(st0, Thought("h2. MOTOR")).state
    bad = task.check(st0, Thought("h2. DOTOR")).state
    assert find(task, HasOracle).oracle(good) and not find(task, HasOracle).oracle(bad)
    assert find(task, Restorable).restore(P1.text(), task.describe(good)) == good
    with pytest.raises(ValueError):
        find(task, HasOracle).oracle(Crosswords(small_lex).root(Puzzle(P1.clues).text()))


def test_legal_thoughts_most_constrained_first(small_lex):
    task = Crosswords(small_lex, candidates=3)
    state = task.check(task.root(P1.text()), Thought("h1. AGEND")).state
    thoughts = find(task, LegalMoves).legal_thoughts(state)
    assert thoughts and all(isinstance(task.check(state, t), (Valid, Solved)) for t in thoughts)
    first_slot = thoughts[0].text.split(".")[0]
    assert first_slot.startswith("v")  # columns now have a known first letter; rows do not


def test_parse_proposals_orders_by_confidence(small_lex):
    task = Crosswords(small_lex)
    st0 = task.root(P1.text())
    text = "h2. MOTOR (medium)\nv1. AMASS (certain)\nnot a line\nh3. ARTSY\n\nClues and letters:\nh4. SALLE (high)\n"
    out = find(task, ProposePrompts).parse_proposals(st0, text)
    assert [t.text for t in out] == ["v1. AMASS", "h2. MOTOR", "h3. ARTSY"]
    assert out[0].prior == 1.0


def test_prompts_never_use_a_test_puzzle():
    assert set(FEWSHOT_INDICES).isdisjoint(TEST_INDICES)
    text = "\n".join(v for k, v in vars(prompts).items() if k.isupper() and isinstance(v, str))
    for i in TEST_INDICES:
        p = PUZZLES[i - 1]
        for clue in p.clues:
            assert clue not in text, (i, clue)
        for word in p.words():
            assert not re.search(rf"\b{word}\b", text, re.IGNORECASE), (i, word)


def test_dfs_with_oracle_solves_and_backtracks_to_exact_parents(small_lex):
    # A complete grid ends the search before any evaluator sees it, so with facts alone the first
    # complete grid may hold implied non-words; the oracle upper bound judges complete grids too.
    task = Crosswords(small_lex, candidates=20, stop_when_full=False)
    res = run(run_search("tot-dfs", task, P1.text(), EnumerateRank(rank=False), Oracle(), None,
                  usage=Usage(budget=Budget(steps=15))))
    assert not res.verified and res.stopped_by == "steps"
    assert res.best is not None and res.best.state.board == P1.answer
    stopping = Crosswords(small_lex, candidates=20)
    res = run(run_search("tot-dfs", stopping, P1.text(), EnumerateRank(rank=False), Oracle(), None))
    # The first complete grid ends this search: every word placed is a candidate of the word list
    # and agrees with the grid (tests/references.py), but the words implied by crossings need not
    # be the key's: whether it counts as verified is tests/test_references.py's question.
    assert res.answer is not None and res.best is res.solution and "_" not in res.answer
    board = "_" * 25
    for step in res.best.state.steps:
        slot, word = step.split(". ")
        assert word in P1.words() + DISTRACTORS and ref.crossword_place_ok(board, slot, word), step
        board = "".join(word[ref.SLOTS_5X5[slot].index(k)] if k in ref.SLOTS_5X5[slot] else ch
                        for k, ch in enumerate(board))
    assert board == res.answer
    # Whether it counts as verified is decided by the answer key alone.
    assert res.report is not None and res.verified == (res.answer == P1.answer)
    assert res.verified == all(c.passed for c in res.report.checks if c.required)
    unranked = Crosswords(small_lex, candidates=20)
    trace = Trace()
    res = run(run_search("tot-dfs", unranked, P1.text(), EnumerateRank(rank=False), Fillable("arc"), None, trace=trace))
    states = {e["node"]: e["state"] for e in trace.of("verdict") if "node" in e}
    states[0] = trace.of("root")[0]["state"]
    for e in trace.of("backtrack"):
        assert e["state"] == states[e["to"]]


@settings(max_examples=examples(8), deadline=None)
@given(st.integers(1, 12))
def test_dfs_never_exceeds_its_step_cap(small_lex, cap):
    task = Crosswords(small_lex, candidates=5, stop_when_full=False)
    res = run(run_search("tot-dfs", task, P1.text(), EnumerateRank(rank=False), Prior(), None,
                  usage=Usage(budget=Budget(steps=cap))))
    assert res.expanded <= cap and res.usage.steps <= cap
    assert res.best is not None and res.best.depth <= cap
    assert res.stopped_by == "steps" or res.expanded < cap


def _fake_client(backend):
    return LMClient(backend)


def test_clue_judge_prunes_on_impossible(small_lex):
    # The fake judges a clue impossible when its letters hold a Q, sure otherwise.
    def scorer(prompt, cont):
        letters = re.findall(r"Letters: (.*)\nJudgement:$", prompt)[0]
        bad = "Q" in letters
        return {" impossible": 0.0 if bad else -5.0, " sure": -5.0 if bad else 0.0}.get(cont, -9.0)

    task = Crosswords(small_lex)
    st0 = task.root(P1.text())
    ok = task.check(st0, Thought("h1. AGEND")).state
    bad = task.check(st0, Thought("h1. QGEND")).state
    from solver.node import NodeFactory

    f = NodeFactory()
    nodes = [f.make(ok, None), f.make(bad, None)]
    backend = ScriptedBackend(scorer=scorer)
    model = _fake_client(backend).session()
    scores = run(ClueJudge()(task, nodes, model))
    assert scores[0][0] == 1.0 and scores[1][0] == 0.0
    assert scores[1][1]["labels"]["v1"] == "impossible"
    assert model.usage.calls == 2 * 9  # one per open clue of each state
    assert len(backend.score_requests) == 10  # the same clue with the same letters is asked once


def test_clue_rank_orders_by_likelihood_after_the_clue(small_lex):
    def scorer(prompt, cont):
        return 0.0 if cont.strip() == "AMASS" else -3.0

    task = Crosswords(small_lex, candidates=5)
    state = task.check(task.root(P1.text()), Thought("h1. AGEND")).state
    backend = ScriptedBackend(scorer=scorer)
    out = run(ClueRank()(task, state, _fake_client(backend).session()))
    assert out[0].text == "v1. AMASS"
    assert all("Clue: " in p for p, _ in backend.score_requests)
    assert {t.text for t in out} == {t.text for t in find(task, LegalMoves).legal_thoughts(state)}


# ---- command line ---------------------------------------------------------------------------

def _write(tmp_path, obj, name="p.json"):
    f = tmp_path / name
    f.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return str(f)


@pytest.mark.parametrize("obj, why", [
    ([["a"] * 9, "A" * 25], "10 clues"), ([["a"] * 10, "A" * 24], "25 cells"),
    ([["a"] * 10, "A" * 24 + "1"], "not allowed"), ("{not json", "not valid JSON"), ({"board": "A" * 25}, "clues"),
])
def test_malformed_puzzle_file_is_one_line_exit_2(tmp_path, capsys, obj, why):
    f = _write(tmp_path, obj)
    assert main(["solve", "crosswords", "--puzzle", f, "--generator", "enumerate", "--evaluator", "fillable"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1 and why in err


def test_verify_exit_codes(tmp_path, capsys):
    f = _write(tmp_path, [list(P1.clues), list(P1.answer)])
    assert main(["verify", "crosswords", "--puzzle", f, P1.answer]) == 0
    assert main(["verify", "crosswords", "--puzzle", f, "X" + P1.answer[1:]]) == 1
    assert "wrong: h1 v1" in capsys.readouterr().out
    assert main(["verify", "crosswords", "--index", "1", P1.answer.lower()]) == 0
    assert main(["verify", "crosswords", "--puzzle", f, "ABC"]) == 2
    nob = _write(tmp_path, {"clues": list(P1.clues)}, "nob.json")
    capsys.readouterr()
    assert main(["verify", "crosswords", "--puzzle", nob, P1.answer]) == 1  # no key: never verified
    assert "not checked  matches the answer key" in capsys.readouterr().out
    assert main(["verify", "crosswords", "--index", "999", P1.answer]) == 2


def test_solve_json_reports_board_and_scores(tmp_path, capsys):
    assert main(["solve", "crosswords", "--index", "1", "--generator", "enumerate", "--evaluator", "oracle",
                 "--candidates", "600", "--keep-going", "--budget-steps", "12", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["board"] == P1.answer and out["game"] is True and out["letters"] == 1.0
    assert out["stopped_by"] == "steps" and len(out["board"]) == 25
    nob = _write(tmp_path, {"clues": list(P1.clues)})
    assert main(["solve", "crosswords", "--puzzle", nob, "--generator", "enumerate", "--evaluator", "fillable",
                 "--candidates", "2", "--budget-steps", "2"]) == 0
    text = capsys.readouterr().out
    assert "deepest state reached" in text and "against the answer" not in text
    assert main(["solve", "crosswords", "--puzzle", nob, "--evaluator", "oracle"]) == 2


def test_the_beam_draws_crossword_words_by_their_likelihood(small_lex):
    # The crosswords' enumerate-rank puts each word's log-likelihood in its prior and says so, so the
    # beam draws by it: one candidate a chain, a model that likes only each clue's own answer, one
    # run -> the key (drawn uniformly among every fitting word, the beam fills a wrong grid).
    from solver.run import SearchSettings, Settings, solve
    from solver.searches.beam import no_likelihood_notice

    answers = dict(zip(P1.clues, P1.words(), strict=True))

    def scorer(prompt, cont):
        clue = next(c for c in answers if f"Clue: {c}" in prompt)
        return 0.0 if cont.strip() == answers[clue] else -30.0

    task = Crosswords(small_lex, candidates=None)
    assert no_likelihood_notice(ClueRank()) is None
    for seed in range(3):
        s = Settings(search=SearchSettings(method="beam", generator="enumerate-rank", evaluator="oracle", seed=seed,
                                           options=get_search("beam").options_from({"candidates": 1, "beam_runs": 1})))
        res = asyncio.run(solve(task, P1.text(), s, _fake_client(ScriptedBackend(scorer=scorer))))
        assert res.answer is not None and res.verified
        assert "".join(res.answer.split()).upper() == P1.answer  # every word of the key


def test_the_beam_says_no_log_likelihoods_without_a_model(small_lex):
    # enumerate-rank used with no model gives every word a prior of None: the beam's run must say
    # it scored without log-likelihoods (it said true); with a model it says it used them.
    from solver.run import SearchSettings, Settings, solve

    task = Crosswords(small_lex, candidates=None)
    s = Settings(search=SearchSettings(method="beam", generator="enumerate-rank", evaluator="oracle",
                                       options=get_search("beam").options_from({"candidates": 2, "beam_runs": 1})))
    with_model, without = Trace(), Trace()
    asyncio.run(solve(task, P1.text(), s, _fake_client(ScriptedBackend(scorer=lambda p, c: -1.0)), with_model))
    asyncio.run(solve(task, P1.text(), s, None, without))
    said = [[e["log_likelihood"] for e in t.events if e["event"] == "search"] for t in (with_model, without)]
    assert said == [[True], [False]]
