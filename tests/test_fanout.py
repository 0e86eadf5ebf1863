"""Requests that one call fans out into (samples a server ignored ``n`` for, echo scores) go out
together, and never more at once than the client's concurrency. No server, no timing: the
openai client's ``create`` is replaced by a stub that counts requests in flight."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.lm.openai_backend import OpenAIBackend


class Stub:
    """Answers one choice whatever ``n`` asks (as servers that ignore n), naming the seed."""

    def __init__(self) -> None:
        self.in_flight = self.peak = self.requests = 0
        self.seeds: list[int | None] = []

    async def create(self, **kw: Any) -> Any:
        self.requests += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.seeds.append(kw.get("seed"))
        await asyncio.sleep(0.01)  # let the others start: the peak is what is checked, not time
        self.in_flight -= 1
        if kw.get("echo"):
            prompt = kw["prompt"]
            lp = SimpleNamespace(text_offset=list(range(len(prompt))), token_logprobs=[-1.0] * len(prompt))
            return SimpleNamespace(choices=[SimpleNamespace(logprobs=lp)], usage=SimpleNamespace(prompt_tokens=1))
        return SimpleNamespace(choices=[SimpleNamespace(text=f"seed {kw.get('seed')}")],
                               usage=SimpleNamespace(prompt_tokens=1, completion_tokens=2))


def _client(concurrency: int) -> tuple[LMClient, Stub]:
    # probe_parallel=False: the client's concurrency is given (as --concurrency N does), so no
    # request of the server-capacity probe is counted with the fan-out's
    backend = OpenAIBackend("stub", "http://127.0.0.1:9/v1", api_key="sk-test", probe_parallel=False)
    stub = Stub()
    backend._client.completions.create = stub.create  # type: ignore[method-assign]
    return LMClient(backend, concurrency=concurrency), stub


@pytest.mark.parametrize("concurrency", [1, 3, 16])
def test_samples_a_server_ignored_n_for_fan_out_within_the_bound(concurrency: int) -> None:
    async def go() -> tuple[list[str], list[str], Stub]:
        client, stub = _client(concurrency)
        model = client.session()
        first = await model.complete("p", GenParams(n=8, seed=10))
        second = await model.complete("q", GenParams(n=8, seed=10))  # now known to ignore n
        await client.close()
        return first, second, stub

    first, second, stub = asyncio.run(go())
    want = [f"seed {10 + i}" for i in range(8)]
    assert first == want and second == want  # sample i has seed + i, in order
    assert stub.requests == 16
    assert stub.peak == min(concurrency, 8)


@pytest.mark.parametrize("concurrency", [1, 2, 8])
def test_echo_scores_go_out_together_within_the_bound(concurrency: int) -> None:
    async def go() -> tuple[list[float] | None, Stub]:
        client, stub = _client(concurrency)
        conts = [" a", " bb", " ccc", " dddd", " e"]
        scores = await client.session().score("prompt", conts)
        await client.close()
        return scores, stub

    scores, stub = asyncio.run(go())
    assert scores == [-2.0, -3.0, -4.0, -5.0, -2.0]  # one log-prob per character after the prompt
    assert stub.peak == min(concurrency, 5)
