"""The constrained generator with scripted fake models: every passage it proposes passes the gate,
whatever the model writes (the required sentence itself, blank lines, garbage, nothing).

``reference_ok`` is a separately written check of the passage rule (exact characters, strict),
sharing no code with verifiers/writing.py.
"""

from __future__ import annotations

import asyncio
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lm.client import LMClient
from solver.run import SearchSettings, Settings, solve
from solver.searches.tot import BfsOptions
from solver.task import Thought
from solver.trace import Trace
from tasks.writing.constrained import MAX_LEAD_CHARS, Constrained, sanitise_lead_in
from tasks.writing.task import Writing
from tests.fakes import ScriptedBackend
from verifiers.writing import check_passage

S = ("Unfortunately, The man left.", "He said \u201chi\u201d to me.", "We hid.", "Instead of a bachelorette party")
LINE = " ".join(S)


def reference_ok(sentences, passage: str) -> bool:
    """Four blank-line-separated paragraphs; paragraph i's text, with runs of spaces/tabs/newlines
    as one space, is sentence i or ends with " " + sentence i (a fragment may add end marks)."""
    blocks = [b for b in re.split(r"\n[ \t]*\n", passage.replace("\r\n", "\n")) if b.strip()]
    if len(blocks) != 4:
        return False
    for block, sent in zip(blocks, sentences, strict=True):
        flat = re.sub(r"[ \t\n\r\f\v]+", " ", block).strip(" ")
        if sent[-1] not in ".!?\"'\u201d\u2019)":
            flat = flat.rstrip(".!?")
        if not (flat == sent or flat.endswith(" " + sent)):
            return False
    return True


def _client(respond) -> LMClient:
    backend = ScriptedBackend(respond)
    return LMClient(backend)


def _passages(respond, k=3, decomposition="plan"):
    task = Writing(decomposition)
    state = task.root(LINE)
    gen = Constrained(k)
    client = _client(respond)
    if decomposition == "plan":
        state = task.check(state, Thought("A plan.")).state
        return [t.text for t in asyncio.run(gen(task, state, client.session()))], client
    out = []
    model = client.session()
    for _ in range(4):
        thoughts = asyncio.run(gen(task, state, model))
        assert thoughts
        out.append(thoughts[0].text)
        state = task.check(state, thoughts[0]).state
    return ["\n\n".join(out)], client


HOSTILE = [
    "",  # nothing
    "\n\n\n",  # blank lines only
    "He came home. The dog barked. Unfortunately, The man left.",  # the required sentence itself
    "unfortunately, the man left. We hid. He said \u201chi\u201d to me.",  # only required sentences
    "Paragraph 2 (ends with \"x\"): A quiet street.\n\nSentences: 1. foo",  # labels and markers
    "%%%% ### 12 !!! \x00\x07 \u202e",  # garbage and control characters
    "A" * 2000 + ".",  # one overlong sentence
    "It was late. " * 50,  # too many sentences
    "Instead of a bachelorette party, we went bowling.",  # the fragment, extended
    "She walked in and",  # cut off mid-sentence
    "\u201cQuoted,\u201d she said. \uff34he full-width line.",
]


def test_every_passage_passes_the_gate_whatever_the_model_writes():
    for raw in HOSTILE:
        for decomposition in ("plan", "paragraphs"):
            passages, _ = _passages(lambda p, g, i, raw=raw: raw, decomposition=decomposition)
            for passage in passages:
                assert check_passage(S, passage) is None, (raw, passage)
                assert reference_ok(S, passage), (raw, passage)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), min_size=1, max_size=6))
def test_any_model_output_gives_passing_passages(outputs):
    passages, _ = _passages(lambda p, g, i: outputs[(len(p) + i) % len(outputs)], k=2)
    assert len(passages) == 2
    for passage in passages:
        assert check_passage(S, passage) is None
        assert reference_ok(S, passage)


def test_lead_ins_are_sanitised():
    assert sanitise_lead_in("", S, 0) == ""
    assert sanitise_lead_in("\n\nHe came home.\nMore lines.", S, 0) == "He came home."
    assert sanitise_lead_in("He came home. Unfortunately, The man left.", S, 0) == "He came home."
    assert sanitise_lead_in("He came home. UNFORTUNATELY, the man", S, 0) == "He came home."
    assert sanitise_lead_in("Rain fell. We hid. Then more.", S, 0) == "Rain fell."  # another required sentence
    assert sanitise_lead_in("Paragraph 1 (ends with \"x\"): Rain fell hard.", S, 0) == "Rain fell hard."
    assert sanitise_lead_in("%%% ###. !!", S, 0) == ""
    assert sanitise_lead_in("She walked in and", S, 0) == ""  # no whole sentence
    long = " ".join(f"Sentence number {i} here." for i in range(40))
    assert len(sanitise_lead_in(long, S, 0)) <= MAX_LEAD_CHARS
    assert sanitise_lead_in("A" * 1000 + ".", S, 0) == ""


def test_paragraph_is_lead_in_then_the_sentence_exactly():
    passages, client = _passages(lambda p, g, i: "The rain stopped. The streets were empty.", k=1)
    paras = passages[0].split("\n\n")
    assert paras[0] == "The rain stopped. The streets were empty. Unfortunately, The man left."
    assert paras[1].endswith("He said \u201chi\u201d to me.")  # curly quotes kept as given
    assert paras[3] == "The rain stopped. The streets were empty. Instead of a bachelorette party"
    # one call per paragraph per candidate, each prompt showing the plan and the paragraphs so far
    prompts = [p for p, _ in client.backend.requests]
    assert len(prompts) == 4 and all("Plan: A plan." in p for p in prompts)
    assert paras[0] in prompts[1] and prompts[3].rstrip().endswith('Paragraph 4 (ends with "Instead of a '
                                                                   'bachelorette party"):')


def test_candidates_differ_by_seed():
    passages, client = _passages(lambda p, g, i: f"Seed {g.seed} spoke.", k=3)
    assert len(set(passages)) == 3
    assert {g.seed for _, g in client.backend.requests} == {0, 1, 2}


def test_search_with_the_constrained_generator_returns_a_verified_passage():
    """The whole search: plans sampled and voted, passages built and gated, the vote picks."""

    def respond(prompt, params, i):
        if prompt.endswith("Plan:"):
            return " A quiet day goes wrong."
        if "Answer:" in prompt[-10:]:
            return " The best choice is 2"
        return "Out of the blue, nothing made sense."

    task = Writing("plan")
    s = Settings(search=SearchSettings(generator="constrained", evaluator="vote", k=3, n_evaluate=2,
                                       options=BfsOptions(breadth=1)))
    client = _client(respond)
    trace = Trace()
    res = asyncio.run(solve(task, LINE, s, client, trace))
    assert res.verified and reference_ok(S, res.answer)
    assert res.rejected == 0  # the gate still ran: every passage was checked and passed
    assert sum(1 for e in trace.events if e["event"] == "verdict" and e["verdict"] == "solved") == 3


def test_gate_still_refuses_what_the_construction_got_wrong():
    """The gate is not bypassed: a thought that does not end right is refused even here."""
    task = Writing("paragraphs")
    state = task.root(LINE)
    verdict = task.check(state, Thought("Lead. unfortunately, The man left."))
    assert "letter case differs at character 1" in verdict.reason


def test_cli_default_for_writing_is_constrained():
    from solver.tools.cli import build_parser, settings_from
    from solver.tools.plugins import load_plugins

    plugins = load_plugins()
    args = build_parser(plugins).parse_args(["solve", "writing", LINE])
    assert settings_from(args).search.generator == "constrained"
    args = build_parser(plugins).parse_args(["solve", "writing", LINE, "--generator", "sample"])
    assert settings_from(args).search.generator == "sample"
