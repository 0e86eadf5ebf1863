"""A fake OpenAI-compatible server on 127.0.0.1 that answers after a fixed delay (benchmarks only).

It serves ``POST /v1/completions`` and ``POST /v1/chat/completions``, sleeps ``delay`` seconds per
request (as a remote model would, without using CPU), and answers with ``respond(prompt, i)``
for each of the ``n`` samples (or one sample when ``honor_n`` is False, like servers that ignore
``n``). It counts requests and the peak number in flight, which is what the concurrency
benchmark checks. Everything is bounded: at most ``max_requests`` answers (then 503) and at most
``max_seconds`` of life, after which it shuts itself down.

    python benchmarks/fake_openai_server.py --port 8099 --delay 0.2 --max-seconds 60
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Responder = Callable[[str, int], str]
MAX_BODY = 1 << 20


class _Server(ThreadingHTTPServer):
    # The default listen backlog (5) drops connections when 16+ clients connect at once, and a
    # dropped SYN costs the client a 1 s retransmit: that would measure the kernel, not us.
    request_queue_size = 1024
    daemon_threads = True


def echo_responder(prompt: str, index: int) -> str:
    """Default answer: a fixed line that names the sample index."""
    return f" sample {index}"


class FakeOpenAIServer:
    """Start with ``start()`` (or as a context manager); ``base_url`` is then ready for clients."""

    def __init__(self, delay: float = 0.2, respond: Responder = echo_responder, *, honor_n: bool = True,
                 max_requests: int = 100_000, max_seconds: float = 600.0, port: int = 0) -> None:
        self.delay, self.respond, self.honor_n = delay, respond, honor_n
        self.max_requests, self.max_seconds = max_requests, max_seconds
        self.requests = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", port), self._handler())
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reset_counts(self) -> None:
        with self._lock:
            self.requests = self.peak_in_flight = 0

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.max_seconds, self.stop)  # bounded life, whatever happens
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._thread is not None and self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        chat = path.endswith("/chat/completions")
        if chat:
            msgs = body.get("messages") or []
            prompt = str(msgs[-1].get("content", "")) if msgs else ""
        else:
            prompt = str(body.get("prompt", ""))
        n = int(body.get("n") or 1) if self.honor_n else 1
        n = max(1, min(n, 128))
        texts = [self.respond(prompt, i) for i in range(n)]
        choices: list[dict[str, Any]] = []
        for i, t in enumerate(texts):
            if chat:
                choices.append({"index": i, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": t}})
            else:
                choices.append({"index": i, "text": t, "finish_reason": "stop", "logprobs": None})
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": sum(len(t.split()) for t in texts)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return 200, {"id": "fake", "object": "chat.completion" if chat else "text_completion",
                     "created": int(time.time()), "model": str(body.get("model", "fake")),
                     "choices": choices, "usage": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections as with real servers

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return None

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if not self.path.endswith(("/stats", "/stats/reset")):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    stats = {"requests": server.requests, "peak_in_flight": server.peak_in_flight}
                    if self.path.endswith("/reset"):
                        server.requests = server.peak_in_flight = 0
                self._send(200, stats)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self._send(413, {"error": {"message": "request too large"}})
                    return
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "bad JSON"}})
                    return
                if not self.path.endswith(("/completions", "/chat/completions")):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    if server.requests >= server.max_requests:
                        over = True
                    else:
                        over = False
                        server.requests += 1
                        server.in_flight += 1
                        server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                if over:
                    self._send(503, {"error": {"message": "fake server request limit reached"}})
                    return
                try:
                    time.sleep(server.delay)
                    status, payload = server._answer(self.path, body)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                self._send(status, payload)

        return Handler


class ServerProcess:
    """A FakeOpenAIServer in a forked child process, so that its HTTP and JSON work does not share
    the benchmark's interpreter lock, as with a real server. Counts come over ``GET /v1/stats``."""

    def __init__(self, delay: float, respond: Responder = echo_responder, *, honor_n: bool = True,
                 max_requests: int = 100_000, max_seconds: float = 600.0) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork")  # the responder may be a closure: fork copies it, no pickling
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve_child, args=(child, delay, respond, honor_n, max_requests,
                                                            max_seconds), daemon=True)
        self._proc.start()
        if not parent.poll(30):
            self._proc.kill()
            raise RuntimeError("the fake server did not start within 30 s")
        self.base_url: str = parent.recv()

    def stats(self, reset: bool = False) -> dict[str, int]:
        import urllib.request

        url = self.base_url + ("/stats/reset" if reset else "/stats")
        with urllib.request.urlopen(url, timeout=10) as resp:  # noqa: S310 - 127.0.0.1 only
            return dict(json.loads(resp.read()))

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.join(10)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve_child(conn: Any, delay: float, respond: Responder, honor_n: bool, max_requests: int,
                 max_seconds: float) -> None:
    srv = FakeOpenAIServer(delay, respond, honor_n=honor_n, max_requests=max_requests,
                           max_seconds=max_seconds).start()
    conn.send(srv.base_url)
    assert srv._thread is not None
    srv._thread.join(max_seconds + 5)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8099)
    p.add_argument("--delay", type=float, default=0.2)
    p.add_argument("--ignore-n", action="store_true", help="answer one sample whatever n asks")
    p.add_argument("--max-requests", type=int, default=10_000)
    p.add_argument("--max-seconds", type=float, default=300.0)
    a = p.parse_args()
    srv = FakeOpenAIServer(a.delay, honor_n=not a.ignore_n, max_requests=a.max_requests,
                           max_seconds=a.max_seconds, port=a.port).start()
    print(f"serving {srv.base_url} for at most {a.max_seconds:.0f} s", flush=True)
    assert srv._thread is not None
    srv._thread.join()


if __name__ == "__main__":
    main()
