"""The embedded model against llama-cpp-python's own server serving the same GGUF file.

    TOT_THREADS=1 python benchmarks/server_vs_embedded.py            # table on stdout
    TOT_THREADS=1 python benchmarks/server_vs_embedded.py --json

Starts llama-cpp-python's server on 127.0.0.1 with the embedded Gemma 3 270M file and
``--n_threads $TOT_THREADS`` through the project's launcher ``python -m solver.lm.llama_cpp_python_server``
(as tests/test_real_server.py does: the weights loaded as ``tot`` loads them, extra buffer types
off); ``--plain-server`` starts ``python -m llama_cpp.server`` as it is instead (extra buffer
types on: its first decode crashes CPUs with AMX). Then it measures, each once:

1. ``tot models --base-url URL --json``: what the probe finds (requests served at once, the cost of
   one request of each scoring mode, decoding with and without a grammar) and what ``auto`` picks;
2. the default ``tot solve game24 PUZZLE`` through the server (``--json``; wall seconds of the
   whole command);
3. one request of each scoring mode on the value prompt of the puzzle's root state (a real prompt,
   longer than the probe's): top-logprobs (one request scores the three labels) and echo (one
   request, one label: scoring the three labels sends three), the echo one given ``--echo-limit`` s;
4. the same solve with the embedded model (wall seconds, model load included).

Nothing here is asserted: tests/test_real_server.py checks the same things loosely. The figures go
in docs/servers.md with the machine they were measured on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.lm.local import model_path  # noqa: E402

MODEL = "gemma3-270m"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(threads: str, plain: bool = False) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    server = "llama_cpp.server" if plain else "solver.lm.llama_cpp_python_server"
    cmd = [sys.executable, "-m", server, "--model", str(model_path()), "--model_alias", MODEL,
           "--host", "127.0.0.1", "--port", str(port), "--n_threads", threads, "--n_threads_batch", threads,
           "--n_ctx", "2048", "--chat_format", "gemma"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as resp:  # noqa: S310 - 127.0.0.1
                if resp.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama.cpp server did not start")


def tot(argv: list[str], limit: float) -> tuple[float, int, str, str]:
    """Wall seconds, exit code, stdout, stderr of one ``tot`` command (killed after ``limit`` s)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "solver.tools.cli", *argv], capture_output=True, text=True,
                              env=env, timeout=limit, check=False)
    except subprocess.TimeoutExpired as exc:
        return time.monotonic() - t0, -1, str(exc.stdout or ""), f"killed after {limit:g} s"
    return time.monotonic() - t0, done.returncode, done.stdout, done.stderr


async def value_prompt_costs(url: str, puzzle: str, echo_limit: float) -> dict[str, Any]:
    """Seconds of one top-logprobs request (all three value labels) and of one echo request (one
    label; scoring the three sends three), on the value prompt of ``puzzle``'s root state, one at
    a time; an echo request over ``echo_limit`` s is abandoned and reported as such."""
    from solver.lm.base import LMError
    from solver.lm.openai_backend import OpenAIBackend
    from solver.task_capabilities import ValuePrompts, find
    from tasks.game24 import Game24

    task = Game24()
    prompt = find(task, ValuePrompts).value_prompt(task.root(puzzle), False)  # type: ignore[union-attr]
    out: dict[str, Any] = {}
    for mode, labels in (("top-logprobs", [" sure", " likely", " impossible"]), ("echo", [" sure"])):
        b = OpenAIBackend(MODEL, url, timeout=echo_limit, max_retries=0, scoring=mode, notify=None,
                          probe_parallel=False)
        try:
            t0 = time.perf_counter()
            _, tokens = await b.score(prompt + f"\n#{mode}", labels)
            out[mode] = round(time.perf_counter() - t0, 2)
            out[f"{mode} prompt tokens"] = tokens
        except LMError as exc:
            out[mode] = f"over {echo_limit:g} s ({str(exc)[:60]})"
        finally:
            await b.close()
    return out


def _save(rows: dict[str, Any], path: str | None) -> None:
    if path:
        Path(path).write_text(json.dumps(rows, indent=1), encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--puzzle", default="1 2 4 7")
    ap.add_argument("--limit", type=float, default=600.0, help="seconds allowed each solve")
    ap.add_argument("--echo-limit", type=float, default=90.0,
                    help="seconds allowed the echo request (0: skip the value-prompt stage)")
    ap.add_argument("--budget-calls", type=int, default=None,
                    help="the same call budget for both solves: compare a stated subset of the search")
    ap.add_argument("--plain-server", action="store_true",
                    help="python -m llama_cpp.server as it is (extra buffer types on: crashes AMX CPUs)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", default=None, help="write the figures so far to this file after each stage")
    args = ap.parse_args()
    threads = os.environ.get("TOT_THREADS", "1")
    budget = [] if args.budget_calls is None else ["--budget-calls", str(args.budget_calls)]
    rows: dict[str, Any] = {"puzzle": args.puzzle, "budget_calls": args.budget_calls, "threads": threads,
                            "cpus": os.cpu_count(),
                            "load_before": os.getloadavg()[0]}
    proc, url = start_server(threads, args.plain_server)
    try:
        took, code, out, err = tot(["models", "--base-url", url, "--json", "--timeout", "300"], args.limit)
        rows["models_seconds"] = round(took, 1)
        rows["models"] = json.loads(out) if code == 0 else err.strip().splitlines()[-1:]
        _save(rows, args.out)
        took, code, out, err = tot(["solve", "game24", args.puzzle, "--model", MODEL, "--base-url", url, "--json",
                                    *budget], args.limit)
        rows["server_solve"] = {"seconds": round(took, 1), "exit": code,
                                "result": json.loads(out.splitlines()[-1]) if code == 0 and out else None,
                                "stderr": err.strip().splitlines()[-6:]}
        _save(rows, args.out)
        if args.echo_limit > 0:
            rows["value_prompt"] = asyncio.run(value_prompt_costs(url, args.puzzle, args.echo_limit))
        _save(rows, args.out)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
    # --adapter off: the base model on both sides (llama-cpp-python's server loads no adapter, and
    # the figures in docs/servers.md were measured before the shipped adapter became the default)
    took, code, out, err = tot(["solve", "game24", args.puzzle, "--adapter", "off", "--json", *budget], args.limit)
    rows["embedded_solve"] = {"seconds": round(took, 1), "exit": code,
                              "result": json.loads(out.splitlines()[-1]) if code == 0 and out else None}
    rows["load_after"] = os.getloadavg()[0]
    _save(rows, args.out)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    caps = rows["models"]["capabilities"] if isinstance(rows["models"], dict) else {}
    print(f"puzzle {args.puzzle}, {threads} thread(s), {rows['cpus']} CPUs, load {rows['load_before']:.1f}")
    print(f"probe ({rows['models_seconds']} s): parallel {caps.get('parallel')}, costs {caps.get('costs')}, "
          f"grammar {caps.get('grammar_cost')}; auto picks {rows['models'].get('scoring') if caps else '?'}")
    print(f"value prompt of the root: {rows.get('value_prompt', 'not measured')}")
    for name in ("server_solve", "embedded_solve"):
        r = rows[name]
        res = r["result"] or {}
        print(f"{name}: {r['seconds']} s, exit {r['exit']}, answer {res.get('answer')!r} "
              f"verified {res.get('verified')}, calls {res.get('calls')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
