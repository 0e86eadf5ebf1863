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

from solver.lm.adapters import Adapter, AdapterError, read_adapter, resolve_adapter, trained_for
from solver.lm.base import LMError
from solver.lm.client import LMClient
from solver.run import SearchSettings, Settings, solve
from solver.searches import get_search
from solver.settings import ModelSettings
from solver.tools.bench import search_settings, split_adapter, split_search, with_adapters
from solver.tools.cli import UsageError, main
from solver.trace import Trace
from tasks.game24.cli import SHIPPED_ADAPTER
from tasks.game24.task import Game24
from tests.fakes import ScriptedBackend


def _adapter_files(tmp_path: Path, manifest: dict[str, Any] | None, body: bytes | None = None,
                   name: str = "mine") -> Path:
    """An adapter file (the shipped adapter's bytes unless ``body``) with ``manifest`` beside it."""
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(SHIPPED_ADAPTER.read_bytes() if body is None else body)
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
    (None, None, "no manifest"),
    ({"trained_for": ["value"]}, b"NOTGGUF", "does not start with GGUF"),
    ({"trained_for": ["value"]}, b"GGUF" + bytes(60), "GGUF version 0"),
    ({"trained_for": ["everything"]}, None, "trained_for"),
    ({"trained_for": "value"}, None, "trained_for"),
    ({"trained_for": [["value"]]}, None, "trained_for"),
    ({"trained_for": ["value"], "task": 24}, None, "task must be"),
    ({"trained_for": ["value"], "base_model": {"sha256": 1}}, None, "base_model.sha256"),
    ({"trained_for": ["value"], "sha256": "00" * 32}, None, "does not match"),
    ([1, 2], None, "not readable"),
])
def test_a_bad_adapter_is_one_line_error(tmp_path: Path, manifest: Any, body: bytes | None, says: str) -> None:
    path = _adapter_files(tmp_path, manifest, body, name="bad")
    with pytest.raises(AdapterError, match=says) as err:
        read_adapter(path)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, LMError) and isinstance(err.value, ValueError)  # exit 2 on the command line


def test_a_missing_adapter_file(tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match="no such adapter"):
        read_adapter(tmp_path / "nothing.gguf")
    (tmp_path / "dir.gguf").mkdir()
    with pytest.raises(AdapterError, match="is a directory"):
        read_adapter(tmp_path / "dir.gguf")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
def test_an_unreadable_adapter_file() -> None:
    """/proc/self/mem is a file whose first bytes cannot be read (EIO), even for root."""
    with pytest.raises(AdapterError, match="cannot be read") as err:
        read_adapter("/proc/self/mem")
    assert "\n" not in str(err.value)


def test_resolve(tmp_path: Path) -> None:
    shipped = (SHIPPED_ADAPTER,)
    assert resolve_adapter("off", "game24", default_model=True, shipped=shipped) is None
    assert resolve_adapter("auto", "no-such-task", default_model=True) is None  # a task that ships none
    # the task's shipped adapter: auto uses it with the default model only
    a = resolve_adapter("auto", "game24", default_model=True, shipped=shipped)
    assert a is not None and a.path == SHIPPED_ADAPTER and read_adapter(SHIPPED_ADAPTER).default
    assert resolve_adapter("auto", "game24", default_model=False, shipped=shipped) is None
    # auto takes the first shipped adapter whose manifest makes it the default
    plain = _adapter_files(tmp_path, {"task": "game24", "trained_for": ["value"]}, name="plain")
    assert resolve_adapter("auto", "game24", default_model=True, shipped=(plain,)) is None
    b = resolve_adapter("auto", "game24", default_model=True, shipped=(plain, SHIPPED_ADAPTER))
    assert b is not None and b.path == SHIPPED_ADAPTER
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
    s = Settings(SearchSettings(method=method, generator=generator, evaluator=evaluator,
                                options=get_search(method).options_from({"breadth": 2})),
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
    """A server runs an adapter by request (tests/test_llama_server_binary.py): the file must exist,
    with its manifest, before anything is sent (port 9 answers nothing)."""
    code = main(["solve", "game24", "4 9 10 13", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--adapter", "some.gguf"])
    err = capsys.readouterr().err
    assert code == 2 and "no such adapter file" in err and err.count("\n") == 1


@pytest.mark.parametrize("name, says", [("none.gguf", "no such adapter file"), ("dir.gguf", "is a directory"),
                                        ("cut.gguf", "not a LoRA adapter llama.cpp can load"),
                                        ("/proc/self/mem", "cannot be read")])
def test_a_bad_adapter_path_is_the_users_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str,
                                               says: str) -> None:
    """Exit 2 and one line (the user named the file), not exit 3 (a fault of the program or model)."""
    if name.startswith("/proc") and not Path(name).exists():
        pytest.skip("needs Linux's /proc/self/mem")
    (tmp_path / "dir.gguf").mkdir()
    _adapter_files(tmp_path, {"trained_for": ["value"]}, SHIPPED_ADAPTER.read_bytes()[:1024], name="cut")
    code = main(["solve", "game24", "4 9 10 13", "--adapter", str(tmp_path / name)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1 and err.startswith("tot: error:"), err


def test_an_adapter_for_another_base_model_is_refused_before_loading() -> None:
    from solver.lm.local import LocalBackend

    other = Adapter(Path("x.gguf"), "cd" * 32, "game24", frozenset({"value"}), "00" * 32)
    with pytest.raises(AdapterError, match="trained on another model"):
        LocalBackend(adapter=other)
    with pytest.raises(AdapterError, match="trained on another model"):
        LocalBackend(adapter=Adapter(Path("x.gguf"), "cd" * 32, "game24", frozenset({"value"}), None))


@pytest.mark.parametrize("adapters", [None, "off,{path}"])
def test_bench_refuses_a_cut_adapter_before_it_writes_anything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str],
                                                               adapters: str | None) -> None:
    """A cut adapter file is one line and exit 2 before the results folder is made or a worker
    starts (with --jobs 2 every pair was an error row, and the bench exited 0)."""
    path = _adapter_files(tmp_path, {"trained_for": ["value"], "task": "game24"},
                          SHIPPED_ADAPTER.read_bytes()[:1000])
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "game24", "--range", "901-902", "--methods", "tot-bfs:enumerate:likelihood", "--jobs", "2",
            "--out", "out"]
    argv += ["--adapter", str(path)] if adapters is None else ["--adapters", adapters.format(path=path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is not a LoRA adapter llama.cpp can load" in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
