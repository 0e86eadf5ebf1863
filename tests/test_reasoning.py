"""Reasoning models against the fake server: their thinking (in ``reasoning_content``/``reasoning``
or a ``<think>`` block, also one cut by max_tokens) is never read as a thought or an answer, is
kept in the trace and counted in usage; ``--thinking`` sends the documented fields, and what a
server refuses or ignores is said once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from solver.lm import server_features
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.lm.openai_backend import OpenAIBackend
from solver.lm.thinking import parse_thinking, split_thinking
from solver.tools.cli import main
from solver.trace_reader import read_trace
from tests.fake_server import FakeOpenAIServer

ANSWER = "4 * 6 = 24 (left: 24)"
# What the fake model thinks: two steps that are legal from 4 9 10 13, so that reading the thinking
# as proposals would put them in the tree.
THOUGHT = "Maybe 13 - 9 = 4 (left: 4 4 10)? Then 4 + 4 = 8 (left: 8 10)."


@pytest.fixture(autouse=True)
def _fresh_capabilities() -> None:
    server_features.forget()


def test_split_thinking_reads_every_form() -> None:
    # Written out by hand: each form and the (thinking, answer) it must give.
    assert split_thinking("<think>\nhm, 2+2\n</think>\n\n4") == ("hm, 2+2", "4")
    assert split_thinking("  <THINK>a</THINK>b") == ("a", "b")
    assert split_thinking("<think>\ncut off while thinking") == ("cut off while thinking", "")
    assert split_thinking("opened by the template\n</think>\nanswer") == ("opened by the template", "answer")
    assert split_thinking("4 * 6 = 24") == ("", "4 * 6 = 24")
    # A tag after the answer began is the answer's text, not thinking.
    assert split_thinking("1 + 1 = 2 <think>x</think>") == ("", "1 + 1 = 2 <think>x</think>")
    assert split_thinking("a <think> b </think> c") == ("", "a <think> b </think> c")


def test_parse_thinking_values() -> None:
    assert [str(parse_thinking(v)) for v in ("auto", "ON", "off", "0", "high", "512")] == \
        ["auto", "on", "off", "off", "high", "512"]
    assert parse_thinking("512").extra_tokens() == 512 and parse_thinking("off").extra_tokens() == 0
    for bad in ("-1", "lots", "1e3", "2000000", "٣"):
        with pytest.raises(ValueError, match="bad --thinking"):
            parse_thinking(bad)


@pytest.mark.parametrize("form", ["field", "reasoning", "think", "open"])
@pytest.mark.parametrize("chat", [False, True])
def test_thinking_is_kept_apart_and_counted(form: str, chat: bool) -> None:
    async def go(url: str) -> tuple[list[str], Any, list[dict[str, object]]]:
        events: list[dict[str, object]] = []
        client = LMClient(OpenAIBackend("fake-model", url, notify=None), concurrency=1)
        try:
            model = client.session(on_event=events.append)
            texts = await model.complete("Input: 4 9 10 13\n", GenParams(n=1, chat=chat), "propose")
            return texts, model.usage, events
        finally:
            await client.close()

    with FakeOpenAIServer(["ok"], thinking=form, text=ANSWER) as srv:
        texts, usage, events = asyncio.run(go(srv.url))
    assert texts == ([""] if form == "open" else [ANSWER])
    assert events == [{"event": "thinking", "purpose": "propose", "thinking": THOUGHT,
                       "reasoning_tokens": usage.reasoning_tokens}]
    words = len(THOUGHT.split())
    assert usage.completion_tokens == 5 + words  # the server counts thinking as completion tokens
    # No count from the server: the thinking's share of the completion by characters.
    shown = len(THOUGHT) + (0 if form == "open" else len(ANSWER))
    assert usage.reasoning_tokens == round((5 + words) * len(THOUGHT) / shown)
    assert usage.summary()["reasoning_tokens"] == usage.reasoning_tokens


def test_a_solve_never_reads_the_thinking_as_thoughts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace, cache = tmp_path / "t.jsonl", tmp_path / "c.sqlite"
    argv = ["solve", "game24", "4 9 10 13", "--model", "fake-model", "--method", "tot-bfs", "--generator", "propose",
            "--evaluator", "value", "--breadth", "1", "--n-evaluate", "1", "--budget-calls", "2", "--json",
            "--cache", str(cache)]
    with FakeOpenAIServer(["ok"], thinking="think", text="13 - 10 = 3 (left: 3 4 9)") as srv:
        code = main([*argv, "--base-url", srv.url, "--trace", str(trace)])
    out = capsys.readouterr()
    assert code == 0, out.err
    events = read_trace(trace)
    proposed = [e["thought"] for e in events if e["event"] == "proposal"]
    # Every proposal is the answer's step, never 13 - 9 = 4 nor 4 + 4 = 8 from the thinking.
    assert proposed and set(proposed) == {"13 - 10 = 3 (left: 3 4 9)"}
    thoughts = [e for e in events if e["event"] == "thinking"]
    live = json.loads(out.out.strip().splitlines()[-1])
    assert [e["thinking"] for e in thoughts] == [THOUGHT] * live["backend_calls"] and live["backend_calls"] == 2
    assert "propose" in {e["purpose"] for e in thoughts} <= {"propose", "value"}
    assert live["reasoning_tokens"] == sum(int(e["reasoning_tokens"]) for e in thoughts) > 0
    end = [e for e in events if e["event"] == "end"][0]
    assert end["reasoning_tokens"] == live["reasoning_tokens"]
    # Replayed from the recording: the same thinking in the trace, the same counts.
    replay = tmp_path / "r.jsonl"
    code = main([*argv, "--base-url", "http://127.0.0.1:1/v1", "--cache-mode", "replay", "--trace", str(replay)])
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0
    assert [e["thinking"] for e in read_trace(replay) if e["event"] == "thinking"] == [THOUGHT, THOUGHT]
    assert [e["thought"] for e in read_trace(replay) if e["event"] == "proposal"] == proposed
    assert again["reasoning_tokens"] == live["reasoning_tokens"] and again["tokens"] == live["tokens"]


def test_a_token_budget_counts_the_thinking(capsys: pytest.CaptureFixture[str]) -> None:
    # Each call costs 3 + 5 + 14 = 22 tokens with thinking, 8 without: a budget of 20 tokens allows
    # one call with thinking (it stops there), where three calls without thinking would fit.
    with FakeOpenAIServer(["ok"], thinking="field", text="13 - 10 = 3 (left: 3 4 9)") as srv:
        code = main(["solve", "game24", "4 9 10 13", "--model", "fake-model", "--base-url", srv.url,
                     "--method", "tot-bfs", "--generator", "propose", "--evaluator", "value", "--breadth", "1",
                     "--n-evaluate", "1",
                     "--budget-tokens", "20", "--grammar", "off", "--json"])
        sent = len(srv.requests)
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and sent == 1 and res["stopped_by"] == "tokens" and res["tokens"] == 3 + 5 + len(THOUGHT.split())


def _chat_once(url: str, thinking: str, notes: list[str], times: int = 1) -> list[str]:
    async def go() -> list[str]:
        backend = OpenAIBackend("fake-model", url, notify=notes.append, thinking=thinking)
        try:
            out = []
            for _ in range(times):
                out += (await backend.complete("Say 4.", GenParams(n=1, chat=True, max_tokens=10))).texts
            return out
        finally:
            await backend.close()

    return asyncio.run(go())


@pytest.mark.parametrize(("mode", "fields", "max_tokens"), [
    ("off", {"chat_template_kwargs": {"enable_thinking": False}}, 10),
    ("on", {"chat_template_kwargs": {"enable_thinking": True}}, 10),
    ("high", {"reasoning_effort": "high"}, 10),
    ("300", {"chat_template_kwargs": {"thinking_budget": 300}, "thinking_token_budget": 300}, 310),
    ("auto", {}, 10),
])
def test_thinking_flag_sends_the_documented_fields(mode: str, fields: dict[str, object], max_tokens: int) -> None:
    notes: list[str] = []
    with FakeOpenAIServer(["ok"], thinking="field") as srv:
        _chat_once(srv.url, mode, notes)
        body = srv.requests[0].body
    assert body is not None and body["max_tokens"] == max_tokens
    sent = {k: body[k] for k in ("chat_template_kwargs", "reasoning_effort", "thinking_token_budget") if k in body}
    assert sent == fields
    assert notes == []  # the server did as asked (off: no thinking came back; 300: 14 words)


def test_a_server_that_ignores_thinking_off_is_said_once() -> None:
    notes: list[str] = []
    with FakeOpenAIServer(["ok"], thinking="think", ignore_thinking_off=True) as srv:
        texts = _chat_once(srv.url, "off", notes, times=3)
    assert texts == [ANSWER] * 3
    assert len(notes) == 1 and "--thinking off" in notes[0] and "thought anyway" in notes[0]


def test_a_server_that_refuses_the_thinking_fields_is_asked_again_without_them() -> None:
    notes: list[str] = []
    with FakeOpenAIServer(["ok"], thinking=None, refuse_thinking_fields=True) as srv:
        texts = _chat_once(srv.url, "low", notes, times=2)
        bodies = [r.body or {} for r in srv.requests]
    assert texts == [ANSWER, ANSWER]
    assert ["reasoning_effort" in b for b in bodies] == [True, False, False]  # refused once, then never sent
    assert len(notes) == 1 and "refused" in notes[0] and "reasoning_effort" in notes[0]


def test_thinking_off_on_completions_is_said_once_and_not_sent() -> None:
    notes: list[str] = []

    async def go(url: str) -> None:
        backend = OpenAIBackend("fake-model", url, notify=notes.append, thinking="off")
        try:
            for _ in range(2):
                await backend.complete("Say 4.", GenParams(n=1))
        finally:
            await backend.close()

    with FakeOpenAIServer(["ok"]) as srv:
        asyncio.run(go(srv.url))
        assert all("chat_template_kwargs" not in (r.body or {}) for r in srv.requests)
    assert len(notes) == 1 and "chat requests (--chat) only" in notes[0]


def test_a_bad_thinking_value_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["solve", "game24", "4 9 10 13", "--model", "m", "--base-url", "http://127.0.0.1:1/v1",
                 "--thinking", "lots"])
    err = capsys.readouterr().err
    assert code == 2 and "bad --thinking 'lots'" in err and len(err.strip().splitlines()) == 1
