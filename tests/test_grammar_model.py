"""Constrained decoding with the real embedded model: what it writes under a grammar follows the
grammar (checked with the independent GBNF reader), with either engine; a bad grammar is a clear
error, not a crash; and the propose step on 4 9 10 13 has none of its thoughts refused."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Iterator

import pytest

from solver.generators import LINE_TOKENS, thought_grammar
from solver.grammar import lines
from solver.lm.base import GenParams, LMError
from solver.task_capabilities import ProposePrompts, find
from tasks.game24 import Game24
from tests.gbnf_reference import Grammar

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    from solver.lm.local import LocalBackend

    b = LocalBackend()
    yield b
    asyncio.run(b.close())


@pytest.mark.parametrize("engine", ["llama", "llguidance"])
def test_the_embedded_model_writes_what_the_grammar_allows(backend: Any, engine: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOT_GRAMMAR_ENGINE", engine)
    backend._constrainer = None  # pick the engine afresh
    task = Game24()
    state = task.root("4 9 10 13")
    text = lines(thought_grammar(task, state) or "", 60 // LINE_TOKENS)
    got = asyncio.run(backend.complete(find(task, ProposePrompts).propose_prompt(state, False),
                                       GenParams(n=2, temperature=0.7, max_tokens=60, seed=5, grammar=text)))
    assert backend._constrainer.engine == engine
    assert len(got.texts) == 2
    for answer in got.texts:
        assert Grammar(text).matches(answer), answer
    free = asyncio.run(backend.complete(find(task, ProposePrompts).propose_prompt(state, False),
                                        GenParams(n=1, temperature=0.7, max_tokens=60, seed=5)))
    assert not Grammar(text).matches(free.texts[0])  # unconstrained, it wanders off (as measured)


def test_a_grammar_llama_cpp_cannot_parse_is_an_lm_error(backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOT_GRAMMAR_ENGINE", "llama")
    backend._constrainer = None
    with pytest.raises(LMError, match="grammar does not parse"):
        asyncio.run(backend.complete("x", GenParams(max_tokens=4, grammar='root ::= "a')))


def test_propose_on_4_9_10_13_has_no_thought_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from solver.tools.cli import main

    os.environ.setdefault("TOT_THREADS", "1")
    code = main(["solve", "game24", "4 9 10 13", "--method", "tot-bfs", "--generator", "propose",
                 "--evaluator", "value", "--depth", "1", "--breadth", "1"])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "rejected by the gate 0" in out and "thoughts proposed 0," not in out
