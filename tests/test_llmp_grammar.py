"""LLM+P under the problem grammar (two calls per attempt) and the context check before any call,
with scripted models; the embedded model's context window read from its GGUF header."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import pytest

from solver.lm.base import GenParams, LMError
from solver.lm.client import LMClient
from solver.lm.local import DEFAULT_CONTEXT, context_setting, model_context
from solver.tools.cli import main
from tasks.planning.blocksworld import DOMAIN, problem
from tasks.planning.llmp import Inputs, run_llmp
from tests import gbnf_sampler as ref
from tests.fakes import ScriptedBackend

TRUTH = problem(4, 2, name="p01")
HEAD, BODY = TRUTH[: TRUTH.index("(:init")].rstrip(), TRUTH[TRUTH.index("(:init"):]


def _inputs(domain: str = DOMAIN) -> Inputs:
    return Inputs(domain, "Blocks.", "Four blocks.", None, TRUTH)


def _staged(answers: dict[str, list[str]]) -> ScriptedBackend:
    """Answers the object-list call and the body call from separate scripts (by the grammar asked)."""
    def respond(prompt: str, params: GenParams, i: int) -> str:
        stage = "plain" if params.grammar is None else "head" if "(:objects" in params.grammar else "body"
        return answers[stage].pop(0)
    return ScriptedBackend(respond)


def test_two_calls_the_second_continues_the_models_own_object_list_under_its_grammar() -> None:
    backend = _staged({"head": [HEAD], "body": [" " + BODY.strip()]})
    out = asyncio.run(run_llmp(_inputs(), LMClient(backend)))
    assert out.grammar == "on" and out.accepted and out.solved and out.attempts == 1
    (p1, g1), (p2, g2) = backend.requests
    assert g1.grammar is not None and g2.grammar is not None and p2 == p1 + HEAD
    # the model's text derives from each stage's grammar (read by the tests' own GBNF reader)
    assert ref.parse(g1.grammar).matches(HEAD)
    assert ref.parse(g2.grammar).matches(" " + BODY.strip())
    assert '"b4"' in g2.grammar and '"b5"' not in g2.grammar  # only the objects the model declared


def test_an_object_declared_twice_is_refused_before_the_body_and_repaired() -> None:
    twice = HEAD.replace("(:objects", "(:objects b1")
    backend = _staged({"head": [twice, HEAD], "body": [" " + BODY.strip()]})
    out = asyncio.run(run_llmp(_inputs(), LMClient(backend)))
    assert out.solved and out.attempts == 2 and "declared twice" in out.refusals[0]
    assert len(backend.requests) == 3 and "declared twice" in backend.requests[1][0]


def test_grammar_off_and_an_unreadable_domain_write_unconstrained_in_one_call() -> None:
    backend = _staged({"plain": [TRUTH]})
    out = asyncio.run(run_llmp(_inputs(), LMClient(backend), grammar=False))
    assert out.solved and out.grammar == "off" and len(backend.requests) == 1
    odd = DOMAIN.replace("(:action", "(:action odd :parameters (?x) :effect (when (clear ?x) (clear ?x)))\n(:action", 1)
    backend = _staged({"plain": ["no pddl"] * 3})
    out = asyncio.run(run_llmp(_inputs(odd), LMClient(backend)))
    assert out.grammar.startswith("no problem grammar") and "\n" not in out.grammar
    assert len(backend.requests) == 3 and not out.accepted


class Counting(ScriptedBackend):
    """A scripted model with a context window, like the embedded one."""

    n_ctx = 1500
    trained_context = 32768

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 1


def test_a_run_that_may_not_fit_the_context_is_refused_before_any_call() -> None:
    backend = Counting(lambda p, g, i: TRUTH)
    with pytest.raises(ValueError) as e:
        asyncio.run(run_llmp(_inputs(), LMClient(backend), repairs=2))
    msg = str(e.value)
    assert backend.requests == [] and "\n" not in msg and "1500" in msg and "32768" in msg
    backend.n_ctx = 4000  # 2 repairs fit now: prompt + 3 answers + 2 repair requests
    assert asyncio.run(run_llmp(_inputs(), LMClient(backend), repairs=2, grammar=False)).solved


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "p01.nl").write_text("Four blocks.")
    (tmp_path / "p01.pddl").write_text(TRUTH)
    backend = Counting(lambda p, g, i: TRUTH)
    monkeypatch.setattr("solver.run.make_backend", lambda s: backend)
    code = main(["solve", "planning", "--domain", str(tmp_path / "domain.pddl"), "--nl", str(tmp_path / "p01.nl"),
                 "--method", "llmp", "--no-example"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("tot: error: LLM+P may need") and err.count("\n") == 1
    assert backend.requests == []


def _gguf(path: Path, kvs: list[tuple[str, int, bytes]]) -> None:
    """A GGUF header written here byte by byte (no tensors): magic, version, counts, key/values."""
    def s(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()
    body = b"".join(s(k) + struct.pack("<I", t) + v for k, t, v in kvs)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + body)


def test_the_context_length_comes_from_the_gguf_header(tmp_path: Path) -> None:
    f = tmp_path / "m.gguf"
    tokens = struct.pack("<IQ", 8, 2) + struct.pack("<Q", 1) + b"a" + struct.pack("<Q", 2) + b"bc"
    _gguf(f, [("general.architecture", 8, struct.pack("<Q", 6) + b"gemma3"),
              ("tokenizer.ggml.tokens", 9, tokens), ("general.file_type", 4, struct.pack("<I", 15)),
              ("gemma3.context_length", 4, struct.pack("<I", 32768))])
    assert model_context(f) == 32768
    f.write_bytes(f.read_bytes()[:-3])  # cut short
    assert model_context(f) is None
    _gguf(f, [("general.architecture", 8, struct.pack("<Q", 5) + b"llama"), ("gemma3.context_length", 4,
                                                                             struct.pack("<I", 99))])
    assert model_context(f) is None  # another architecture's key is not this model's
    (tmp_path / "x.gguf").write_bytes(b"not gguf")
    assert model_context(tmp_path / "x.gguf") is None


def test_the_context_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOT_CONTEXT", raising=False)
    assert context_setting() == DEFAULT_CONTEXT == 8192
    monkeypatch.setenv("TOT_CONTEXT", "4096")
    assert context_setting() == 4096 and context_setting(1024) == 1024
    for bad in ("abc", "-5", "8"):
        monkeypatch.setenv("TOT_CONTEXT", bad)
        with pytest.raises(LMError, match="TOT_CONTEXT"):
            context_setting()


def test_the_threads_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from solver.lm.local import _env_threads

    monkeypatch.delenv("TOT_THREADS", raising=False)
    assert _env_threads() is None
    monkeypatch.setenv("TOT_THREADS", " 3 ")
    assert _env_threads() == 3
    for bad in ("abc", "0", "-2", "1234567", "\u0663"):  # the last: an Arabic-Indic three, a digit but not ASCII
        monkeypatch.setenv("TOT_THREADS", bad)
        with pytest.raises(LMError, match="TOT_THREADS must be a positive whole number"):
            _env_threads()


@pytest.mark.model
def test_the_embedded_model_reads_its_window_and_follows_the_object_grammar(monkeypatch: pytest.MonkeyPatch) -> None:
    from solver.lm.local import LocalBackend, model_path
    from tasks.planning.problem_grammar import domain_shape, objects_grammar

    monkeypatch.delenv("TOT_CONTEXT", raising=False)
    assert model_context(model_path()) == 32768
    backend = LocalBackend(threads=1)
    assert backend.n_ctx == 8192 and LocalBackend(threads=1, context=40000, check=False).n_ctx == 32768
    grammar = objects_grammar(domain_shape(DOMAIN))
    out = asyncio.run(backend.complete("The problem PDDL file:\n", GenParams(max_tokens=120, temperature=0.0,
                                                                             grammar=grammar)))
    text = out.texts[0]
    assert text.startswith("(define (problem")
    assert ref.parse(grammar).matches(text) or out.completion_tokens == 120  # finished, or cut by the limit
    with pytest.raises(LMError, match=r"over the context window of 8192 tokens \(the model's own 32768"):
        asyncio.run(backend.complete("word " * 9000, GenParams(max_tokens=10)))
    asyncio.run(backend.close())
