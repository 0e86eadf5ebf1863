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


# ---- both forms servers send: legacy dicts and llama.cpp's content lists ------------------------

def test_first_top_reads_the_legacy_form_and_the_content_form_alike() -> None:
    from types import SimpleNamespace

    from solver.lm.logprobs import first_top, total_logprob

    legacy = {"tokens": [" sure", "\n"], "token_logprobs": [-0.25, -1.0],
              "top_logprobs": [{" sure": -0.25, " likely": -2.0}, {"\n": -1.0}]}
    content = {"content": [
        {"id": 7, "token": " sure", "bytes": [32], "logprob": -0.25,
         "top_logprobs": [{"id": 7, "token": " sure", "bytes": [32], "logprob": -0.25},
                          {"id": 9, "token": " likely", "bytes": [32], "logprob": -2.0},
                          {"id": 12, "token": " likely", "bytes": [32], "logprob": -5.0},  # prints alike
                          {"id": 13, "token": "", "bytes": [], "logprob": -6.0},
                          {"id": 14, "token": " x", "bytes": [32], "logprob": "nan?"}]},
        {"id": 3, "token": "\n", "bytes": [10], "logprob": -1.0, "top_logprobs": []}]}
    as_objects = SimpleNamespace(content=[SimpleNamespace(token=" sure", logprob=-0.25, top_logprobs=[
        SimpleNamespace(token=" sure", logprob=-0.25), SimpleNamespace(token=" likely", logprob=-2.0)])])
    want = {" sure": -0.25, " likely": -2.0}
    assert first_top(legacy) == first_top(content) == first_top(as_objects) == want
    assert total_logprob(legacy) == total_logprob(content) == -1.25
    for nothing in (None, {}, {"content": []}, {"top_logprobs": []}, {"content": [{"token": "a"}]},
                    {"top_logprobs": [None]}, {"content": "x"}, SimpleNamespace()):
        assert first_top(nothing) is None
    assert total_logprob({"content": [{"logprob": None}]}) is None


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_server_that_sends_the_content_form_scores_labels(stream: bool) -> None:
    """llama.cpp's own server answers /v1/completions' log-probabilities in the content form and
    has no echo: value labels are scored from its top alternatives, as from the legacy form."""
    async def go(url: str) -> tuple[list[float], str]:
        backend = OpenAIBackend("fake", url, max_retries=0)
        try:
            scores, _ = await backend.score("4 4 10\n", [" sure", " likely", " impossible"])
            return scores, await backend.scoring_method([" sure"])
        finally:
            await backend.close()

    with FakeOpenAIServer(logprobs_form="content", stream=stream, stream_usage=stream) as srv:
        scores, method = asyncio.run(go(srv.url))
    assert method == "top-logprobs" and scores == [-1.5, -2.0, -3.0]
