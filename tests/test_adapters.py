"""LoRA adapters of the embedded model (solver/lm/adapters.py) without loading a model: reading an
adapter and its manifest, what ``--adapter`` resolves to, the short prompts a trained adapter
gets (and only for the kinds it was trained on), the adapter named in traces and ``--json``, and
``tot bench --adapters`` labels. The adapter with the real model: tests/test_train.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from solver.lm.adapters import SHIPPED, Adapter, read_adapter, resolve_adapter, trained_for
from solver.lm.base import LMError
from solver.lm.client import LMClient
from solver.run import SearchSettings, Settings, solve
from solver.settings import ModelSettings
from solver.tools.bench import search_settings, split_adapter, split_search, with_adapters
from solver.tools.cli import UsageError, main
from solver.trace import Trace
from tasks.game24.task import Game24
from tests.fakes import ScriptedBackend


def _adapter_files(tmp_path: Path, manifest: dict[str, Any] | None, body: bytes = b"GGUF" + bytes(60),
                   name: str = "mine") -> Path:
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(body)
    if manifest is not None:
        path.with_suffix(".json").write_text(json.dumps(manifest), encoding="utf-8")
    return path


def test_read_adapter_reads_the_manifest_and_hashes_the_file(tmp_path: Path) -> None:
    import hashlib

    path = _adapter_files(tmp_path, {"task": "game24", "trained_for": ["value"],
                                     "base_model": {"sha256": "ab" * 32}})
    a = read_adapter(path)
    assert a.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert a.trained_for == frozenset({"value"}) and a.task == "game24" and a.base_sha256 == "ab" * 32
    assert a.describe() == {"file": "mine.gguf", "sha256": a.sha256}
    assert a.tag == f"mine@{a.sha256[:12]}"
    assert not a.default


@pytest.mark.parametrize("manifest, body, says", [
    (None, b"GGUF" + bytes(8), "no manifest"),
    ({"trained_for": ["value"]}, b"NOTGGUF", "not a GGUF"),
    ({"trained_for": ["everything"]}, b"GGUF", "trained_for"),
    ({"trained_for": "value"}, b"GGUF", "trained_for"),
    ({"trained_for": ["value"], "sha256": "00" * 32}, b"GGUF", "does not match"),
    ([1, 2], b"GGUF", "not readable"),
])
def test_a_bad_adapter_is_one_line_error(tmp_path: Path, manifest: Any, body: bytes, says: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(body)
    if manifest is not None:
        path.with_suffix(".json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(LMError, match=says) as err:
        read_adapter(path)
    assert "\n" not in str(err.value)


def test_a_missing_adapter_file(tmp_path: Path) -> None:
    with pytest.raises(LMError, match="no such adapter"):
        read_adapter(tmp_path / "nothing.gguf")


def test_resolve(tmp_path: Path) -> None:
    assert resolve_adapter("off", "game24", default_model=True) is None
    assert resolve_adapter("auto", "no-such-task", default_model=True) is None
    shipped = SHIPPED / "game24.gguf"
    if shipped.is_file():  # the shipped adapter: auto uses it with the default model only
        a = resolve_adapter("auto", "game24", default_model=True)
        assert (a is not None) == read_adapter(shipped).default
        assert resolve_adapter("auto", "game24", default_model=False) is None
    path = _adapter_files(tmp_path, {"task": "sudoku", "trained_for": ["value"]})
    with pytest.raises(LMError, match="trained for sudoku, not game24"):
        resolve_adapter(str(path), "game24", default_model=True)
    assert resolve_adapter(str(path), "sudoku", default_model=True) is not None


class AdaptedBackend(ScriptedBackend):
    """A scripted model that says it runs an adapter trained on ``kinds``."""

    def __init__(self, kinds: set[str], **kw: Any) -> None:
        super().__init__(**kw)
        self.adapter: Adapter | None = Adapter(Path("x.gguf"), "cd" * 32, "game24", frozenset(kinds), None)


def _run(backend: ScriptedBackend, generator: str, evaluator: str, method: str = "tot-bfs") -> Trace:
    trace = Trace()
    s = Settings(SearchSettings(method=method, generator=generator, evaluator=evaluator, options={"breadth": 2}),
                 ModelSettings())
    asyncio.run(solve(Game24(), "4 9 10 13", s, LMClient(backend, None, "off"), trace))
    return trace


def test_an_adapter_trained_on_values_gets_the_short_value_prompt_only() -> None:
    backend = AdaptedBackend({"value"}, scorer=lambda p, c: -1.0 if "sure" in c else -2.0,
                             respond=lambda p, g, i: "1 + 2 = 3 (left: 3 ...)")
    assert trained_for(backend, "value") and not trained_for(backend, "step")
    trace = _run(backend, "enumerate-rank", "likelihood")
    prompts = [p for p, _ in backend.score_requests]
    values = [p for p in prompts if p.endswith("Can they reach 24? Answer:")]
    assert values and all(p.startswith("Numbers: ") and "Judgement" not in p for p in values)
    ranks = [p for p in prompts if p not in values]
    assert ranks and all("Possible next steps:" in p for p in ranks)  # steps: not trained, few-shot prompt
    start = next(e for e in trace.events if e["event"] == "start")
    assert start["adapter"] == {"file": "x.gguf", "sha256": "cd" * 32}
    assert "+" not in start["model"]  # the scripted backend's own name; LocalBackend adds the tag


def test_an_adapter_trained_on_steps_gets_the_short_step_prompt() -> None:
    backend = AdaptedBackend({"step"}, respond=lambda p, g, i: "13 - 9 = 4 (left: 4 4 10)",
                             scorer=lambda p, c: -1.0)
    _run(backend, "propose", "likelihood")
    proposes = [p for p, _ in backend.requests]
    assert proposes and all(p.endswith("Next step:\n") and "Possible next steps" not in p for p in proposes)
    values = [p for p, _ in backend.score_requests]
    assert values and all("Judgement:" in p for p in values)  # not trained on values: few-shot


def test_without_an_adapter_the_few_shot_prompts_and_no_adapter_field() -> None:
    backend = ScriptedBackend(scorer=lambda p, c: -1.0)
    trace = _run(backend, "enumerate", "likelihood", method="tot-complete")
    assert all("Judgement:" in p for p, _ in backend.score_requests)
    assert "adapter" not in next(e for e in trace.events if e["event"] == "start")


def test_bench_adapter_labels() -> None:
    labels = with_adapters(["tot-complete:enumerate:likelihood", "tot-bfs@propose"], "auto,off")
    assert labels == ["tot-complete:enumerate:likelihood[adapter=auto]", "tot-complete:enumerate:likelihood"
                      "[adapter=off]", "tot-bfs@propose[adapter=auto]", "tot-bfs@propose[adapter=off]"]
    assert with_adapters(["tot-bfs"], None) == ["tot-bfs"]
    assert split_adapter("tot-bfs@propose[adapter=/a/b.gguf]") == ("tot-bfs@propose", "/a/b.gguf")
    assert split_search("tot-complete:enumerate:likelihood[adapter=off]") == (
        "tot-complete", "enumerate", "likelihood", True)
    s = search_settings(Settings(), "tot-bfs:propose:value[adapter=off]")
    assert s.model.adapter == "off" and s.search.generator == "propose" and s.search.evaluator == "value"
    assert search_settings(Settings(), "tot-bfs").model.adapter == "auto"
    for bad in ("auto,auto", ",", "a]b"):
        with pytest.raises(UsageError):
            with_adapters(["tot-bfs"], bad)


def test_an_adapter_path_with_a_server_is_read_before_any_request(capsys: pytest.CaptureFixture[str]) -> None:
    """A server runs an adapter by request (tests/test_llama_cpp_server.py): the file must exist,
    with its manifest, before anything is sent (port 9 answers nothing)."""
    code = main(["solve", "game24", "4 9 10 13", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--adapter", "some.gguf"])
    err = capsys.readouterr().err
    assert code == 3 and "no such adapter file" in err and err.count("\n") == 1


def test_an_unknown_adapter_file_is_a_model_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["solve", "game24", "4 9 10 13", "--adapter", str(tmp_path / "none.gguf")])
    err = capsys.readouterr().err
    assert code == 3 and "no such adapter file" in err and err.count("\n") == 1


def test_an_adapter_for_another_base_model_is_refused_before_loading() -> None:
    from solver.lm.local import LocalBackend

    other = Adapter(Path("x.gguf"), "cd" * 32, "game24", frozenset({"value"}), "00" * 32)
    with pytest.raises(LMError, match="trained on another model"):
        LocalBackend(adapter=other)
    with pytest.raises(LMError, match="trained on another model"):
        LocalBackend(adapter=Adapter(Path("x.gguf"), "cd" * 32, "game24", frozenset({"value"}), None))
