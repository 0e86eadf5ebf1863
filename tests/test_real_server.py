"""The OpenAI-compatible path against a real server: llama-cpp-python's own (the ``server`` extra),
started by the project's launcher ``python -m solver.lm.llama_cpp_python_server``, serving the embedded model
on 127.0.0.1 with one thread.

The server starts once for this file. Each test makes few, short requests (the whole file takes
about two minutes on two shared cores). What is checked comes from the server's answers and from
sympy, not from our own fake server: that the shapes the fake gives match these is the point.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("llama_cpp")
for _mod in ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"):
    pytest.importorskip(_mod, reason="llama-cpp-python's server extra is not installed")

from solver.lm import server_features  # noqa: E402
from solver.lm.base import GenParams  # noqa: E402
from solver.lm.openai_backend import OpenAIBackend  # noqa: E402
from solver.tools.cli import main  # noqa: E402

pytestmark = pytest.mark.model
MODEL = "gemma3-270m"  # the alias the launcher gives the embedded model (written here, not imported)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """llama-cpp-python's server on a free port of 127.0.0.1, once it answers ``/models``."""
    port = _free_port()
    threads = os.environ.get("TOT_THREADS", "1")
    # The project's launcher (docs/models.md), with no --model: the embedded model under its alias,
    # extra buffer types off (llama_cpp.server's default, on, crashes AMX CPUs on the first decode).
    cmd = [sys.executable, "-m", "solver.lm.llama_cpp_python_server", "--host", "127.0.0.1", "--port", str(port),
           "--n_threads", threads, "--n_threads_batch", threads, "--n_ctx", "2048"]
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as resp:  # noqa: S310 - 127.0.0.1
                if resp.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(proc)
            pytest.fail(f"llama.cpp server did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.5)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()  # it may still be generating for a timed-out test's abandoned request
    try:
        proc.wait(3)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc, url = _start(tmp_path_factory.mktemp("llama_server") / "server.log")
    try:
        server_features.forget()
        yield url
    finally:
        _stop(proc)


def _run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _is_24(puzzle: str, answer: str) -> bool:
    """An independent check of a final expression, written here: exactly the puzzle's numbers and
    value 24, by an ``ast`` walk over + - * / and integers with exact fractions (no eval)."""
    import ast

    used: list[int] = []

    def value(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            used.append(node.value)
            return Fraction(node.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = value(node.left), value(node.right)
            if isinstance(node.op, ast.Div):
                return a / b
            return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
        raise ValueError(ast.dump(node))

    try:
        total = value(ast.parse(answer.split("=")[0].strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError):
        return False
    return total == 24 and sorted(used) == sorted(int(x) for x in puzzle.split())


def test_models_reports_what_llama_cpp_supports(server: str, capsys: Any) -> None:
    code, out, err = _run(["models", "--base-url", server, "--json", "--timeout", "300"], capsys)
    assert code == 0, err
    info = json.loads(out)
    assert info["models"] == [MODEL] and info["model"] == MODEL
    caps = info["capabilities"]
    costs, grammar_cost = caps.pop("costs"), caps.pop("grammar_cost")
    # llama-cpp-python 0.3: chat with a template, no n (one choice per request), echo, top logprobs, seeds,
    # grammars, and one request at a time (measured: it holds a lock around the model).
    # Its streams list the same top log-probabilities and no usage; its tokenizer route counts the prompt.
    # Whether two requests with one seed give one sample is the CPU's: True on the earlier machines,
    # False on an AVX-512/AMX one (2026-12-05; the second request reuses the cached prompt and the
    # kernels round differently). The probe reports what its own two requests gave.
    assert isinstance(caps.pop("seed"), bool)
    assert caps == {"chat": True, "n": False, "echo": True, "top_logprobs": 20,
                    "stream_logprobs": "/extras/tokenize/count", "grammar": "grammar", "parallel": 1}
    # Echo builds log-probabilities over the whole 262,144-token vocabulary for each prompt token: loosely,
    # at least twice one top-logprobs request (measured about 20x on 2 shared cores; see docs/servers.md).
    assert costs["top-logprobs"] > 0 and (costs["echo"] is None or costs["echo"] > 2 * costs["top-logprobs"])
    assert info["scoring"] == {"labels": "top-logprobs", "texts": "echo"}
    assert set(grammar_cost) == {"plain", "grammar"} and all(v > 0 for v in grammar_cost.values())


def test_completions_n_stop_seed_and_chat(server: str) -> None:
    async def go() -> tuple[list[str], list[str], list[str], list[float | None]]:
        b = OpenAIBackend(MODEL, server, timeout=60, max_retries=1, notify=None)
        try:
            params = GenParams(n=3, temperature=1.0, max_tokens=12, stop=("\n",), seed=7)
            first = await b.complete("List three numbers:\n1.", params)
            again = await b.complete("List three numbers:\n1.", params)
            chat = await b.complete("Say the number four.", GenParams(n=1, max_tokens=8, chat=True, temperature=0))
            scored = await b.complete("2 + 2 =", GenParams(n=2, max_tokens=3, logprobs=0, seed=1))
            return first.texts, again.texts, chat.texts, scored.logprobs
        finally:
            await b.close()

    first, again, chat, logprobs = asyncio.run(go())
    assert len(first) == 3 and all("\n" not in t for t in first)  # n honoured by asking per sample; stop kept
    assert first == again  # seeds: sample i has seed 7 + i, the same each time
    assert len(chat) == 1 and isinstance(chat[0], str) and chat[0].strip()
    assert len(logprobs) == 2 and all(isinstance(x, float) and x <= 0 for x in logprobs)


def test_echo_and_top_logprobs_scoring_agree(server: str) -> None:
    # The two scoring implementations, on the same server and position: echo reads the prompt's
    # log-probabilities; top-logprobs reads the next token's alternatives. For a continuation that
    # is one listed token they must give the same number, up to the server's arithmetic: it computes
    # the echoed logits in a batch with the prompt (measured: -0.2017 vs -0.1943 for " "); an offset
    # or a token counted wrongly would be off by whole units.
    async def go() -> tuple[list[float], list[float], str, float, int, int]:
        echo = OpenAIBackend(MODEL, server, scoring="echo", notify=None)
        top = OpenAIBackend(MODEL, server, scoring="top-logprobs", notify=None)
        try:
            prompt = "Count: 1 2 3"
            resp = await top.request("t", top._client.completions.create, model=MODEL, prompt=prompt,
                                     max_tokens=1, logprobs=5, temperature=0.0)
            best, plain = max(resp.choices[0].logprobs.top_logprobs[0].items(), key=lambda kv: kv[1])
            a, _ = await echo.score(prompt, [best])
            b, tokens = await top.score(prompt, [best])  # streamed here (the probe found it so)
            return a, b, best, plain, tokens, resp.usage.prompt_tokens
        finally:
            await echo.close()
            await top.close()

    by_echo, by_top, token, plain, tokens, want = asyncio.run(go())
    assert token and by_echo[0] == pytest.approx(by_top[0], abs=0.05), token
    # Streamed, the same number as the plain answer's (up to the same arithmetic), and the prompt's
    # tokens as the plain answer counts them.
    assert by_top[0] == pytest.approx(plain, abs=0.05) and tokens == want


def test_solve_through_base_url_and_replay_without_the_server(server: str, tmp_path: Path, capsys: Any) -> None:
    cache, trace = tmp_path / "cache.sqlite", tmp_path / "trace.jsonl"
    puzzle = "4 6 1 1"
    argv = ["solve", "game24", puzzle, "--model", MODEL, "--generator", "propose", "--evaluator", "value",
            "--n-evaluate", "1", "--budget-calls", "6", "--cache", str(cache), "--json"]
    code, out, err = _run([*argv, "--base-url", server, "--trace", str(trace)], capsys)
    assert code == 0, err
    live = json.loads(out.strip().splitlines()[-1])
    assert live["failed_calls"] == 0 and live["calls"] >= 1 and live["completion_tokens"] > 0
    if live["verified"]:
        assert _is_24(puzzle, live["answer"])
    # Replay: a dead URL, nothing may be sent; the same result comes back from the recording.
    code, out, err = _run([*argv, "--base-url", "http://127.0.0.1:1/v1", "--cache-mode", "replay"], capsys)
    assert code == 0, err
    replayed = json.loads(out.strip().splitlines()[-1])
    for key in ("answer", "verified", "calls", "tokens", "proposed", "rejected", "stopped_by"):
        assert replayed[key] == live[key], key
    assert replayed["cache_hits"] == replayed["calls"]


def test_default_search_scores_states_on_the_server(server: str, capsys: Any) -> None:
    # The default generator and evaluator (enumerate + likelihood), scoring by top-logprobs (echo of
    # a long prompt is slow on this server: it sorts the whole vocabulary per prompt token).
    code, out, err = _run(["solve", "game24", "4 6 1 1", "--base-url", server, "--model", MODEL,
                           "--scoring", "top-logprobs", "--budget-calls", "4", "--concurrency", "1", "--json"],
                          capsys)
    assert code == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert res["failed_calls"] == 0 and res["calls"] == 4 and res["stopped_by"] == "calls"
    assert "scoring by top-logprobs" not in err  # forced, not chosen: nothing to report


def test_default_settings_score_by_cost_one_request_at_a_time(server: str, capsys: Any) -> None:
    # The case: the defaults (enumerate + likelihood, --scoring auto, --concurrency unset) on
    # this server. Echo is supported but far slower, so auto must score labels by top-logprobs; the
    # server serves one request at a time, so it must get one at a time. Three calls, no failures.
    code, out, err = _run(["solve", "game24", "1 2 4 7", "--base-url", server, "--model", MODEL,
                           "--budget-calls", "3", "--json"], capsys)
    assert code == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert res["failed_calls"] == 0 and res["calls"] == 3 and res["stopped_by"] == "calls"
    assert "scoring by top-logprobs for labels" in err
    assert "serves one request at a time" in err


def test_bench_two_methods_through_base_url(server: str, tmp_path: Path, capsys: Any) -> None:
    out_dir = tmp_path / "bench"
    argv = ["bench", "game24", "--generated", "--range", "1-2", "--methods", "io,cot", "--base-url", server,
            "--model", MODEL, "--out", str(out_dir), "--no-plots", "--json", "--samples", "1"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in (out_dir / "results.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["method"]) for r in rows) == [("1", "cot"), ("1", "io"), ("2", "cot"), ("2", "io")]
    assert all(r["status"] == "done" and r["calls"] == 1 and r["tokens"] > 0 for r in rows)
    for r in rows:
        assert r["verified"] == (r["answer"] is not None and _is_24(r["puzzle"], r["answer"])), r
    json.loads(out)  # --json: the summary only, no progress lines mixed in


def test_a_timeout_ends_the_run_with_a_clear_message(server: str, capsys: Any) -> None:
    # 0.05 s is less than any answer takes: the request is waited for up to 0.1 s (never resent: the
    # server is still working on it), then the run ends (exit 3) with the results so far.
    code, out, err = _run(["solve", "game24", "4 6 1 1", "--base-url", server, "--model", MODEL,
                           "--generator", "propose", "--evaluator", "value", "--timeout", "0.05",
                           "--retries", "1", "--grammar", "off", "--concurrency", "1"], capsys)
    assert code == 3 and "no verified solution found (the server stopped answering)" in out
    assert "server slow: request 1 (completion) has had no answer for 0.05 s; waiting up to 0.1 s" in err
    assert "tot: model error: server too slow: completion request 1" in err and "results so far above" in err


def test_a_grammar_request_is_honoured(server: str) -> None:
    """llama-cpp-python's server takes ``grammar`` in the request body: the propose answer for a
    Game-of-24 state follows the grammar of its legal steps (checked with the independent GBNF
    reader of the tests, and by the task's own gate)."""
    from solver.generators import thought_grammar
    from solver.grammar import lines
    from solver.task import Thought
    from solver.task_capabilities import ProposePrompts, find
    from tasks.game24 import Game24
    from tests.gbnf_reference import Grammar
    from verifiers.verdict import Invalid

    task = Game24()
    state = task.root("4 9 10 13")
    one = thought_grammar(task, state)
    assert one is not None
    text = lines(one, 3)

    async def go() -> tuple[str, object]:
        b = OpenAIBackend(MODEL, server, timeout=120, max_retries=1, notify=None)
        try:
            got = await b.complete(find(task, ProposePrompts).propose_prompt(state, False),
                                   GenParams(n=1, temperature=0.7, max_tokens=90, seed=3, grammar=text))
            return got.texts[0], (await b.capabilities(("grammar",))).grammar
        finally:
            await b.close()

    answer, way = asyncio.run(go())
    assert way == "grammar"
    assert Grammar(text).matches(answer), answer
    steps = find(task, ProposePrompts).parse_proposals(state, answer)
    assert steps and all(not isinstance(task.check(state, Thought(t.text)), Invalid) for t in steps)


def _scores(trace: Path) -> int:
    try:
        return sum(1 for line in trace.read_text().splitlines() if '"event": "score"' in line)
    except OSError:
        return 0


@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_a_server_that_dies_or_stalls_mid_run_ends_it_with_the_results_so_far(how: str, tmp_path: Path) -> None:
    # The default search through a server of its own; once two states are scored the server is
    # killed (every later connection refused) or stopped (SIGSTOP: connections accepted, nothing
    # answered). Either way the run ends by itself, exit 3, its result so far on stdout, its trace
    # ended, and one line on stderr; never a hang or a traceback.
    import signal

    proc, url = _start(tmp_path / "server.log")
    trace = tmp_path / "t.jsonl"
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, "-m", "solver.tools.cli", "solve", "game24", "1 2 4 7", "--base-url", url, "--model", MODEL,
           "--scoring", "top-logprobs", "--concurrency", "1", "--timeout", "10", "--retries", "1", "--json",
           "--trace", str(trace)]
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root, env=env)
    try:
        deadline = time.monotonic() + 240
        while _scores(trace) < 2:
            assert run.poll() is None, "the run ended before the server failed"
            assert time.monotonic() < deadline, "no two states scored in 240 s"
            time.sleep(0.2)
        failed_at = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
        out, err = run.communicate(timeout=180)
        took = time.monotonic() - failed_at
    finally:
        if run.poll() is None:
            run.kill()
        if how == "stopped":
            os.kill(proc.pid, signal.SIGCONT)
        _stop(proc)
    assert run.returncode == 3, err[-2000:]
    res = json.loads(out.strip().splitlines()[-1])
    assert res["stopped_by"] == "server" and res["answer"] is None and not res["verified"]
    assert res["backend_calls"] >= 2 and res["failed_calls"] >= 1 and res["expanded"] >= 1
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("tot: model error:")
    # ended by the client's own bound: --timeout 10 doubled once (20 s) at most per wait, not a hang
    assert took < 120, took
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[-1]["event"] == "end" and events[-1]["stopped_by"] == "server"
