"""A fake OpenAI-compatible HTTP server on 127.0.0.1 for fault-injection tests (stdlib only).

Each request to ``/v1/completions`` or ``/v1/chat/completions`` takes the next mode from a
script (the last mode repeats once the script is used up) and answers accordingly:

``ok``        a well-formed answer with ``n`` choices
``one``       a well-formed answer with one choice whatever ``n`` was (a server that ignores n)
``slow``      ``ok`` after ``delay`` seconds
``timeout``   no answer until the client gives up (bounded: at most ``hang`` seconds)
``429``       Too Many Requests with ``Retry-After`` (and ``retry-after-ms``, so tests stay fast)
``500``       Internal Server Error
``malformed`` status 200, JSON content type, a body that is not JSON
``wrongshape`` status 200, valid JSON of the wrong shape (choices is not a list of choices)
``empty``     status 200, ``choices: []``
``drop``      the connection is closed without any answer
``echo-key``  400 Bad Request whose message quotes the Authorization header it received (as
              some servers do), to test that keys are scrubbed from errors
``context``   400 context_length_exceeded, worded and shaped as llama.cpp's server words it

Answers have the shapes llama-cpp-python's server (0.3) gives, checked against it in
tests/test_real_server.py: error bodies carry ``message``, ``type``, ``param`` and ``code``;
``logprobs`` answers list ``tokens``, ``text_offset``, ``token_logprobs`` and ``top_logprobs``
(one dict per token); with ``echo`` the text starts with the prompt, the prompt's tokens come first
(offsets from 0) and the first token has no log-probability (null). Tokens here are a word with
the spaces before it; every token has log-probability -1.0, except the generated ones: -0.5, -0.25.
``GET /v1/models`` lists the one model. ``ok`` honours ``n`` (as vLLM and OpenAI do); ``one``
answers one choice whatever ``n`` was, as llama.cpp's server does for completions and chat.

A reasoning model (``thinking=``): ``"field"`` puts ``thinking_text`` in ``reasoning_content`` beside
the answer (``"reasoning"``: in vLLM's newer ``reasoning`` field); ``"think"`` writes it as a
``<think>...</think>`` block before the answer; ``"open"`` writes an unterminated ``<think>`` block
and no answer (cut by max_tokens, ``finish_reason: length``). Its words count in
``completion_tokens``. A request with ``chat_template_kwargs: {"enable_thinking": false}`` gets no
thinking unless ``ignore_thinking_off``; with ``refuse_thinking_fields`` any request carrying
``chat_template_kwargs``, ``reasoning_effort`` or ``thinking_token_budget`` is refused with 400 (as
OpenAI refuses fields it does not know).

Streams: a completion request with ``stream: true`` is refused (400, recorded but taking no mode
from the script) unless ``stream``; then it is answered as llama-cpp-python streams a completion:
a chunk with the generated token and its ``logprobs`` (the same top alternatives as a plain
answer's), a last chunk with ``finish_reason`` and ``usage: null`` (``stream_usage``: the usage
there), then ``data: [DONE]``. ``POST /extras/tokenize/count`` (llama-cpp-python's tokenizer
route) answers ``{"count": 3}``, the prompt tokens a plain answer reports, where ``tokenize``
(else 404); it takes no mode from the script either.

``GET /lora-adapters`` lists ``lora_adapters`` as llama.cpp's server lists the adapters it loaded
(``[{id, path, scale}]``; None: 404, as every other server). ``logprobs_form="content"`` answers
log-probabilities as llama.cpp's own server does (``logprobs.content``, no echo); ``"none"`` sends
none at all (a server that cannot score).

``GET /props`` answers ``{"total_slots": slots}`` as llama.cpp's own server (llama-server) does,
unless ``slots`` is None (404, as llama-cpp-python's server); ``serial`` makes the server answer
one request at a time (as llama-cpp-python's server does), the others waiting their turn.

``stall_after``: from that many answered requests on, every request hangs (``timeout`` mode): a
server that stops answering mid-run. ``busy`` counts the requests being handled at once
(``max_busy``: the most seen), so tests can see whether a client piles work on a server.

Every request (path, headers, body) is recorded so tests can assert what the client sent.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("ok", "one", "slow", "timeout", "429", "500", "malformed", "wrongshape", "empty", "drop", "echo-key",
         "context")


@dataclass(slots=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    mode: str


@dataclass(slots=True)
class Script:
    modes: list[str] = field(default_factory=lambda: ["ok"])
    text: str = "4 * 6 = 24 (left: 24)"
    delay: float = 0.05
    hang: float = 5.0
    retry_after: str = "0"
    retry_after_ms: str | None = "5"
    echo: bool = True  # False: refuse echo with 400, as OpenAI's chat-era models do
    chat: bool = True  # False: no /chat/completions route (404, FastAPI's body)
    thinking: str | None = None  # None, "field", "reasoning", "think" or "open"
    thinking_text: str = "Maybe 13 - 9 = 4 (left: 4 4 10)? Then 4 + 4 = 8 (left: 8 10)."
    ignore_thinking_off: bool = False
    refuse_thinking_fields: bool = False
    stall_after: int | None = None
    slots: int | None = 4
    serial: bool = False
    echo_delay: float = 0.0  # extra seconds an echo request takes (llama.cpp's echo is slow)
    grammar: bool = False  # True: honour llama.cpp's ``grammar`` field (answer "zebra zebra" to the probe's)
    grammar_delay: float = 0.0  # extra seconds a request under a grammar takes
    stream: bool = False  # True: answer streamed completions (else 400)
    stream_usage: bool = False  # True: the last chunk of a stream carries the usage
    tokenize: bool = True  # False: no /extras/tokenize/count route (404)
    stream_shift: float = 0.0  # added to every streamed log-probability (a server whose streams disagree)
    logprobs_delay: float = 0.0  # extra seconds a plain (not streamed) answer with logprobs takes, as
    # llama-cpp-python's, which takes the log-softmax of every prompt row there and of one row in a stream
    lora_adapters: list[dict[str, Any]] | None = None  # GET /lora-adapters (llama.cpp's server); None: 404
    model_path: str | None = None  # /props' model_path (llama.cpp's server)
    # "legacy" (tokens, token_logprobs, top_logprobs dicts); "content": the newer form llama.cpp's own
    # server sends (``logprobs.content[i].top_logprobs``: lists of {id, token, bytes, logprob}), no echo;
    # "none": no log-probabilities at all (null)
    logprobs_form: str = "legacy"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # clients that give up (timeouts) reset connections; that is expected here


class FakeOpenAIServer:
    """Start with ``with FakeOpenAIServer(["500", "ok"]) as srv:``; ``srv.url`` is the base URL."""

    def __init__(self, modes: list[str] | None = None, **script: Any) -> None:
        for m in modes or []:
            if m not in MODES:
                raise ValueError(f"unknown mode {m!r}; use one of {MODES}")
        self.script = Script(list(modes or ["ok"]), **script)
        self.requests: list[Recorded] = []
        self.busy = 0
        self.max_busy = 0
        self._lock = threading.Lock()
        self._serial = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()  # releases handlers that are hanging in ``timeout`` mode
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_mode(self) -> str:
        with self._lock:
            k = len(self.requests)
            if self.script.stall_after is not None and k >= self.script.stall_after:
                return "timeout"
            modes = self.script.modes
            return modes[k] if k < len(modes) else modes[-1]

    def modes_served(self) -> list[str]:
        with self._lock:
            return [r.mode for r in self.requests]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return None

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path.rstrip("/") == "/props" and server.script.slots is not None:
                    props: dict[str, Any] = {"total_slots": server.script.slots}
                    if server.script.model_path is not None:
                        props["model_path"] = server.script.model_path
                    self._send(200, json.dumps(props).encode())
                elif self.path.rstrip("/") == "/lora-adapters" and server.script.lora_adapters is not None:
                    self._send(200, json.dumps(server.script.lora_adapters).encode())
                elif self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "me",
                                                        "permissions": []}]}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._send(404, json.dumps({"detail": "Not Found"}).encode())

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                if self.path.rstrip("/").endswith("/extras/tokenize/count") or (body or {}).get("stream"):
                    self._side_route(body or {})  # no mode from the script: the scripted answers stay as they were
                    return
                mode = server._next_mode()
                with server._lock:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    server.requests.append(Recorded(self.path, headers, body, mode))
                    server.busy += 1
                    server.max_busy = max(server.max_busy, server.busy)
                try:
                    if server.script.serial:
                        with server._serial:
                            self._answer(mode, body or {})
                    else:
                        self._answer(mode, body or {})
                finally:
                    with server._lock:
                        server.busy -= 1

            def _side_route(self, body: dict[str, Any]) -> None:
                s = server.script
                with server._lock:
                    server.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()},
                                                    body, "side"))
                if self.path.rstrip("/").endswith("/extras/tokenize/count"):
                    if s.tokenize:
                        self._send(200, json.dumps({"count": 3}).encode())
                    else:
                        self._send(404, json.dumps({"detail": "Not Found"}).encode())
                    return
                if not s.stream or self.path.endswith("/chat/completions"):
                    err = {"error": {"message": "stream is not supported", "type": "invalid_request_error",
                                     "param": "stream", "code": None}}
                    self._send(400, json.dumps(err).encode())
                    return
                prompt = str(body.get("prompt") or "")
                lp = _logprobs(prompt, False, int(body["logprobs"])) if body.get("logprobs") is not None else None
                if lp is not None:
                    lp = {k: v[:1] for k, v in lp.items()}
                    lp["top_logprobs"] = [{t: v + s.stream_shift for t, v in lp["top_logprobs"][0].items()}]
                    if s.logprobs_form == "content":
                        lp = _content_form(lp, "")
                    elif s.logprobs_form == "none":
                        lp = None
                first = {"text": "4", "index": 0, "finish_reason": None, "logprobs": lp}
                last = {"text": "", "index": 0, "finish_reason": "length", "logprobs": None}
                usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4} if s.stream_usage else None
                chunks = [{"id": "cmpl-fake", "object": "text_completion", "created": 0,
                           "model": body.get("model", "fake"), "choices": [c], "usage": u}
                          for c, u in ((first, None), (last, usage))]
                payload = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

            def _answer(self, mode: str, body: dict[str, Any]) -> None:
                s = server.script
                if mode == "slow":
                    server._stop.wait(s.delay)
                    mode = "ok"
                if mode == "timeout":
                    server._stop.wait(s.hang)
                    self.close_connection = True
                    return
                if mode == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if mode == "429":
                    headers = {"Retry-After": s.retry_after}
                    if s.retry_after_ms is not None:
                        headers["retry-after-ms"] = s.retry_after_ms
                    err = {"error": {"message": "rate limited", "type": "rate_limit", "code": 429}}
                    self._send(429, json.dumps(err).encode(), headers)
                    return
                if mode == "500":
                    headers = {"retry-after-ms": s.retry_after_ms} if s.retry_after_ms is not None else {}
                    self._send(500, b'{"error": {"message": "boom", "type": "internal_server_error", "param": null, '
                               b'"code": null}}', headers)
                    return
                if mode == "echo-key":
                    msg = f"bad request from {self.headers.get('Authorization', '')}"
                    self._send(400, json.dumps({"error": {"message": msg, "type": "invalid_request"}}).encode())
                    return
                if mode == "context":
                    msg = ("This model's maximum context length is 2048 tokens, however you requested 3003 tokens "
                           "(3002 in your prompt; 1 for the completion). Please reduce your prompt; or completion "
                           "length.")
                    err = {"error": {"message": msg, "type": "invalid_request_error", "param": "messages",
                                     "code": "context_length_exceeded"}}
                    self._send(400, json.dumps(err).encode())
                    return
                if mode == "malformed":
                    self._send(200, b'{"id": "x", "choices": [{"text": "4 * 6 = 2')
                    return
                if mode == "wrongshape":
                    self._send(200, b'{"id": "x", "object": "text_completion", "choices": "nope", "usage": 7}')
                    return
                if self.path.endswith("/chat/completions") and not s.chat:
                    self._send(404, json.dumps({"detail": "Not Found"}).encode())
                    return
                if body.get("echo") and not s.echo:
                    err = {"error": {"message": "echo is not supported with this model",
                                     "type": "invalid_request_error", "param": "echo", "code": None}}
                    self._send(400, json.dumps(err).encode())
                    return
                asked = [k for k in ("chat_template_kwargs", "reasoning_effort", "thinking_token_budget") if k in body]
                if asked and s.refuse_thinking_fields:
                    err = {"error": {"message": f"Unrecognized request argument supplied: {asked[0]}",
                                     "type": "invalid_request_error", "param": None, "code": None}}
                    self._send(400, json.dumps(err).encode())
                    return
                if body.get("echo") and s.echo_delay:
                    server._stop.wait(s.echo_delay)
                if body.get("logprobs") is not None and s.logprobs_delay:
                    server._stop.wait(s.logprobs_delay)
                if body.get("grammar") and s.grammar and s.grammar_delay:
                    server._stop.wait(s.grammar_delay)
                n = int(body.get("n") or 1) if mode == "ok" else 1
                chat = self.path.endswith("/chat/completions")
                off = (body.get("chat_template_kwargs") or {}).get("enable_thinking") is False
                thinking = None if off and not s.ignore_thinking_off else s.thinking
                answer, reasoning, finish = s.text, None, "stop"
                if body.get("grammar") and s.grammar and "zebra" in str(body["grammar"]):
                    answer = "zebra zebra"  # the capability probe's grammar, honoured
                if thinking in ("field", "reasoning"):
                    reasoning = s.thinking_text
                elif thinking == "think":
                    answer = f"<think>\n{s.thinking_text}\n</think>\n\n{s.text}"
                elif thinking == "open":
                    answer, finish = f"<think>\n{s.thinking_text}", "length"
                thought_words = len(s.thinking_text.split()) if thinking else 0
                if mode == "empty":
                    choices: list[dict[str, Any]] = []
                elif chat:
                    # Asked for log-probabilities: two tokens at -0.5 and -0.25 (total -0.75).
                    lp_chat = ({"content": [{"token": "4", "logprob": -0.5, "bytes": None, "top_logprobs": []},
                                            {"token": " *", "logprob": -0.25, "bytes": None, "top_logprobs": []}]}
                               if body.get("logprobs") else None)
                    message: dict[str, Any] = {"role": "assistant", "content": answer}
                    if reasoning is not None:
                        message["reasoning_content" if thinking == "field" else "reasoning"] = reasoning
                    choices = [{"index": i, "finish_reason": finish, "logprobs": lp_chat, "message": message}
                               for i in range(n)]
                else:
                    prompt = str(body.get("prompt") or "")
                    echo = bool(body.get("echo"))
                    lp = _logprobs(prompt, echo, int(body["logprobs"])) if body.get("logprobs") is not None else None
                    if lp is not None and s.logprobs_form == "content":
                        lp, echo = _content_form(lp, prompt if echo else ""), False
                    elif s.logprobs_form == "none":
                        lp, echo = None, False
                    choices = [{"index": i, "finish_reason": finish, "text": (prompt if echo else "") + answer,
                                "logprobs": lp} for i in range(n)]
                    if reasoning is not None:
                        for c in choices:
                            c["reasoning_content" if thinking == "field" else "reasoning"] = reasoning
                resp = {"id": "cmpl-fake", "object": "chat.completion" if chat else "text_completion",
                        "created": 0, "model": body.get("model", "fake"), "choices": choices,
                        "usage": {"prompt_tokens": 3, "completion_tokens": (5 + thought_words) * len(choices),
                                  "total_tokens": 3 + (5 + thought_words) * len(choices)}}
                self._send(200, json.dumps(resp).encode())

        return Handler


def _logprobs(prompt: str, echo: bool, k: int) -> dict[str, Any]:
    """llama.cpp's shape: generated tokens "4", " *" (-0.5, -0.25) after the prompt's when echoed."""
    prompt_tokens = re.findall(r"\s*\S+|\s+$", prompt) if echo else []
    tokens = prompt_tokens + ["4", " *"]
    values: list[float | None] = [-1.0] * len(prompt_tokens) + [-0.5, -0.25]
    start = 0 if echo else len(prompt)
    offsets, at = [], start
    for t in tokens:
        offsets.append(at)
        at += len(t)
    tops: list[dict[str, float] | None] = []
    for t, v in zip(tokens, values, strict=True):
        alts = {t: v if v is not None else -1.0}
        if t == "4":  # the alternatives of the first generated token, most likely first
            alts = dict(list({"4": -0.5, " sure": -1.5, " likely": -2.0, " impossible": -3.0, "6": -4.0}.items())
                        [:max(k, 1)])
        tops.append(alts)
    if echo and tokens:
        values[0] = None
        tops[0] = None
    return {"tokens": tokens, "text_offset": offsets, "token_logprobs": values, "top_logprobs": tops}


def _content_form(lp: dict[str, Any], prompt: str) -> dict[str, Any]:
    """``_logprobs``'s answer as llama.cpp's own server words it: only the generated tokens (it has
    no echo), each with its top alternatives as a list of {id, token, bytes, logprob}."""
    skip = len(re.findall(r"\s*\S+|\s+$", prompt)) if prompt else 0
    content = []
    for i, (token, value, tops) in enumerate(zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"],
                                                 strict=True)):
        if i < skip:
            continue
        alts = [{"id": 100 + j, "token": t, "bytes": list(t.encode()), "logprob": v}
                for j, (t, v) in enumerate((tops or {}).items())]
        content.append({"id": 0, "token": token, "bytes": list(token.encode()), "logprob": value,
                        "top_logprobs": alts})
    return {"content": content}
