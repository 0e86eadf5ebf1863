"""Per-sample log-probabilities: forwarded to servers, summed, recorded and replayed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from solver.lm.base import Completion, GenParams, LMError
from solver.lm.cache import Cache
from solver.lm.client import LMClient
from solver.lm.openai_backend import OpenAIBackend
from tests.fake_server import FakeOpenAIServer
from tests.fakes import ScriptedBackend


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
@pytest.mark.parametrize("modes", [["ok"], ["one"]], ids=["honours-n", "ignores-n"])
def test_server_logprobs_are_summed_per_sample(chat: bool, modes: list[str]) -> None:
    async def go(url: str) -> tuple[list[tuple[str, float | None]], list[str]]:
        client = LMClient(OpenAIBackend("fake", url, max_retries=0))
        try:
            model = client.session()
            scored = await model.complete_scored("Input: 4 6\n", GenParams(n=2, chat=chat))
            plain = await model.complete("Input: 4 6\n", GenParams(n=2, chat=chat))
        finally:
            await client.close()
        return scored, plain

    with FakeOpenAIServer(modes * 3) as srv:
        scored, plain = asyncio.run(go(srv.url))
    assert [lp for _, lp in scored] == [-0.75, -0.75]
    assert [t for t, _ in scored] == plain


class WithLogprobs(ScriptedBackend):
    async def complete(self, prompt: str, params: GenParams) -> Completion:
        comp = await super().complete(prompt, params)
        comp.logprobs = [-float(i + 1) for i in range(params.n)] if params.logprobs is not None else []
        return comp


def test_logprobs_are_recorded_and_replayed(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    live = WithLogprobs(lambda p, g, i: f"text{i}")
    rec = LMClient(live, Cache(db), "record")
    first = asyncio.run(rec.session().complete_scored("hello", GenParams(n=3)))
    assert first == [("text0", -1.0), ("text1", -2.0), ("text2", -3.0)]
    asyncio.run(rec.close())

    class Dead(WithLogprobs):
        async def complete(self, prompt: str, params: GenParams) -> Completion:
            raise LMError("must not be called")

    dead = Dead()
    dead.name, dead.model = live.name, live.model
    rep = LMClient(dead, Cache(db), "replay")
    assert asyncio.run(rep.session().complete_scored("hello", GenParams(n=3))) == first


def test_backend_without_logprobs_gives_none() -> None:
    client = LMClient(ScriptedBackend(lambda p, g, i: "x"))
    assert asyncio.run(client.session().complete_scored("hi", GenParams(n=2))) == [("x", None), ("x", None)]
