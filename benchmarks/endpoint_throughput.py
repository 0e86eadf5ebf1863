"""Throughput over several endpoints: does it grow linearly with the number of machines?

    python benchmarks/endpoint_throughput.py                  # 1, 2, 4, 8 endpoints x 16 concurrent, 0.25 s each
    python benchmarks/endpoint_throughput.py --json

Each endpoint is a fake OpenAI-compatible server that answers every request after ``--delay``
seconds (as a remote GPU would, without using this machine's CPU): all of them on one asyncio loop
in one child process (default), or, with ``--threaded``, each in its own process
(fake_openai_server.py, a thread per connection). The client is
the real one: ``LMClient`` over an ``EndpointPool`` of ``OpenAIBackend``s with ``--concurrency``
requests per endpoint. ``--waves`` full waves of requests are sent (E x concurrency x waves
one-sample completions), after one untimed wave that opens the connections. The ideal throughput
is E x concurrency / delay requests per second; the table gives the measured rate, its ratio to
the ideal, the peak in flight each endpoint saw (it must not pass the per-endpoint limit), and
the client's own CPU per request: the client is one Python process, so once the rate times that
CPU cost reaches the share of a core it gets, more endpoints cannot help (see the README).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from fake_openai_server import ServerProcess  # noqa: E402

from solver.lm.base import GenParams  # noqa: E402
from solver.lm.client import LMClient  # noqa: E402
from solver.lm.openai_backend import OpenAIBackend  # noqa: E402
from solver.lm.pool import EndpointPool  # noqa: E402


async def _run(urls: list[str], concurrency: int, waves: int) -> tuple[float, int, int]:
    pool = EndpointPool([OpenAIBackend("fake", u, max_retries=0, notify=None) for u in urls], concurrency,
                        notify=None)
    client = LMClient(pool, concurrency=concurrency)
    model = client.session()
    per_wave = len(urls) * concurrency
    try:
        await model.gather(*(model.complete(f"warm {i}", GenParams(n=1)) for i in range(per_wave)))
        t0, c0 = time.perf_counter(), time.process_time()
        got = await model.gather(*(model.complete(f"q {i}", GenParams(n=1)) for i in range(per_wave * waves)))
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        await client.close()
    return seconds, cpu, sum(1 for g in got if g), model.usage.failed_calls


class AsyncEndpoints:
    """``count`` fake endpoints in one child process, on one asyncio loop: a minimal HTTP/1.1
    keep-alive server that answers ``POST .../completions`` after ``delay`` seconds (asyncio.sleep,
    no thread per request) and ``GET .../stats``. Much cheaper per request than the threaded fake,
    so that on a small machine the client, not the fakes, is what is measured."""

    def __init__(self, count: int, delay: float, max_seconds: float = 300.0) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_async_child, args=(child, count, delay, max_seconds), daemon=True)
        self._proc.start()
        if not parent.poll(30):
            self._proc.kill()
            raise RuntimeError("the fake endpoints did not start within 30 s")
        self.urls: list[str] = parent.recv()

    def stats(self) -> list[dict[str, int]]:
        import urllib.request

        out = []
        for url in self.urls:
            with urllib.request.urlopen(url + "/stats", timeout=10) as resp:  # noqa: S310 - 127.0.0.1 only
                out.append(dict(json.loads(resp.read())))
        return out

    def __enter__(self) -> AsyncEndpoints:
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        self._proc.join(10)


def _async_child(conn: Any, count: int, delay: float, max_seconds: float) -> None:
    async def serve() -> None:
        servers, urls = [], []
        for _ in range(count):
            stats = {"requests": 0, "in_flight": 0, "peak_in_flight": 0}

            async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                             stats: dict[str, int] = stats) -> None:
                try:
                    while True:
                        head = await reader.readuntil(b"\r\n\r\n")
                        lines = head.decode("latin-1").split("\r\n")
                        length = next((int(h.split(":", 1)[1]) for h in lines
                                       if h.lower().startswith("content-length:")), 0)
                        body = json.loads(await reader.readexactly(length)) if length else {}
                        if lines[0].startswith("GET"):
                            payload = {k: stats[k] for k in ("requests", "peak_in_flight")}
                        else:
                            stats["requests"] += 1
                            stats["in_flight"] += 1
                            stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
                            await asyncio.sleep(delay)
                            stats["in_flight"] -= 1
                            n = int(body.get("n") or 1)
                            payload = {"id": "fake", "object": "text_completion", "created": 0, "model": "fake",
                                       "choices": [{"index": i, "text": f" sample {i}", "finish_reason": "stop",
                                                    "logprobs": None} for i in range(n)],
                                       "usage": {"prompt_tokens": 2, "completion_tokens": n, "total_tokens": 2 + n}}
                        data = json.dumps(payload).encode()
                        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                     + str(len(data)).encode() + b"\r\n\r\n" + data)
                        await writer.drain()
                except (asyncio.IncompleteReadError, ConnectionError):
                    pass
                finally:
                    writer.close()

            srv = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
            servers.append(srv)
            urls.append(f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/v1")
        conn.send(urls)
        await asyncio.sleep(max_seconds)

    asyncio.run(serve())


def measure(endpoints: int, concurrency: int, delay: float, waves: int, threaded: bool = False) -> dict[str, Any]:
    with ExitStack() as stack:
        if threaded:
            procs = [stack.enter_context(ServerProcess(delay, max_requests=100_000, max_seconds=300))
                     for _ in range(endpoints)]
            urls = [s.base_url for s in procs]
        else:
            fakes = stack.enter_context(AsyncEndpoints(endpoints, delay))
            urls = fakes.urls
        seconds, cpu, ok, failed = asyncio.run(_run(urls, concurrency, waves))
        stats = [s.stats() for s in procs] if threaded else fakes.stats()
    requests = endpoints * concurrency * waves
    ideal = endpoints * concurrency / delay
    rate = requests / seconds
    return {"endpoints": endpoints, "concurrency": concurrency, "requests": requests, "answered": ok,
            "failed": failed, "seconds": round(seconds, 3), "req_per_s": round(rate, 1),
            "ideal_req_per_s": round(ideal, 1), "of_ideal": round(rate / ideal, 3),
            "client_cpu_ms_per_request": round(1000 * cpu / requests, 2),
            "client_cpu_share": round(cpu / seconds, 2),
            "peak_in_flight_per_endpoint": max(st["peak_in_flight"] for st in stats),
            "requests_per_endpoint": [st["requests"] for st in stats]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--endpoints", default="1,2,4,8")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--delay", type=float, default=0.25)
    p.add_argument("--waves", type=int, default=4)
    p.add_argument("--threaded", action="store_true",
                   help="one threaded fake server process per endpoint (fake_openai_server.py) instead")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    rows = [measure(int(e), a.concurrency, a.delay, a.waves, a.threaded) for e in a.endpoints.split(",")]
    if a.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {a.delay} s per answer, "
          f"{a.concurrency} per endpoint, {a.waves} waves")
    print(f"{'endpoints':>9} {'requests':>8} {'seconds':>8} {'req/s':>8} {'ideal':>8} {'of ideal':>8} {'peak/ep':>7}")
    base = rows[0]["req_per_s"]
    for r in rows:
        print(f"{r['endpoints']:>9} {r['requests']:>8} {r['seconds']:>8.2f} {r['req_per_s']:>8.1f} "
              f"{r['ideal_req_per_s']:>8.1f} {r['of_ideal']:>8.2f} {r['peak_in_flight_per_endpoint']:>7}"
              f"   x{r['req_per_s'] / base:.2f} vs 1 endpoint; client CPU "
              f"{r['client_cpu_ms_per_request']:.1f} ms/request ({r['client_cpu_share']:.0%} of a core); "
              f"failed {r['failed']}")


if __name__ == "__main__":
    main()
