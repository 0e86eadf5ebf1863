"""Slow servers, capability probes, top-logprobs scoring and endpoint pools, against fake servers
on 127.0.0.1 (fast; the real llama.cpp server is in test_real_server.py)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from solver.lm import server_features
from solver.lm.base import EndpointDown, GenParams, LMError, ServerTooSlow
from solver.lm.client import LMClient
from solver.lm.openai_backend import OpenAIBackend
from solver.lm.pool import EndpointPool, split_urls
from solver.tools.cli import main
from tests.fake_server import FakeOpenAIServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from fake_openai_server import FakeOpenAIServer as CountingServer  # noqa: E402

TEXT = "4 * 6 = 24 (left: 24)"


@pytest.fixture(autouse=True)
def _fresh_capabilities() -> None:
    server_features.forget()  # fake servers reuse ports


def _dead_url() -> str:
    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _backend(url: str, **kw: Any) -> tuple[OpenAIBackend, list[str]]:
    notes: list[str] = []
    kw.setdefault("notify", notes.append)
    return OpenAIBackend("fake-model", url, api_key="sk-test", **kw), notes


def test_a_slow_server_is_given_more_time_not_flooded() -> None:
    # Each answer takes 0.6 s, the client waits 0.4 s, then (not resending: the server is still
    # working on it) up to 0.8 s and gets it. From then on every request goes out alone (a serial
    # server is not sent a queue): the server never has two at once.
    async def go(url: str) -> tuple[list[list[str]], list[str]]:
        backend, notes = _backend(url, timeout=0.4, max_retries=2)
        client = LMClient(backend, concurrency=4)
        try:
            model = client.session()
            first = await model.complete("a", GenParams(n=1))
            rest = await asyncio.gather(*(model.complete(p, GenParams(n=1)) for p in "bcd"))
            return [first, *rest], notes
        finally:
            await client.close()

    with FakeOpenAIServer(["slow"], delay=0.6) as srv:
        texts, notes = asyncio.run(go(srv.url))
        busy = srv.max_busy
    assert texts == [[TEXT]] * 4
    assert notes[0].startswith("server slow:") and "one request at a time" in notes[0]
    assert "request 1 (completion) has had no answer for 0.4 s; waiting up to 0.8 s (not resent" in notes[1]
    assert len(srv.requests) == 4 and busy == 1  # none resent, none sent while another was in flight


def test_a_request_that_times_out_on_every_try_ends_the_cli_run_with_exit_3(capsys: Any) -> None:
    with FakeOpenAIServer(["timeout"], hang=3.0) as srv:
        t0 = time.monotonic()
        # --grammar off: the first request is then the completion (with it, the grammar probe).
        code = main(["solve", "game24", "4 6 1 1", "--base-url", srv.url, "--model", "fake-model",
                     "--generator", "propose", "--evaluator", "value", "--timeout", "0.3", "--retries", "1",
                     "--grammar", "off"])
        took = time.monotonic() - t0
        sent = len(srv.requests)
    out, err = capsys.readouterr()
    assert code == 3 and took < 10 and sent == 1  # waited for, never resent
    assert "has had no answer for 0.3 s; waiting up to 0.6 s" in err
    assert "tot: model error: server too slow: completion request 1" in err
    assert "had no answer after 0.6 s (the longest wait: --timeout 0.3 doubled --retries 1 times)" in err
    assert "the run stopped there (results so far above)" in err
    assert "no verified solution found (the server stopped answering)" in out
    assert "Traceback" not in err


def test_a_server_that_refuses_connections_ends_the_run_with_exit_3(capsys: Any) -> None:
    code = main(["solve", "game24", "4 6 1 1", "--base-url", _dead_url(), "--model", "m",
                 "--generator", "propose", "--evaluator", "value", "--retries", "1"])
    err = capsys.readouterr().err
    assert code == 3 and "cannot reach the server" in err and "connection refused 2 times" in err


def test_models_command_reports_the_fakes_capabilities(capsys: Any) -> None:
    with FakeOpenAIServer(["ok"]) as srv:
        assert main(["models", "--base-url", srv.url, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["models"] == ["fake-model"] and info["model"] == "fake-model"
    caps = info["capabilities"]
    costs = caps.pop("costs")
    assert caps == {"chat": True, "n": True, "echo": True, "top_logprobs": 5, "stream_logprobs": False,
                    "seed": True, "grammar": False, "parallel": 2, "grammar_cost": {}}
    assert info["grammar"] == "off (the server takes no grammar)"
    assert set(costs) == {"echo", "top-logprobs"} and all(v > 0 for v in costs.values())
    # Labels: the cheaper by measurement (the fake answers both in about the same time: one top-logprobs
    # request beats three echo requests); texts: echo, the only exact one.
    assert info["scoring"] == {"labels": "echo" if 3 * costs["echo"] <= costs["top-logprobs"] else "top-logprobs",
                               "texts": "echo"}
    with FakeOpenAIServer(["one"], echo=False) as srv:
        assert main(["models", "--base-url", srv.url]) == 0
    out = capsys.readouterr().out
    assert "n             no" in out and "echo          no" in out
    assert "labels by top-logprobs" in out and "texts by top-logprobs" in out


def test_capabilities_are_probed_once_per_server_and_model() -> None:
    async def go(url: str) -> None:
        for _ in range(2):
            backend, _ = _backend(url)
            try:
                await backend.capabilities(("n", "echo"))
            finally:
                await backend.close()

    with FakeOpenAIServer(["ok"]) as srv:
        asyncio.run(go(srv.url))
        assert len(srv.requests) == 2  # one probe each for n and echo, the second backend asked none


def test_echo_scoring_reads_only_the_continuations_tokens() -> None:
    # The fake's prompt tokens have log-probability -1.0 each, the generated token after them -0.5.
    async def go(url: str) -> tuple[list[float], list[str]]:
        backend, notes = _backend(url)
        try:
            scores, _ = await backend.score("Is it 24? Answer:", [" sure", " not at all"])
            return scores, notes
        finally:
            await backend.close()

    with FakeOpenAIServer(["ok"]) as srv:
        scores, notes = asyncio.run(go(srv.url))
        bodies = [r.body for r in srv.requests if r.body and r.body.get("prompt", "").startswith("Is it")]
    assert scores == [-1.0, -3.0]
    assert all(b["max_tokens"] == 1 and b["echo"] for b in bodies)  # never 0: llama.cpp reads it as "no limit"
    assert any("scoring by echo" in n for n in notes)


def test_without_echo_labels_are_scored_from_top_logprobs() -> None:
    async def go(url: str) -> tuple[list[float], list[str]]:
        backend, notes = _backend(url)
        try:
            scores, _ = await backend.score("Is it 24? Answer:", [" sure", " likely", " impossible", " no"])
            return scores, notes
        finally:
            await backend.close()

    with FakeOpenAIServer(["ok"], echo=False) as srv:
        scores, notes = asyncio.run(go(srv.url))
    # The fake lists "4" -0.5, " sure" -1.5, " likely" -2.0, " impossible" -3.0, "6" -4.0; " no" is
    # not listed and gets the smallest listed value, an upper bound.
    assert scores == [-1.5, -2.0, -3.0, -4.0]
    assert any("scoring by top-logprobs" in n and "no echo" in n for n in notes)


SLOW_PLAIN = {"stream": True, "logprobs_delay": 0.2}  # a plain answer costs more than a streamed one


@pytest.mark.parametrize(("script", "how"), [
    (SLOW_PLAIN, "/extras/tokenize/count"),  # llama-cpp-python: no usage in streams, a tokenizer route
    ({**SLOW_PLAIN, "stream_usage": True, "tokenize": False}, "usage"),  # the stream's own usage
    ({**SLOW_PLAIN, "tokenize": False}, False),  # no way to count the prompt's tokens: not streamed
    ({**SLOW_PLAIN, "stream_shift": 0.5}, False),  # streamed values differ from the plain answer's
    ({"stream": True}, False),  # streamed, plus the tokenizer's request, is not cheaper here
    ({}, False),  # streams refused
])
def test_labels_are_scored_from_streamed_top_logprobs_where_they_match_and_tokens_are_counted(
        script: dict[str, Any], how: str | bool) -> None:
    async def go(url: str) -> tuple[list[float], int, Any, list[str]]:
        backend, notes = _backend(url)
        try:
            scores, tokens = await backend.score("Is it 24? Answer:", [" sure", " likely", " impossible", " no"])
            caps = await backend.capabilities(("stream_logprobs",))
            return scores, tokens, caps.stream_logprobs, notes
        finally:
            await backend.close()

    with FakeOpenAIServer(["ok"], echo=False, **script) as srv:
        scores, tokens, found, notes = asyncio.run(go(srv.url))
        scored = [r for r in srv.requests if (r.body or {}).get("prompt") == "Is it 24? Answer:"]
    assert found == how
    # The same scores either way (the fake lists " sure" -1.5, " likely" -2.0, " impossible" -3.0,
    # "6" -4.0), and the prompt's 3 tokens counted (by the stream's usage or the tokenizer route).
    assert scores == [-1.5, -2.0, -3.0, -4.0] and tokens == 3
    assert len(scored) == 1 and bool((scored[0].body or {}).get("stream")) == bool(how)
    # said once, with the choice: "scoring by top-logprobs for labels (...; streamed: 0.01 s streamed vs 0.2 s plain)"
    assert any("scoring by top-logprobs" in n and "; streamed: " in n for n in notes) == bool(how), notes


def test_models_command_says_whether_scores_go_streamed_and_why(capsys: Any) -> None:
    with FakeOpenAIServer(["ok"], echo=False, **SLOW_PLAIN) as srv:
        assert main(["models", "--base-url", srv.url]) == 0
    out = capsys.readouterr().out
    assert re.search(r"stream_logprobs yes \(tokens: /extras/tokenize/count\) \([\d.]+ s streamed vs [\d.]+ s plain\)",
                     out), out
    with FakeOpenAIServer(["ok"], echo=False, stream=True) as srv:
        assert main(["models", "--base-url", srv.url]) == 0
    out = capsys.readouterr().out
    assert re.search(r"stream_logprobs no \(not cheaper: [\d.]+ s streamed vs [\d.]+ s plain\)", out), out


def test_a_server_that_cannot_score_says_which_capability_is_missing() -> None:
    async def go(url: str) -> None:
        backend, _ = _backend(url, max_retries=0)
        try:
            await backend.score("p", [" a"])
        finally:
            await backend.close()

    with FakeOpenAIServer(["one"], echo=False) as srv:
        srv.script.modes = ["wrongshape"]  # top-logprobs and echo answered with garbage
        with pytest.raises(LMError, match="neither prompt log-probabilities .echo. nor top"):
            asyncio.run(go(srv.url))


def test_context_overflow_is_one_failed_call_with_the_servers_words() -> None:
    async def go(url: str) -> tuple[list[str], list[dict[str, object]]]:
        backend, _ = _backend(url)
        client = LMClient(backend)
        events: list[dict[str, object]] = []
        model = client.session(on_event=events.append)
        try:
            return await model.complete("x", GenParams()), events
        finally:
            await client.close()

    with FakeOpenAIServer(["context"]) as srv:
        texts, events = asyncio.run(go(srv.url))
        assert len(srv.requests) == 1  # a 400 is not retried
    assert texts == [] and "maximum context length is 2048 tokens" in str(events[0]["error"])


def test_chat_on_a_server_without_chat_names_the_capability() -> None:
    async def go(url: str) -> tuple[list[str], list[dict[str, object]]]:
        client = LMClient(_backend(url)[0])
        events: list[dict[str, object]] = []
        model = client.session(on_event=events.append)
        try:
            return await model.complete("x", GenParams(chat=True)), events
        finally:
            await client.close()

    with FakeOpenAIServer(["ok"], chat=False) as srv:
        texts, events = asyncio.run(go(srv.url))
        assert len(srv.requests) == 1  # a 404 is not retried
    assert texts == [] and len(events) == 1
    assert "has no chat completions (capability: chat; it answered HTTP 404); drop --chat" in str(events[0]["error"])


def test_split_urls() -> None:
    assert split_urls(["http://a/v1,http://b/v1", "http://c/v1", "http://a/v1"]) == \
        ["http://a/v1", "http://b/v1", "http://c/v1"]
    assert split_urls(None) == []


def test_pool_spreads_requests_within_each_endpoints_limit() -> None:
    async def go(urls: list[str]) -> list[list[str]]:
        # probe_parallel=False: the limit is the configured one (as with --concurrency given).
        pool = EndpointPool([_backend(u, max_retries=0, probe_parallel=False)[0] for u in urls], concurrency=2,
                            notify=None)
        client = LMClient(pool, concurrency=2)
        try:
            model = client.session()
            return list(await asyncio.gather(*(model.complete(f"p{i}", GenParams(n=1)) for i in range(24))))
        finally:
            await client.close()

    servers = [CountingServer(delay=0.05).start() for _ in range(3)]
    try:
        texts = asyncio.run(go([s.base_url for s in servers]))
        counts = [(s.requests, s.peak_in_flight) for s in servers]
    finally:
        for s in servers:
            s.stop()
    assert texts == [[" sample 0"]] * 24
    assert sum(r for r, _ in counts) == 24
    assert all(r >= 4 for r, _ in counts)  # every endpoint took a share
    assert max(p for _, p in counts) <= 2 and all(p == 2 for _, p in counts)


def test_pool_fails_over_from_a_dead_endpoint_and_says_so() -> None:
    notes: list[str] = []

    async def go(urls: list[str]) -> list[list[str]]:
        pool = EndpointPool([_backend(u, max_retries=0)[0] for u in urls], concurrency=2, notify=notes.append)
        client = LMClient(pool, concurrency=2)
        try:
            model = client.session()
            return list(await asyncio.gather(*(model.complete(f"p{i}", GenParams(n=1)) for i in range(8))))
        finally:
            await client.close()

    dead = _dead_url()
    with FakeOpenAIServer(["ok"]) as srv:
        texts = asyncio.run(go([dead, srv.url]))
        served = len(srv.requests)
    assert texts == [[TEXT]] * 8 and served == 8
    assert any(dead in n and "go to the others" in n for n in notes)


def test_pool_with_every_endpoint_dead_is_one_clear_error(capsys: Any) -> None:
    a, b = _dead_url(), _dead_url()
    code = main(["solve", "game24", "4 6 1 1", "--base-url", f"{a},{b}", "--model", "m", "--retries", "0",
                 "--generator", "propose", "--evaluator", "value"])
    err = capsys.readouterr().err
    assert code == 3 and "all 2 endpoints are unavailable" in err and a in err and b in err


def test_dead_endpoint_is_tried_again_later() -> None:
    async def go(urls: list[str]) -> list[float]:
        pool = EndpointPool([_backend(u, max_retries=0)[0] for u in urls], revive_after=0.0, notify=None)
        try:
            downs = []
            for _ in range(2):  # revive_after 0: the dead one is tried again at once, and fails over again
                assert (await pool.complete("p", GenParams(n=1))).texts == [TEXT]
                downs.append(pool._down_until[0])
            return downs
        finally:
            await pool.close()

    async def alone(url: str) -> None:
        pool = EndpointPool([_backend(url, max_retries=0)[0]], notify=None)
        try:
            await pool.complete("p", GenParams())
        finally:
            await pool.close()

    dead = _dead_url()
    with FakeOpenAIServer(["ok"]) as srv:
        downs = asyncio.run(go([dead, srv.url]))
        assert len(srv.requests) == 2
    assert downs[1] > downs[0] > 0  # set aside twice: it was tried the second time too
    with pytest.raises(EndpointDown, match="all 1 endpoints are unavailable"):
        asyncio.run(alone(dead))


def test_timeout_error_type() -> None:
    assert issubclass(ServerTooSlow, LMError)


def test_an_endpoint_without_grammar_support_gets_no_grammar_and_the_run_says_so_once(capsys: Any) -> None:
    """The fake answers its scripted text whatever the request asks: it honours no grammar. After
    the probe (one request per way of sending a grammar), no request carries a grammar field."""
    server_features.forget()
    fields = ("grammar", "structured_outputs", "guided_grammar", "ebnf")
    with FakeOpenAIServer(["ok"], text="1 + 1 = 2 (left: 2 4 6)") as srv:
        code = main(["solve", "game24", "4 6 1 1", "--base-url", srv.url, "--model", "fake-model",
                     "--generator", "propose", "--evaluator", "value"])
        bodies = [r.body or {} for r in srv.requests]
    err = capsys.readouterr().err
    assert code in (0, 1)
    probes = [b for b in bodies if b.get("prompt") == server_features.PROBE_PROMPT and any(f in b for f in fields)]
    assert [next(f for f in fields if f in b) for b in probes] == list(fields)
    rest = [b for b in bodies if b.get("prompt") != server_features.PROBE_PROMPT]
    assert sum("Possible next steps" in str(b.get("prompt")) for b in rest) >= 2
    assert not any(f in b for b in rest for f in fields)
    said = [ln for ln in err.splitlines() if "grammar: not supported" in ln]
    assert said == [f"tot: grammar: not supported by {srv.url} (fake-model), decoding unconstrained; "
                    "the gate checks every thought"]


def test_grammar_off_sends_no_grammar_and_no_probe(capsys: Any) -> None:
    server_features.forget()
    with FakeOpenAIServer(["ok"]) as srv:
        main(["solve", "game24", "4 6 1 1", "--base-url", srv.url, "--model", "fake-model",
              "--generator", "propose", "--evaluator", "value", "--grammar", "off"])
        bodies = [r.body or {} for r in srv.requests]
    assert bodies and not any("grammar" in json.dumps(b) for b in bodies)
    assert "grammar:" not in capsys.readouterr().err
