"""Creative Writing as a Task: the gate per decomposition, parsers, prompts, search and baselines
with scripted models, and the CLI binding (no model is loaded here)."""

import asyncio
import dataclasses

import pytest

from solver.baseline_capabilities import AnswerParser, BaselinePrompts, BaselineTokens
from solver.budget import Usage
from solver.evaluators import Vote, make_evaluator
from solver.expansion import rule_failure
from solver.generators import Sample, make_generator
from solver.lm.client import LMClient
from solver.node import NodeFactory
from solver.run import SearchSettings, Settings, solve
from solver.searches.tot import BfsOptions
from solver.task import Task, Thought
from solver.task_capabilities import (
    HasOracle,
    LegalMoves,
    ProposePrompts,
    SamplePrompts,
    TunesParts,
    Unchecked,
    ValuePrompts,
    VotePrompt,
    find,
    has,
)
from solver.trace import Trace
from tasks.writing import Writing, WritingState
from tasks.writing.cli import PLUGIN
from tasks.writing.coherence import Coherence, coherence, parse_score
from tasks.writing.state import PASSAGE_TOKENS
from tasks.writing.task import clean_passage
from tests.fakes import ScriptedBackend
from verifiers.verdict import Invalid, Solved, Valid

LINE = ("The kettle began to sing. Nobody had fed the goldfish. Maria laughed until she cried. "
        "The storm passed before dawn.")
S = ("The kettle began to sing.", "Nobody had fed the goldfish.", "Maria laughed until she cried.",
     "The storm passed before dawn.")
GOOD = "\n\n".join(f"Part {i} of the story. {s}" for i, s in enumerate(S))
BAD = GOOD.replace("Maria laughed until she cried.", "Maria laughed.")


def run(coro):
    return asyncio.run(coro)


def test_is_a_task_and_root_splits():
    t = Writing()
    assert isinstance(t, Task)
    assert t.root(LINE) == WritingState(S)
    with pytest.raises(ValueError, match="splits into 2"):
        t.root("One. Two.")
    with pytest.raises(ValueError, match="decomposition"):
        Writing("poem")  # type: ignore[arg-type]


def test_plan_then_passage_gate():
    t = Writing("plan")
    root = t.root(LINE)
    assert isinstance(t.check(root, Thought("  ")), Invalid)
    v = t.check(root, Thought("A rainy evening."))
    assert isinstance(v, Valid) and v.state.plan == "A rainy evening." and v.state.passage is None
    assert root.plan is None  # the old state is untouched
    bad = t.check(v.state, Thought(BAD))
    assert isinstance(bad, Invalid) and bad.reason.startswith("paragraph 3 must end with sentence 3")
    ok = t.check(v.state, Thought(GOOD))
    assert isinstance(ok, Solved) and ok.state.plan is not None and ok.state.passage is not None
    assert rule_failure(t, LINE, t.answer(ok.state)) is None
    assert isinstance(t.check(ok.state, Thought(GOOD)), Invalid)
    assert rule_failure(t, LINE, BAD) is not None and rule_failure(t, "One.", GOOD) is not None


def test_paragraph_by_paragraph_gate():
    t = Writing("paragraphs")
    st = t.root(LINE)
    assert isinstance(t.check(st, Thought("Hello. Nobody had fed the goldfish.")), Invalid)  # sentence 2 first
    blank = t.check(st, Thought("A.\n\nThe kettle began to sing."))
    assert isinstance(blank, Invalid) and "one paragraph" in blank.reason
    states = [st]
    for i, s in enumerate(S):
        v = t.check(states[-1], Thought(f"Paragraph text {i}. {s}"))
        assert isinstance(v, Solved if i == 3 else Valid), i
        assert len(v.state.paragraphs) == i + 1
        states.append(v.state)
    assert [len(x.paragraphs) for x in states] == [0, 1, 2, 3, 4]  # every earlier state kept as it was
    assert rule_failure(t, LINE, t.answer(states[-1])) is None
    assert isinstance(t.check(states[-1], Thought("More. The kettle began to sing.")), Invalid)


def test_unchecked_mode_takes_text_as_written():
    t = Writing("plan")
    p = find(t, Unchecked).apply_unchecked(t.root(LINE), Thought("plan"))
    assert isinstance(p, Valid)
    s = find(t, Unchecked).apply_unchecked(p.state, Thought(BAD))
    assert isinstance(s, Solved) and rule_failure(t, LINE, t.answer(s.state)) is not None


def test_parsers():
    t = Writing("plan")
    root = t.root(LINE)
    parse = find(t, ProposePrompts).parse_proposals
    assert parse(root, " Plan: tea, fish,\n joke.\nPassage:\nignored") == [Thought("tea, fish, joke.")]
    assert parse(root, "   ") == []
    planned = dataclasses.replace(root, plan="p")
    text = GOOD + "\nEnd of passage.\n\nSentences:\n1. x"
    assert find(t, ProposePrompts).parse_proposals(planned, text) == [Thought(GOOD)]
    assert clean_passage("a\n\nb\nSentences:\nc") == "a\n\nb"
    tp = Writing("paragraphs")
    parse_p = find(tp, ProposePrompts).parse_proposals
    got = parse_p(tp.root(LINE), '\nParagraph 1 (ends with "x"): Hi. The kettle began to sing.\nmore')
    assert got == [Thought("Hi. The kettle began to sing.")]
    assert find(t, ValuePrompts).parse_value(" Likely, I think") == "likely"
    assert find(t, HasOracle).oracle(root)
    # Passages cannot be enumerated: the task does not claim the capability, so `enumerate*`
    # generators refuse it with one line (tests/test_task_protocol.py) instead of finding nothing.
    assert not has(t, LegalMoves)


def test_prompts_end_where_the_model_continues():
    t = Writing("plan")
    root = t.root(LINE)
    assert find(t, SamplePrompts).sample_prompt(root, False).endswith("Plan:")
    sample = find(t, SamplePrompts).sample_prompt
    assert sample(dataclasses.replace(root, plan="p"), False).endswith("Plan: p\nPassage:\n")
    tp = Writing("paragraphs")
    st = WritingState(S, paragraphs=("A. The kettle began to sing.",))
    prompt = find(tp, SamplePrompts).sample_prompt(st, False)
    assert prompt.endswith('Paragraph 2 (ends with "Nobody had fed the goldfish."):')
    assert find(t, SamplePrompts).sample_prompt(root, True).startswith("You are")


def test_vote_prompt_shows_the_shared_paragraphs_once_and_bounds_choices():
    tp = Writing("paragraphs")
    shared = "First. The kettle began to sing."
    states = [WritingState(S, paragraphs=(shared, f"Choice {k}. Nobody had fed the goldfish.")) for k in range(3)]
    prompt = find(tp, VotePrompt).vote_prompt(states, False)
    assert prompt.count(shared) == 1 and prompt.endswith("Answer:")
    assert "Choice 3: Choice 2. Nobody had fed the goldfish." in prompt
    long = [WritingState(S, plan="x" * 5000) for _ in range(5)]
    assert len(find(Writing("plan"), VotePrompt).vote_prompt(long, False)) < 5000


def test_tune_sets_lengths_and_stops():
    t = Writing("plan")
    gen, ev = find(t, TunesParts).tune(make_generator("sample", k=3), make_evaluator("vote", n=4))
    assert isinstance(gen, Sample) and gen.k == 3 and gen.params.max_tokens == PASSAGE_TOKENS
    assert "\nPassage:" in gen.params.stop and isinstance(ev, Vote) and ev.n == 4 and ev.params.stop == ("\n",)
    gen, _ = find(Writing("paragraphs"), TunesParts).tune(make_generator("sample"), make_evaluator("value"))
    assert gen.params.stop == ("\n",)


def _responder(passages):
    """A scripted model: plans, passages in turn, votes for choice 2, coherence 8."""
    counter = {"n": 0}

    def respond(prompt, params, i):
        if prompt.endswith("Coherence score:"):
            return " 8"
        if prompt.endswith("Answer:"):
            return " The best choice is 2"
        if prompt.endswith("Plan:"):
            return f" plan number {i}"
        last = prompt.splitlines()[-1]
        if last.startswith("Paragraph"):
            k = int(last.split()[1])
            return f"Some words here. {S[k - 1]}" if i % 2 else "Wrong ending."
        counter["n"] += 1
        return passages[(counter["n"] - 1) % len(passages)]
    return respond


def _client(respond):
    return LMClient(ScriptedBackend(respond))


@pytest.mark.parametrize("decomposition", ["plan", "paragraphs"])
def test_search_returns_only_verified_passages(decomposition):
    client = _client(_responder([BAD, GOOD]))
    trace = Trace()
    s = Settings(search=SearchSettings(generator="sample", evaluator="vote", k=2, n_evaluate=3,
                                       options=BfsOptions(breadth=1)))
    res = run(solve(Writing(decomposition), LINE, s, client, trace))
    assert res.verified and rule_failure(Writing(), LINE, res.answer) is None
    assert res.rejected >= 1
    kinds = {e["event"] for e in trace.events}
    assert {"proposal", "verdict", "score", "answer"} <= kinds


def test_search_with_no_passing_passage_returns_none():
    client = _client(_responder([BAD]))
    s = Settings(search=SearchSettings(generator="sample", evaluator="vote", k=3, n_evaluate=2,
                                       options=BfsOptions(breadth=1)))
    res = run(solve(Writing("plan"), LINE, s, client))
    assert res.answer is None and not res.verified and res.rejected == 3


def test_vote_reads_the_whole_number():
    t = Writing("plan")
    states = [WritingState(S, plan=f"plan {k}") for k in range(12)]
    nodes = NodeFactory()
    ns = [nodes.make(st, None) for st in states]
    client = _client(lambda p, g, i: " The best choice is 12")
    scores = run(Vote(n=3)(t, ns, client.session()))
    assert scores[11][0] == 3 and scores[1][0] == 0


def _baseline(method, client, rounds=5):
    from solver.baselines import BaselineConfig, run_baseline

    t = Writing()
    tokens = find(t, BaselineTokens).baseline_tokens
    cfg = BaselineConfig(rounds=rounds, io_tokens=tokens["io"], cot_tokens=tokens["cot"])
    return run(run_baseline(t, LINE, method, client, cfg))


def test_baselines_gate_what_they_return():
    """io and cot are the core's, with this task's prompts and parser; what they return passed
    the separately written ending check."""
    from tests import references as ref

    r = _baseline("io", _client(lambda p, g, i: GOOD + "\nEnd of passage."))
    assert r.verified and r.answer == GOOD and (r.raw_answers, r.invalid_answers) == (1, 0)
    assert ref.passage_ok(S, r.answer)
    r = _baseline("io", _client(lambda p, g, i: BAD))
    assert not r.verified and r.answer is None and (r.raw_answers, r.invalid_answers) == (1, 1)
    assert not ref.passage_ok(S, BAD)
    r = _baseline("cot", _client(lambda p, g, i: " a plan\nPassage:\n" + GOOD))
    assert r.verified and r.answer == GOOD
    r = _baseline("cot", _client(lambda p, g, i: " a plan that never ends"))
    assert not r.verified and r.invalid_answers == 1
    backend = ScriptedBackend(lambda p, g, i: GOOD)
    _baseline("io", LMClient(backend))
    [(prompt, params)] = backend.requests
    assert prompt == find(Writing(), BaselinePrompts).io_prompt(LINE, False) and params.max_tokens == PASSAGE_TOKENS


def _is_judge(prompt):
    return prompt.endswith("Coherence score:")


def test_refine_rounds_and_stop():
    """refine is this task's own (the paper's coherence-judged one), run by the core's runner."""
    from solver.baselines import baseline_names

    assert baseline_names(Writing()) == ("io", "cot", "cot-sc", "io-best", "cot-best", "refine")
    # Coherence judged 3 every time, passages never pass: exactly 5 passages are written.
    backend = ScriptedBackend(lambda p, g, i: " 3" if _is_judge(p) else BAD + f" v{len(p)}")
    r = _baseline("refine", LMClient(backend))
    assert (r.raw_answers, r.invalid_answers) == (5, 5) and not r.verified
    assert sum(1 for p, _ in backend.requests if not _is_judge(p)) == 5
    assert r.usage.calls == 10  # 5 passages + 5 judgements (repeated judge prompts come from the memo)
    # Each rewrite has its own seed: 0, 1, 2, ...
    assert [g.seed for p, g in backend.requests if not _is_judge(p)] == [0, 1, 2, 3, 4]
    # A passing passage judged 9 ends the loop at once.
    r = _baseline("refine", _client(lambda p, g, i: " 9" if _is_judge(p) else GOOD))
    assert r.verified and r.raw_answers == 1
    # The latest passage that passed is returned even if a later rewrite broke it.
    seq = iter([GOOD, BAD])
    r = _baseline("refine", _client(lambda p, g, i: " 2" if _is_judge(p) else next(seq, BAD)), rounds=3)
    assert (r.raw_answers, r.invalid_answers) == (3, 2) and r.answer == GOOD
    with pytest.raises(ValueError):
        _baseline("refine", _client(lambda p, g, i: GOOD), rounds=0)


def test_refine_gate_feedback_reaches_the_prompt():
    from solver.baselines import BaselineConfig, BaselineRun
    from tasks.writing.baselines import refine

    backend = ScriptedBackend(lambda p, g, i: " 2" if _is_judge(p) else BAD)
    b = BaselineRun(Writing(), LINE, LMClient(backend), BaselineConfig(rounds=2), Trace(), Usage())
    assert run(refine(b, gate_feedback=True)) is None
    assert any("paragraph 3 must end with sentence 3" in p for p, _ in backend.requests)


@pytest.mark.parametrize("text, score", [("7", 7), (" 10/10", 10), ("9.", 9), ("11", None), ("7.5", None),
                                         ("x 7", None), ("", None), ("0", None), ("1", 1)])
def test_parse_score(text, score):
    assert parse_score(text) == score


def test_coherence_averages_parsed_samples():
    answers = [" 8", " 6", " none"]
    c = run(coherence(_client(lambda p, g, i: answers[i]).session(), GOOD, n=3))
    assert c.scores == (8, 6, None) and c.mean == 7.0
    assert Coherence((None,)).mean is None


def test_cli_verify_and_bad_input(tmp_path, capsys):
    from solver.tools.cli import main

    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text(GOOD, encoding="utf-8")
    bad.write_text(BAD, encoding="utf-8")
    assert main(["verify", "writing", LINE, str(good)]) == 0
    assert capsys.readouterr().out.startswith("verified")
    assert main(["verify", "writing", LINE, str(bad)]) == 1
    assert "FAIL  paragraph 3 ends with sentence 3" in capsys.readouterr().out
    for argv in (["verify", "writing", "One. Two.", str(good)], ["verify", "writing", LINE, str(tmp_path / "nope")],
                 ["solve", "writing", "Only two. Sentences here."], ["solve", "writing"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("tot: error:") and err.count("\n") == 1 and "Traceback" not in err


def test_cli_defaults_and_data_selection():
    from solver.tools.cli import build_parser
    from solver.tools.plugins import load_plugins

    args = build_parser(load_plugins()).parse_args(["solve", "writing", LINE])
    assert (args.generator, args.evaluator, args.breadth, args.n_evaluate) == ("constrained", "vote", 1, 5)
    assert PLUGIN.puzzles(args) == [("input", LINE)]
    assert PLUGIN.make_task(args).max_depth == 2
    args = build_parser(load_plugins()).parse_args(["solve", "game24", "4 9 10 13"])
    from solver.tools.cli import DEFAULT_GENERATOR

    assert (args.generator, args.evaluator, args.breadth) == (DEFAULT_GENERATOR, "lm", 5)  # the core defaults
    assert DEFAULT_GENERATOR != "sample"


def test_cli_index_and_data_file(tmp_path):
    from solver.tools.cli import build_parser
    from solver.tools.plugins import load_plugins

    data = tmp_path / "in.txt"
    data.write_text(LINE + "\n" + LINE.replace("Maria", "Ann") + "\nbroken line\n", encoding="utf-8")
    parse = build_parser(load_plugins()).parse_args
    got = PLUGIN.puzzles(parse(["solve", "writing", "--index", "0-1", "--data", str(data)]))
    assert [g[0] for g in got] == ["0", "1"] and "Ann" in got[1][1]
    with pytest.raises(ValueError, match="line 2"):
        PLUGIN.puzzles(parse(["solve", "writing", "--index", "2", "--data", str(data)]))
    with pytest.raises(ValueError, match="out of range"):
        PLUGIN.puzzles(parse(["solve", "writing", "--index", "7", "--data", str(data)]))
    with pytest.raises(ValueError, match="bad index"):
        PLUGIN.puzzles(parse(["solve", "writing", "--index", "x", "--data", str(data)]))
    with pytest.raises(ValueError, match="not both"):
        PLUGIN.puzzles(parse(["solve", "writing", LINE, "--index", "0"]))


def test_core_baseline_interface():
    from solver.baseline_capabilities import BaselinePrompts
    from solver.baselines import supports

    t = Writing()
    assert has(t, BaselinePrompts) and supports(t, "io") and supports(t, "cot-sc")
    prompts = find(t, BaselinePrompts)
    assert prompts.io_prompt(LINE, False).endswith("Passage:\n") and prompts.cot_prompt(LINE, False).endswith("Plan:")
    assert find(t, AnswerParser).parse_answer(LINE, " a plan\nPassage:\n" + GOOD + "\nEnd of passage.") == GOOD
    assert find(t, AnswerParser).parse_answer(LINE, GOOD + "\n\nSentences:\n1. Passage: x") == GOOD
    assert find(t, AnswerParser).parse_answer(LINE, "  ") is None
