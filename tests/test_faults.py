"""Injected server faults: a fake OpenAI-compatible server on 127.0.0.1 answers slowly, times out,
rate-limits, fails, sends garbage or drops the connection. Transient faults are retried (a bounded
number of times); a call that still fails is a recorded failed call, and the run goes on."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from solver.budget import Budget, Usage
from solver.lm.base import GenParams, LMError
from solver.lm.client import LMClient
from solver.lm.openai_backend import OpenAIBackend
from solver.run import ModelSettings, SearchSettings, Settings, make_client, solve
from solver.searches.tot import BfsOptions
from solver.tools.cli import main
from solver.trace import Trace
from tasks.game24 import Game24
from tests.fake_server import FakeOpenAIServer

PUZZLE = "4 9 10 13"


async def _complete(url: str, params: GenParams, retries: int = 2, timeout: float = 5.0) -> list[str]:
    backend = OpenAIBackend("fake-model", url, api_key="sk-test", timeout=timeout, max_retries=retries)
    try:
        return (await backend.complete("Input: 4 6\nPossible next steps:\n", params)).texts
    finally:
        await backend.close()


def complete(url: str, params: GenParams | None = None, **kw: Any) -> list[str]:
    return asyncio.run(_complete(url, params or GenParams(n=2), **kw))


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
@pytest.mark.parametrize("fault", ["429", "500", "drop"])
def test_transient_fault_is_retried_then_succeeds(fault: str, chat: bool) -> None:
    with FakeOpenAIServer([fault, "ok"]) as srv:
        texts = complete(srv.url, GenParams(n=2, chat=chat), retries=2)
        assert texts == ["4 * 6 = 24 (left: 24)"] * 2
        assert srv.modes_served() == [fault, "ok"]
        assert srv.requests[0].path == srv.requests[1].path


def test_a_timed_out_request_is_waited_for_not_resent() -> None:
    # The answer takes 1.5 s, the timeout is 1 s: the request is waited for up to 2 s (one retry's
    # worth), never sent a second time while the server still works on it.
    with FakeOpenAIServer(["slow"], delay=1.5) as srv:
        assert complete(srv.url, retries=1, timeout=1.0) == ["4 * 6 = 24 (left: 24)"] * 2
        assert srv.modes_served() == ["slow"]


def test_slow_answer_within_timeout_is_fine() -> None:
    with FakeOpenAIServer(["slow"], delay=0.2) as srv:
        assert complete(srv.url, retries=0, timeout=5.0) == ["4 * 6 = 24 (left: 24)"] * 2
        assert srv.modes_served() == ["slow"]


def test_retry_after_is_honoured() -> None:
    # Only the seconds header: the client must wait at least that long before retrying.
    with FakeOpenAIServer(["429", "ok"], retry_after="1", retry_after_ms=None) as srv:
        t0 = time.monotonic()
        assert complete(srv.url, retries=1)
        assert time.monotonic() - t0 >= 0.9
        assert srv.modes_served() == ["429", "ok"]


@pytest.mark.parametrize("fault", ["429", "500", "drop", "timeout"])
def test_persistent_fault_gives_up_after_bounded_retries(fault: str) -> None:
    with FakeOpenAIServer([fault], hang=5.0) as srv:
        with pytest.raises(LMError) as err:
            complete(srv.url, retries=1, timeout=0.5 if fault == "timeout" else 5.0)
        # the first try and one retry, no more; a timeout is waited for and never resent
        assert len(srv.requests) == (1 if fault == "timeout" else 2)
        assert str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
@pytest.mark.parametrize("fault", ["malformed", "wrongshape", "empty"])
def test_garbage_answer_is_an_lm_error_not_a_crash(fault: str, chat: bool) -> None:
    with FakeOpenAIServer([fault]) as srv:
        with pytest.raises(LMError) as err:
            complete(srv.url, GenParams(n=3, chat=chat), retries=2)
        # Garbage with status 200 is not retried; an empty answer asks for the missing samples once.
        assert 1 <= len(srv.requests) <= 1 + 3
        if fault != "empty":
            assert "malformed response" in str(err.value)


@pytest.mark.parametrize("fault", ["malformed", "wrongshape", "empty", "500"])
def test_scoring_garbage_is_an_lm_error(fault: str) -> None:
    async def go(url: str) -> None:
        backend = OpenAIBackend("m", url, api_key="sk-test", max_retries=0)
        try:
            await backend.score("Input: 4 6\n", ["4 * 6 = 24\n", "6 - 4 = 2\n"])
        finally:
            await backend.close()

    with FakeOpenAIServer([fault]) as srv:
        with pytest.raises(LMError):
            asyncio.run(go(srv.url))


def test_server_that_ignores_n_is_asked_for_the_missing_samples() -> None:
    with FakeOpenAIServer(["one"]) as srv:
        assert complete(srv.url, GenParams(n=3)) == ["4 * 6 = 24 (left: 24)"] * 3
        assert [r.body["n"] for r in srv.requests if r.body] == [3, 1, 1]
        assert sorted(r.body["seed"] for r in srv.requests[1:] if r.body) == [1, 2]


@pytest.mark.parametrize("fault", ["500", "malformed", "wrongshape", "empty", "drop"])
def test_client_records_a_failed_call_instead_of_raising(fault: str) -> None:
    async def go(url: str) -> tuple[list[str], Usage, list[dict[str, object]]]:
        backend = OpenAIBackend("m", url, api_key="sk-test", max_retries=1)
        client = LMClient(backend)
        events: list[dict[str, object]] = []
        model = client.session(on_event=events.append)
        try:
            return await model.complete("hi", GenParams(n=2), "propose"), model.usage, events
        finally:
            await client.close()

    with FakeOpenAIServer([fault]) as srv:
        texts, usage, events = asyncio.run(go(srv.url))
    assert texts == [] and usage.failed_calls == 1 and usage.calls == 1 and usage.backend_calls == 0
    assert [e["event"] for e in events] == ["lm_error"] and events[0]["purpose"] == "propose"


def _settings(url: str, **kw: Any) -> Settings:
    """Search fields in ``kw`` go to the search settings, the rest to the model's. Grammar off:
    these scripts say what the server answers request by request, and the grammar probe would
    take the first answers (the probe's own faults are tested in test_servers.py)."""
    search: dict[str, Any] = dict(generator="propose", evaluator="value", n_evaluate=1, options=BfsOptions(breadth=2))
    model = dict(backend="openai", model="fake-model", base_url=url, retries=1, timeout=5.0, grammar=False)
    budget = kw.pop("budget", Budget())
    for key, value in kw.items():
        (search if key in SearchSettings.__dataclass_fields__ else model)[key] = value
    return Settings(SearchSettings(**search), ModelSettings(**model), budget)


async def _solve(s: Settings, trace: Trace) -> Any:
    client = make_client(s)
    try:
        return await solve(Game24(), PUZZLE, s, client, trace)
    finally:
        if client is not None:
            await client.close()


def test_search_survives_a_failing_server_and_says_so() -> None:
    with FakeOpenAIServer(["500"]) as srv:
        trace = Trace()
        res = asyncio.run(_solve(_settings(srv.url), trace))
        assert res.answer is None and not res.verified and res.stopped_by is None
        assert res.usage.failed_calls == 1 and res.usage.backend_calls == 0
        assert len(srv.requests) == 2  # one call, retried once
        assert trace.of("lm_error") and trace.of("end")


def test_search_goes_on_after_a_failed_call() -> None:
    # Two legal first steps are proposed; one of the two value calls gets garbage (a recorded
    # failure, score 0) and the search still expands both children at the next depth.
    steps = "13 - 9 = 4 (left: 4 4 10)\n13 - 10 = 3 (left: 3 4 9)"
    with FakeOpenAIServer(["ok", "malformed", "ok"], text=steps) as srv:
        trace = Trace()
        res = asyncio.run(_solve(_settings(srv.url, concurrency=1), trace))
        assert res.usage.failed_calls == 1 and len(trace.of("lm_error")) == 1
        assert "malformed response" in str(trace.of("lm_error")[0]["error"])
        assert res.expanded == 3 and res.usage.backend_calls == len(srv.requests) - 1
        assert [e["node"] for e in trace.of("expand")][1:] == [e["node"] for e in trace.of("keep")]


def test_seconds_budget_cuts_off_a_hanging_call() -> None:
    with FakeOpenAIServer(["timeout"], hang=30.0) as srv:
        trace = Trace()
        t0 = time.monotonic()
        res = asyncio.run(_solve(_settings(srv.url, timeout=60.0, budget=Budget(seconds=1.0)), trace))
        assert time.monotonic() - t0 < 15.0  # the server would hang for 30 s, the client wait for 60
        assert res.stopped_by == "seconds" and res.usage.failed_calls == 1
        assert "seconds budget" in str(trace.of("lm_error")[0]["error"])


def test_cli_run_against_a_failing_server_exits_0_and_reports_failed_calls(capsys: Any) -> None:
    with FakeOpenAIServer(["500"]) as srv:
        code = main(["solve", "game24", PUZZLE, "--base-url", srv.url, "--model", "fake-model",
                     "--generator", "propose", "--evaluator", "value", "--retries", "0", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    result = json.loads(out.out.strip().splitlines()[-1])
    assert result["verified"] is False and result["failed_calls"] >= 1
