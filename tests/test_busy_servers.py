"""Real servers at real speed, against the fake server (fast): requests in flight follow what the
server serves at once, a stalled server ends the run with the results so far, the scoring mode and
grammar decoding are chosen by measured cost, and an explicit choice wins."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from solver.lm import server_features
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.lm.openai_backend import OpenAIBackend
from solver.lm.server_features import COST_PROMPT
from solver.tools.cli import main
from tests.fake_server import FakeOpenAIServer

TEXT = "4 * 6 = 24 (left: 24)"


@pytest.fixture(autouse=True)
def _fresh_capabilities() -> None:
    server_features.forget()


def _burst(url: str, notes: list[str], probe: bool = True, n: int = 6) -> list[list[str]]:
    """``n`` requests at once through a client that allows 4 in flight."""
    async def go() -> list[list[str]]:
        backend = OpenAIBackend("fake-model", url, notify=notes.append, probe_parallel=probe)
        client = LMClient(backend, concurrency=4)
        try:
            model = client.session()
            return list(await asyncio.gather(*(model.complete(f"p{i}", GenParams(n=1)) for i in range(n))))
        finally:
            await client.close()

    return asyncio.run(go())


@pytest.mark.parametrize("slots", [None, 1])
def test_a_server_that_serves_one_at_a_time_gets_one_at_a_time(slots: int | None) -> None:
    # None: no /props (llama-cpp-python's server), found by timing; 1: llama-server's /props says so.
    notes: list[str] = []
    with FakeOpenAIServer(["slow"], delay=0.3, serial=True, slots=slots) as srv:
        texts = _burst(srv.url, notes)
        busy = srv.max_busy
        probes = [r for r in srv.requests if (r.body or {}).get("prompt") == server_features.PROBE_PROMPT]
    assert texts == [[TEXT]] * 6
    # The probe's two requests at once are the only time the server had two (it queued them itself).
    assert len(notes) == 1 and "serves one request at a time" in notes[0]
    assert len(probes) == (4 if slots is None else 0)
    # After the probe: never more than one of ours on the server.
    assert busy <= (2 if slots is None else 1)


def test_the_probe_is_what_limits_the_requests_in_flight() -> None:
    # The same serial server without the probe (as with --concurrency given): the client piles 4 on it.
    notes: list[str] = []
    with FakeOpenAIServer(["slow"], delay=0.3, serial=True, slots=None) as srv:
        _burst(srv.url, notes, probe=False)
        assert srv.max_busy == 4 and notes == []
    with FakeOpenAIServer(["slow"], delay=0.3, serial=True, slots=None) as srv:
        _burst(srv.url, notes, probe=True)
        started = [r for r in srv.requests if (r.body or {}).get("prompt", "").startswith("p")]
        assert len(started) == 6 and srv.max_busy <= 2  # 2: the probe's own pair


def test_a_server_that_serves_several_at_once_keeps_the_concurrency() -> None:
    notes: list[str] = []
    with FakeOpenAIServer(["slow"], delay=0.3, slots=None) as srv:  # threaded: answers at once
        _burst(srv.url, notes, n=8)
        assert srv.max_busy >= 3 and notes == []


def test_a_server_that_stalls_mid_run_ends_it_with_the_results_so_far(capsys: Any) -> None:
    # Two answers, then nothing: the third request is waited for 0.2 s, then up to 0.4 s, and the
    # run ends (exit 3) with what it had: its proposals, its usage and the reason. One request at a
    # time, so that the third the server sees is our request 3 (the two value requests run at once
    # otherwise, and either may reach the server last: CI saw request 2 named).
    steps = "13 - 9 = 4 (left: 4 4 10)\n13 - 10 = 3 (left: 3 4 9)"
    with FakeOpenAIServer(["ok"], text=steps, stall_after=2, hang=30.0) as srv:
        t0 = time.monotonic()
        code = main(["solve", "game24", "4 9 10 13", "--base-url", srv.url, "--model", "fake-model",
                     "--generator", "propose", "--evaluator", "value", "--n-evaluate", "1", "--timeout", "0.2",
                     "--retries", "1", "--grammar", "off", "--concurrency", "1", "--json"])
        took = time.monotonic() - t0
        sent = len(srv.requests)
    out, err = capsys.readouterr()
    # Ended by our own wait (0.4 s), not the server's 30 s hang; the stalled request never sent again.
    assert code == 3 and took < 20 and sent == 3
    res = json.loads(out.strip().splitlines()[-1])
    assert res["stopped_by"] == "server" and res["answer"] is None and not res["verified"]
    assert res["proposed"] == 2 and res["backend_calls"] == 2 and res["failed_calls"] == 1
    assert "server too slow" in res["error"]
    assert err.strip().splitlines()[-1].startswith("tot: model error: server too slow: completion request 3")
    assert "results so far above" in err and "Traceback" not in err


def _score_labels(url: str, notes: list[str], scoring: str = "auto") -> list[float]:
    async def go() -> list[float]:
        backend = OpenAIBackend("fake-model", url, notify=notes.append, scoring=scoring)
        try:
            scores, _ = await backend.score("4 4 10\n", [" sure", " likely", " impossible"])
            return scores
        finally:
            await backend.close()

    return asyncio.run(go())


def test_auto_scores_labels_by_the_cheaper_mode_as_measured() -> None:
    # Echo takes 0.3 s more per request here (as on llama.cpp's server, where it is far slower):
    # top-logprobs is chosen for labels, and the choice and the measured costs are said.
    notes: list[str] = []
    with FakeOpenAIServer(["ok"], echo_delay=0.3) as srv:
        _score_labels(srv.url, notes)
        scoring = [r.body for r in srv.requests if (r.body or {}).get("prompt") == "4 4 10\n"]
    assert len(scoring) == 1 and not scoring[0].get("echo") and scoring[0]["logprobs"] == 5  # type: ignore[union-attr]
    assert len(notes) == 1 and "scoring by top-logprobs for labels (cheaper here" in notes[0]
    costs = server_features._CACHE[(srv.url, "fake-model")]["costs"]
    assert costs["echo"] > costs["top-logprobs"] + 0.25  # type: ignore[index,operator]


def test_auto_scores_by_echo_where_echo_is_cheaper() -> None:
    # The choice from given costs (the fake cannot make top-logprobs slower than echo): echo when
    # its requests for all labels cost less than one top-logprobs request; texts always by echo.
    notes: list[str] = []
    with FakeOpenAIServer(["ok"]) as srv:
        caps = server_features.Capabilities(echo=True, top_logprobs=5, costs={"echo": 0.01, "top-logprobs": 0.5})
        from solver.lm.openai_backend import choose_scoring

        assert choose_scoring(caps, 3, True)[0] == "echo"
        assert choose_scoring(caps, 3, False)[0] == "echo"
        slow = server_features.Capabilities(echo=True, top_logprobs=5, costs={"echo": 0.5, "top-logprobs": 0.5})
        assert choose_scoring(slow, 3, True)[0] == "top-logprobs"
        assert choose_scoring(slow, 3, False)[0] == "echo"  # texts need echo, whatever it costs
        over = server_features.Capabilities(echo=True, top_logprobs=5, costs={"echo": None, "top-logprobs": 0.5,
                                                                           "echo_over": 10.0})
        assert choose_scoring(over, 1, True)[0] == "top-logprobs"
        assert choose_scoring(server_features.Capabilities(echo=False, top_logprobs=0), 3, True)[0] is None
        _score_labels(srv.url, notes)
    assert len(notes) == 1 and "scoring by" in notes[0]


def test_an_echo_far_slower_than_top_logprobs_is_abandoned_by_the_probe() -> None:
    # top-logprobs answers at once; echo takes 3 s: the probe gives up on it after its 2 s floor.
    notes: list[str] = []
    with FakeOpenAIServer(["ok"], echo_delay=3.0) as srv:
        _score_labels(srv.url, notes)
    costs = server_features._CACHE[(srv.url, "fake-model")]["costs"]
    # Abandoned at the floor (2 s), not waited for: no echo figure, the bound recorded instead.
    assert costs["echo"] is None and costs["echo_over"] == server_features.ECHO_FLOOR  # type: ignore[index]
    assert "echo is far slower here" in notes[0] and "echo over 2 s" in notes[0]


def test_an_explicit_scoring_mode_wins_and_costs_nothing_to_probe() -> None:
    notes: list[str] = []
    with FakeOpenAIServer(["ok"], echo_delay=0.3) as srv:
        _score_labels(srv.url, notes, scoring="echo")
        bodies = [r.body or {} for r in srv.requests]
    assert not any(b.get("prompt") == COST_PROMPT for b in bodies)  # no cost probe
    assert [b.get("echo") for b in bodies] == [True, True, True] and notes == []


def _propose_under_grammar(url: str, notes: list[str], grammar: str = "auto") -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        backend = OpenAIBackend("fake-model", url, notify=notes.append, grammar=grammar)
        try:
            await backend.complete("Input: 4 9 10 13\n", GenParams(n=1, grammar='root ::= "1 + 1 = 2"\n'))
            return backend  # type: ignore[return-value]
        finally:
            await backend.close()

    asyncio.run(go())
    return {}


@pytest.mark.parametrize(("delay", "forced", "sent"), [(0.0, False, True), (0.5, False, False), (0.5, True, True)])
def test_a_grammar_decoded_too_slowly_is_dropped_unless_forced(delay: float, forced: bool, sent: bool) -> None:
    notes: list[str] = []
    with FakeOpenAIServer(["ok"], grammar=True, grammar_delay=delay, delay=0.0) as srv:
        _propose_under_grammar(srv.url, notes, "on" if forced else "auto")
        last = srv.requests[-1].body or {}
    assert ("grammar" in last) == sent
    slow_notes = [n for n in notes if "slower per token" in n]
    assert len(slow_notes) == (1 if delay and not forced else 0)
    if slow_notes:
        assert "--grammar on keeps the grammar" in slow_notes[0] and "the gate checks every thought" in slow_notes[0]
