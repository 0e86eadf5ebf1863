"""Any OpenAI-compatible server (OpenAI, vLLM, SGLang, llama.cpp's server, Ollama) through ``openai``."""

from __future__ import annotations

import asyncio
import functools
import itertools
import math
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from solver.lm.adapters import Adapter
from solver.lm.base import Completion, EndpointDown, GenParams, LMError, ServerTooSlow, ServerUnavailable
from solver.lm.logprobs import first_top, total_logprob
from solver.lm.server_features import (
    FEATURES,
    GRAMMAR_SLOW,
    GRAMMAR_WAYS,
    TOP_K,
    Capabilities,
    probe,
    server_root,
    stream_top,
)
from solver.lm.thinking import Thinking, parse_thinking, split_thinking

Notify = Callable[[str], None]
__all__ = ["EndpointDown", "OpenAIBackend", "ServerTooSlow", "ServerUnavailable"]


def stderr_notice(line: str) -> None:
    print(f"tot: {line}", file=sys.stderr, flush=True)


class OpenAIBackend:
    """Completions (and chat) over the async ``openai`` client, with our own retry loop.

    Failures (dropped or refused connections, 408/409/429/5xx) are retried ``max_retries`` times
    with exponential backoff (1, 2, 4 ... s, or the server's Retry-After), each retry reported on
    stderr. A request without an answer after ``timeout`` s is never resent (the server is still
    working on it: llama.cpp's server finishes requests nobody waits for, and a copy would queue
    behind it); it is waited for up to timeout x 2^retries, and from then on this backend sends one
    request at a time; past that wait it is abandoned and the run ends (ServerTooSlow), as it does
    when the server refuses every connection (EndpointDown). Before the first request, how many
    requests the server serves at once is probed (``parallel``): one that serves one at a time is
    sent one at a time. ``scoring`` auto picks the cheaper scoring mode by measured cost
    (``costs``). ``thinking``: see solver/lm/thinking.py.
    When a server returns fewer than ``n`` choices (it ignores ``n``), the missing samples are
    requested separately, at once, with seeds seed+i.
    """

    supports_chat = True
    concurrent = True

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3, scoring: str = "auto",
                 notify: Notify | None = stderr_notice, thinking: Thinking | str = "auto",
                 probe_parallel: bool = True, grammar: str = "auto", adapter: Adapter | None = None,
                 adapter_auto: Adapter | None = None) -> None:
        """``adapter``: a LoRA adapter the server has loaded (llama.cpp's server: ``--lora``, found
        by its file name in ``/lora-adapters`` and asked for in every request; a server without
        that route, such as vLLM, is trusted to serve it under ``model``). The model's name then
        carries the adapter's, as the embedded model's does, so caches and audits keep them apart.
        ``adapter_auto`` (``--adapter auto``): the adapter shipped for the task, taken by
        ``settle_adapter`` where a llama.cpp server has that very file loaded on the embedded model."""
        import openai

        if scoring not in ("auto", "echo", "top-logprobs"):
            raise ValueError(f"unknown scoring {scoring!r}; use auto, echo or top-logprobs")
        self.model = model
        self.adapter = adapter
        self.name = f"openai:{model}" + (f"+{adapter.tag}" if adapter is not None else "")
        self._lora: dict[str, Any] | None = None  # the request field that asks for the adapter (llama.cpp)
        self._lora_lock = asyncio.Lock()
        self._adapter_rows: list[dict[str, Any]] | BaseException | None = None  # /lora-adapters, read once
        self._adapter_auto = adapter_auto
        self._settled = adapter_auto is None
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._secret = key  # scrubbed from every error message
        self._client = openai.AsyncOpenAI(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0)
        self._openai = openai
        self._errors: tuple[type[BaseException], ...] = (openai.OpenAIError,)
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.scoring = scoring
        self.notify = notify
        # Bounds every HTTP request, including the extra ones one call may fan out into (samples
        # a server ignored ``n`` for, one echo request per scored continuation). LMClient sets it
        # to its own concurrency; None means no bound beyond the caller's.
        self.request_slots: asyncio.Semaphore | None = None
        self._serial = asyncio.Lock()  # held by every request once the server proved slow or serial
        self._slow = False
        self._one_at_a_time = False  # the server serves one request at a time (probed: parallel)
        self._capacity_known = False
        self._capacity_lock = asyncio.Lock()
        self.probe_parallel = probe_parallel
        self.grammar = grammar  # auto: a grammar the server decodes too slowly is dropped; on: kept
        self._ignores_n = False  # set once the server answered fewer than ``n`` choices
        self._numbers = itertools.count(1)
        self._caps: Capabilities | None = None
        self._caps_lock = asyncio.Lock()
        self._said_scoring: set[str] = set()
        self._said_grammar = False
        self.thinking = thinking if isinstance(thinking, Thinking) else parse_thinking(thinking)
        self._thinking_refused = False  # the server answered 400 to the --thinking fields
        self._said_thinking = False
        self._said_ignored = False

    async def _server_adapters(self) -> list[dict[str, Any]] | BaseException:
        """The adapters a llama.cpp server lists at ``/lora-adapters`` (each with an int ``id``),
        read once; the error where the route failed. Called under ``_lora_lock``."""
        if self._adapter_rows is None:
            try:
                listed = await self._client.get(server_root(self.base_url) + "/lora-adapters", cast_to=object,
                                                options={"timeout": self.timeout, "max_retries": 0})
                self._adapter_rows = [r for r in listed if isinstance(r, dict) and isinstance(r.get("id"), int)] \
                    if isinstance(listed, list) else []
            except self._errors as exc:
                self._adapter_rows = exc
        return self._adapter_rows

    async def settle_adapter(self) -> None:
        """``--adapter auto`` through a server: take the adapter shipped for the task where the
        server is llama.cpp's, serves the embedded model's file (``/props``' ``model_path``) and
        has the shipped adapter's file loaded (``/lora-adapters``; compared by sha256 where the
        server's path can be read here, else by name), and say so in one line; else none. Called
        once before a run's first prompt is written (an adapter changes the prompts)."""
        if self._settled:
            return
        async with self._lora_lock:
            if self._settled:
                return
            self._settled = True
            auto = self._adapter_auto
            assert auto is not None
            opts: Any = {"timeout": self.timeout, "max_retries": 0}
            try:
                props = await self._client.get(server_root(self.base_url) + "/props", cast_to=object, options=opts)
            except self._errors:
                return  # not llama.cpp's server (or not answering yet): no adapter, as before
            rows = await self._server_adapters()
            if isinstance(rows, BaseException):
                return
            from solver.lm.adapters import file_sha256
            from solver.lm.local import DEFAULT_MODEL

            served = Path(str(props.get("model_path", ""))) if isinstance(props, dict) else Path()
            paths = [Path(str(r.get("path", ""))) for r in rows]
            match = [p for p in paths if p.name == auto.path.name
                     and (not p.is_file() or file_sha256(p) == auto.sha256)]
            if served.name != f"{DEFAULT_MODEL}.gguf" or not match:
                return
            self.adapter, self._lora = auto, None  # the lora field is read again, with this adapter
            self.name = f"openai:{self.model}+{auto.tag}"
            self._note(f"{self.base_url}: serves the embedded model with the shipped adapter {auto.path.name} "
                       "loaded; --adapter auto asks for it in every request (--adapter off: not)")

    async def adapter_request(self) -> dict[str, Any]:
        """The request field that sets which of a llama.cpp server's adapters apply: ``{"lora":
        [{"id", "scale"}, ...]}``, this run's adapter at 1 and every other at 0 (none at all for a
        run without one), read once from the server's ``/lora-adapters``. Sent with every request,
        because what a server applies to a request that does not say is its own setting (llama.cpp
        applied a loaded adapter even under ``--lora-init-without-apply``, measured). {} where the
        server lists no adapters or has no such route (vLLM serves an adapter under its own model
        name). LMError where the run names an adapter and the server lists others but not it."""
        async with self._lora_lock:
            if self._lora is not None:
                return self._lora
            rows = await self._server_adapters()
            if isinstance(rows, BaseException):
                if self.adapter is None or getattr(rows, "status_code", None) in (404, 405, 501):
                    self._lora = {}  # no such route: nothing to set (and a run without an adapter asks none)
                    return self._lora
                raise LMError(_safe_message(rows, self._secret,
                                            f"GET {server_root(self.base_url)}/lora-adapters")) from None
            chosen = None
            if self.adapter is not None:
                name = self.adapter.path.name
                ids = [r["id"] for r in rows if Path(str(r.get("path", ""))).name == name]
                if not ids:
                    have = ", ".join(Path(str(r.get("path", ""))).name for r in rows) or "none"
                    raise LMError(f"the server at {self.base_url} has not loaded the adapter {name} (it has: {have}); "
                                  f"start it with --lora {self.adapter.path} (python -m solver.lm.llama_server_binary "
                                  f"--adapter {self.adapter.path} does)")
                chosen = ids[0]
            self._lora = {"lora": [{"id": r["id"], "scale": 1.0 if r["id"] == chosen else 0.0} for r in rows]} \
                if rows else {}
            return self._lora

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    # -- one HTTP request, retried -------------------------------------------------------------
    async def request(self, what: str, create: Any, **kwargs: Any) -> Any:
        """``create(**kwargs)`` with retries; raises LMError (or ServerUnavailable) on failure.

        A request that has no answer after ``timeout`` seconds is not sent again: the server is
        most likely still working on it (llama.cpp's server finishes requests nobody waits for,
        so a copy would only queue behind the first). It is waited for, said on stderr each time
        the wait doubles, up to ``timeout`` x 2^retries; then the connection is closed (a server
        that cancels on disconnect stops working on it) and the run ends (ServerTooSlow). From
        the first slow request on, this endpoint gets one request at a time. Errors (refused or
        dropped connections, 408/409/429/5xx) are retried ``max_retries`` times with backoff."""
        number = next(self._numbers)
        if what in ("completion", "chat", "score"):  # not the probes themselves, nor listing models
            await self._capacity()
        if _sends_a_body(self, create):
            lora = await self.adapter_request()
            if lora:
                kwargs = {**kwargs, "extra_body": {**(kwargs.get("extra_body") or {}), **lora}}
        errors = 0
        while True:
            try:
                call = lambda: self._patient(what, number, create, kwargs)  # noqa: E731
                if what == "probe parallel":  # measures two requests at once: no bound of ours may queue them
                    return await call()
                return await self._bounded(call)
            except self._errors as exc:
                retry, wait, kind = self._classify(exc, errors)
                errors += 1
                if not retry or errors > self.max_retries:
                    if kind == "refused":
                        raise EndpointDown(f"cannot reach the server at {self.base_url}: connection refused "
                                           f"{errors} times") from None
                    err = LMError(_safe_message(exc, self._secret))
                    err.status = getattr(exc, "status_code", None)
                    raise err from None
                self._note(f"server error: request {number} ({what}) to {self.base_url}: {kind}, "
                           f"retry {errors}/{self.max_retries} in {wait:g} s")
                await asyncio.sleep(wait)

    async def _patient(self, what: str, number: int, create: Any, kwargs: dict[str, Any]) -> Any:
        """One HTTP request, waited for up to the longest wait, never sent twice for slowness."""
        cap = self.timeout * 2 ** self.max_retries
        # The HTTP client's own timeout lies past ours, so that the wait below decides.
        call = asyncio.ensure_future(create(timeout=cap + 5.0, **kwargs))
        waited, mark = 0.0, min(cap, self.timeout)
        try:
            while True:
                done, _ = await asyncio.wait({call}, timeout=mark - waited)
                if done:
                    return call.result()
                waited = mark
                if waited >= cap:
                    raise ServerTooSlow(self._too_slow(what, number, waited, kwargs)) from None
                mark = min(cap, 2 * mark)
                if not self._slow:
                    self._slow = True
                    self._note(f"server slow: {self.base_url} did not answer {what} request {number} within "
                               f"{waited:g} s; sending it one request at a time from now on")
                self._note(f"server slow: request {number} ({what}) has had no answer for {waited:g} s; waiting up "
                           f"to {mark:g} s (not resent: the server is still working on it)")
        finally:
            if not call.done():  # closing the connection lets a server that cancels on disconnect stop
                call.cancel()
                await asyncio.gather(call, return_exceptions=True)

    def _too_slow(self, what: str, number: int, waited: float, kwargs: dict[str, Any]) -> str:
        if what == "score" and kwargs.get("echo"):
            hint = "; this server scores slowly by echo: try --scoring top-logprobs"
        elif what == "score":
            hint = "; try another evaluator (--evaluator value)"
        elif kwargs.get("extra_body") and any(k in kwargs["extra_body"] for k in GRAMMAR_WAYS):
            hint = "; this server decodes grammars slowly: try --grammar off"
        else:
            hint = ""
        return (f"server too slow: {what} request {number} to {self.base_url} had no answer after {waited:g} s "
                f"(the longest wait: --timeout {self.timeout:g} doubled --retries {self.max_retries} times); "
                f"raise --timeout, lower --concurrency, or use a cheaper generator/evaluator{hint}")

    async def _bounded(self, call: Callable[[], Awaitable[Any]]) -> Any:
        async def go() -> Any:
            if self._slow or self._one_at_a_time:
                async with self._serial:
                    return await call()
            return await call()

        if self.request_slots is None:
            return await go()
        async with self.request_slots:
            return await go()

    async def _capacity(self) -> None:
        """Before the first request: how many requests the server serves at once, probed once
        (capability ``parallel``) unless ``concurrency`` was given; a server that serves one at a
        time gets one at a time, so requests queue here, not on the server, where each would
        spend its wait behind the others."""
        if self._capacity_known or not self.probe_parallel:
            return
        async with self._capacity_lock:
            if self._capacity_known:
                return
            caps = await self.capabilities(("parallel",))
            self._capacity_known = True
            if caps.parallel == 1:
                self._one_at_a_time = True
                self._note(f"{self.base_url} serves one request at a time ({caps.parallel_how}); sending it one "
                           "at a time (--concurrency N sets it yourself)")

    def _classify(self, exc: BaseException, attempt: int) -> tuple[bool, float, str]:
        """(retry?, seconds to wait first, what happened)."""
        o = self._openai
        backoff = float(min(30, 2 ** attempt))
        if isinstance(exc, o.APITimeoutError):
            return True, backoff, "timeout"
        if isinstance(exc, o.APIConnectionError):
            refused = _caused_by_refusal(exc)
            return True, backoff, "refused" if refused else "connection lost"
        if isinstance(exc, o.APIStatusError):
            code = exc.status_code
            if code in (408, 409, 429) or code >= 500:
                after = _retry_after(getattr(exc, "response", None))
                return True, backoff if after is None else after, f"HTTP {code}"
            return False, 0.0, f"HTTP {code}"
        return False, 0.0, type(exc).__name__

    def _note(self, line: str) -> None:
        if self.notify is not None:
            self.notify(line)

    # -- capabilities -----------------------------------------------------------------------
    async def capabilities(self, features: Sequence[str] = FEATURES) -> Capabilities:
        """What the server supports, probed with small requests the first time a feature is needed
        and cached per (base URL, model) for the process."""
        async with self._caps_lock:
            self._caps = await probe(self, features)
            return self._caps

    async def grammar_fields(self, grammar: str) -> dict[str, object]:
        """The request-body fields that carry ``grammar`` to this server, as probed once (llama.cpp's
        ``grammar``, vLLM's structured outputs); {} where it takes none, or (``grammar`` auto) where
        it decodes under a grammar GRAMMAR_SLOW times slower per token than without, as measured
        once; said once on stderr: decoding is then unconstrained and the gate alone sorts the
        thoughts."""
        caps = await self.capabilities(("grammar",))
        if not caps.grammar:
            self._say_grammar(f"grammar: not supported by {self.base_url} ({self.model}), decoding unconstrained; "
                              "the gate checks every thought")
            return {}
        if self.grammar == "auto":
            cost = (await self.capabilities(("grammar_cost",))).grammar_cost or {}
            plain, slow = cost.get("plain"), cost.get("grammar")
            if plain and slow and slow > GRAMMAR_SLOW * plain:
                self._say_grammar(f"grammar: {self.base_url} decodes under a grammar {slow / plain:.1f}x slower per "
                                  f"token than without (measured {slow * 1000:.0f} vs {plain * 1000:.0f} ms); decoding "
                                  "unconstrained (--grammar on keeps the grammar); the gate checks every thought")
                return {}
        return caps.body(grammar)

    def _say_grammar(self, line: str) -> None:
        if not self._said_grammar:
            self._said_grammar = True
            self._note(line)

    # -- completions ------------------------------------------------------------------------
    async def _one(self, prompt: str, params: GenParams, n: int, seed: int | None) -> Completion:
        kwargs: dict[str, Any] = {"model": self.model, "n": n, "temperature": params.temperature,
                                  "max_tokens": params.max_tokens + self.thinking.extra_tokens()}
        extra: dict[str, Any] = {}
        if params.grammar is not None:
            extra.update(await self.grammar_fields(params.grammar))
        asked = self._thinking_fields(params.chat)
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if seed is not None:
            kwargs["seed"] = seed
        if params.logprobs is not None:
            if params.chat:
                kwargs["logprobs"] = True
                if params.logprobs > 0:
                    kwargs["top_logprobs"] = params.logprobs
            else:
                kwargs["logprobs"] = params.logprobs
        try:
            if params.chat:
                messages = [{"role": "user", "content": prompt}]
                try:
                    resp = await self._chat(messages, kwargs, extra, asked)
                except LMError as exc:
                    if exc.status in (404, 405, 501):
                        raise LMError(f"the server at {self.base_url} has no chat completions (capability: chat; "
                                      f"it answered HTTP {exc.status}); drop --chat") from None
                    raise
                raw = [(c.message.content or "", _reasoning_field(c.message)) for c in resp.choices]
            else:
                if extra:
                    kwargs["extra_body"] = extra
                resp = await self.request("completion", self._client.completions.create, prompt=prompt, **kwargs)
                raw = [(c.text or "", _reasoning_field(c)) for c in resp.choices]
            logprobs = [_total_logprob(c) for c in resp.choices] if params.logprobs is not None else []
        except _MALFORMED as exc:  # a body that is not JSON, or JSON of the wrong shape
            raise LMError(_safe_message(exc, self._secret, "malformed response from server")) from None
        if not all(isinstance(t, str) and isinstance(r, str) for t, r in raw):
            raise LMError("malformed response from server: a choice's text is not a string")
        texts, thinking = [], []
        for text, field in raw:
            thought, answer = split_thinking(text)
            texts.append(answer)
            thinking.append("\n".join(x for x in (field.strip(), thought) if x))
        usage = getattr(resp, "usage", None)
        completion_tokens = _count(getattr(usage, "completion_tokens", 0))
        reasoning = _reasoning_tokens(usage, completion_tokens, texts, thinking)
        self._check_thinking(thinking, reasoning, len(texts))
        return Completion(texts=texts, prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
                          completion_tokens=completion_tokens, logprobs=logprobs,
                          thinking=thinking if any(thinking) else [], reasoning_tokens=reasoning)

    def _thinking_fields(self, chat: bool) -> dict[str, object]:
        """The ``--thinking`` fields for this request ({} where they do not apply), said once where
        they cannot: completions carry no chat template to pass them to."""
        fields = self.thinking.fields()
        if not fields or self._thinking_refused:
            return {}
        if not chat:
            if not self._said_thinking and self.thinking.mode != "budget":
                self._said_thinking = True
                self._note(f"--thinking {self.thinking}: applies to chat requests (--chat) only; completions have "
                           "no chat template to pass it to, so thinking there is read and kept apart, not turned off")
            return {}
        return fields

    async def _chat(self, messages: list[dict[str, str]], kwargs: dict[str, Any], extra: dict[str, Any],
                    asked: dict[str, object]) -> Any:
        """One chat request with the ``--thinking`` fields; sent again without them, said once,
        when the server refuses them (HTTP 400/422: OpenAI refuses fields it does not know)."""
        body = {**extra, **asked}
        try:
            return await self.request("chat", self._client.chat.completions.create, messages=messages,
                                      **kwargs, **({"extra_body": body} if body else {}))
        except LMError as exc:
            if not asked or exc.status not in (400, 422):
                raise
        self._thinking_refused = True
        self._note(f"--thinking {self.thinking}: {self.base_url} refused the fields that ask for it "
                   f"({', '.join(asked)}); sending without them, thinking is the server's default")
        return await self.request("chat", self._client.chat.completions.create, messages=messages,
                                  **kwargs, **({"extra_body": extra} if extra else {}))

    def _check_thinking(self, thinking: list[str], reasoning_tokens: int, samples: int) -> None:
        """Say once when the server did not do what ``--thinking`` asked."""
        if self._said_ignored or not any(thinking) or self._thinking_refused:
            return
        t = self.thinking
        if t.mode == "off":
            why = "thought anyway"
        elif t.mode == "budget" and reasoning_tokens > t.tokens * max(1, samples):
            why = f"thought {reasoning_tokens} tokens for {samples} sample(s), more than {t.tokens} each"
        else:
            return
        self._said_ignored = True
        self._note(f"--thinking {t}: the model at {self.base_url} {why}: the server ignores the request "
                   "(vLLM and SGLang need a reasoning parser, llama.cpp's server --reasoning-budget); "
                   "the thinking is kept apart from the answer and counted")

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        if self.adapter is not None:  # before the grammar probes, which would read its refusal as a missing feature
            await self.adapter_request()
        if self._ignores_n and params.n > 1:  # learned earlier: ask for every sample at once
            out = Completion(texts=[])
        else:
            out = await self._one(prompt, params, params.n, params.seed)
            self._ignores_n = self._ignores_n or len(out.texts) < params.n
        # The missing samples are independent requests, so they go out at once (within ``request_slots``).
        missing = range(len(out.texts), params.n)
        extra = await asyncio.gather(*(self._one(prompt, params, 1, None if params.seed is None else params.seed + i)
                                       for i in missing))
        for more in extra:
            if not more.texts:
                raise LMError("server returned no choices")
            if more.thinking and not out.thinking:
                out.thinking = [""] * len(out.texts)
            if out.thinking:
                out.thinking.append(more.thinking[0] if more.thinking else "")
            out.reasoning_tokens += more.reasoning_tokens
            out.texts.append(more.texts[0])
            if params.logprobs is not None:
                out.logprobs.append(more.logprobs[0] if more.logprobs else None)
            out.prompt_tokens += more.prompt_tokens
            out.completion_tokens += more.completion_tokens
        out.texts = out.texts[: params.n]
        out.logprobs = out.logprobs[: params.n]
        out.thinking = out.thinking[: params.n]
        return out

    # -- scoring ----------------------------------------------------------------------------
    async def scoring_method(self, continuations: Sequence[str]) -> str:
        """``echo`` (prompt log-probabilities: exact for any continuation, one request per
        continuation) or ``top-logprobs`` (one request: the top alternatives of one generated
        token, exact for one-token labels, such as the value labels). ``--scoring`` forces one;
        ``auto`` takes the cheaper, by the costs measured once per endpoint, of those that give
        what ``continuations`` need: labels either, longer texts echo where the server has it."""
        if self.scoring != "auto":
            return self.scoring
        labels = all(_is_label(c) for c in continuations)
        # Labels: the costs probe learns what it needs (echo there too, unless too slow to matter);
        # texts: echo's support is needed whatever it costs.
        caps = await self.capabilities(("top_logprobs", "costs") if labels else ("echo", "top_logprobs", "costs"))
        method, why = choose_scoring(caps, len(continuations), labels)
        if method is None:
            raise LMError(f"the server at {self.base_url} returns neither prompt log-probabilities (echo) nor top "
                          "log-probabilities of generated tokens: it cannot score; use --evaluator value or vote "
                          "and a generator other than enumerate-rank")
        said = "labels" if labels else "texts"
        if said not in self._said_scoring:
            self._said_scoring.add(said)
            if method == "top-logprobs":  # and whether those requests go streamed (_score_top), measured
                streamed = await self.capabilities(("stream_logprobs",))
                if streamed.stream_logprobs:
                    why += f"; streamed: {streamed.stream_logprobs_how}"
            self._note(f"{self.base_url} ({self.model}): scoring by {method} for {said} ({why})")
        return method

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        if self.adapter is not None:  # before the probes, which would read its refusal as a missing feature
            await self.adapter_request()
        method = await self.scoring_method(continuations)
        if method == "top-logprobs":
            return await self._score_top(prompt, continuations)
        return await self._score_echo(prompt, continuations)

    async def _score_echo(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        """Echoed log-probabilities (legacy completions with echo=True, as vLLM and llama.cpp serve
        them). max_tokens is 1, not 0: llama.cpp's server reads 0 as "no limit" and would generate
        to the end of its context; the one generated token lies past the text and is not counted."""
        async def one(cont: str) -> tuple[float, int]:
            full = prompt + cont
            try:
                resp = await self.request("score", self._client.completions.create, model=self.model,
                                          prompt=full, max_tokens=1, echo=True, logprobs=0, temperature=0.0)
                lp = resp.choices[0].logprobs if resp.choices else None
                if lp is None or lp.token_logprobs is None or lp.text_offset is None:
                    raise LMError(f"the server at {self.base_url} does not return echoed prompt log-probabilities "
                                  "(capability: echo); use --scoring top-logprobs or another evaluator")
                total = float(sum(v for off, v in zip(lp.text_offset, lp.token_logprobs, strict=False)
                                  if v is not None and len(prompt) <= off < len(full)))
            except _MALFORMED as exc:
                raise LMError(_safe_message(exc, self._secret, "malformed response from server")) from None
            return total, _count(getattr(getattr(resp, "usage", None), "prompt_tokens", 0))

        # One echo request per continuation; they are independent, so they go out at once.
        done = await asyncio.gather(*(one(c) for c in continuations))
        return [s for s, _ in done], sum(t for _, t in done)

    async def _score_top(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        """One request: the top-k alternatives for the next token. A continuation's score is the
        log-probability of the longest listed token it starts with (exact for a label that is one
        token and among the k); one that starts with none gets the k-th log-probability, an upper
        bound of its true value."""
        caps = await self.capabilities(("top_logprobs", "stream_logprobs"))
        k = caps.top_logprobs or TOP_K
        try:
            if caps.stream_logprobs:  # the same alternatives, streamed: cheaper where the probe found it so
                top, tokens = await self.request("score", functools.partial(stream_top, self), prompt=prompt, k=k,
                                                 count=caps.stream_logprobs)
                if tokens is None:
                    raise LMError(f"the server at {self.base_url} did not count the prompt's tokens of a streamed "
                                  "answer; use --scoring echo or another evaluator")
            else:
                resp = await self.request("score", self._client.completions.create, model=self.model,
                                          prompt=prompt, max_tokens=1, logprobs=k, temperature=0.0)
                top = first_top(resp.choices[0].logprobs if resp.choices else None)
                tokens = _count(getattr(getattr(resp, "usage", None), "prompt_tokens", 0))
            if not top:
                raise LMError(f"the server at {self.base_url} returned no top log-probabilities "
                              "(capability: top_logprobs)")
            alts = top
        except _MALFORMED as exc:
            raise LMError(_safe_message(exc, self._secret, "malformed response from server")) from None
        floor = min(alts.values())
        scores = []
        for cont in continuations:
            match = [t for t in alts if cont.startswith(t)]
            scores.append(alts[max(match, key=len)] if match else floor)
        return [s if math.isfinite(s) else -1e9 for s in scores], tokens

    async def models(self) -> list[str]:
        resp = await self.request("models", self._client.models.list)
        return [str(getattr(m, "id", m)) for m in getattr(resp, "data", [])]

    async def close(self) -> None:
        await self._client.close()


# What reading a non-JSON body (ValueError) or JSON of the wrong shape raises: a failed call.
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)


def _caused_by_refusal(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or type(seen).__name__ == "ConnectError":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _retry_after(response: Any) -> float | None:
    """Seconds the server asked to wait (retry-after-ms, or Retry-After in seconds), at most 60."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) / scale
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            return min(value, 60.0)
    return None


def _sends_a_body(backend: OpenAIBackend, create: Any) -> bool:
    """Whether ``create`` is a completion request (plain, chat or streamed) that takes ``extra_body``."""
    if isinstance(create, functools.partial):
        return create.func is stream_top
    return create in (backend._client.completions.create, backend._client.chat.completions.create)


def _count(value: object) -> int:
    """A token count from a server; anything but a non-negative integer counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _is_label(continuation: str) -> bool:
    """A short word (the value labels: " sure", " likely", " impossible"): one token, or few, that
    the top log-probabilities of one generated token can score."""
    word = continuation.strip()
    return 0 < len(word) <= 12 and not any(ch.isspace() for ch in word)


def choose_scoring(caps: Capabilities, n: int, labels: bool) -> tuple[str | None, str]:
    """The scoring mode for ``n`` continuations (``labels``: all short words) and why, from what
    the server supports and what each mode measured (``caps.costs``): echo sends one request per
    continuation, top-logprobs one in all, and serves labels only exactly."""
    costs = caps.costs or {}
    echo = costs.get("echo") if caps.echo else None
    top = costs.get("top-logprobs") if caps.top_logprobs else None
    over = costs.get("echo_over")
    measured = ", ".join(f"{k} {v:.3g} s" for k, v in (("echo", echo), ("top-logprobs", top)) if v is not None)
    if over is not None:
        measured += (", " if measured else "") + f"echo over {over:.3g} s (probe abandoned)"
    if labels and caps.top_logprobs:
        if echo is not None and top is not None:
            if n * echo <= top:
                return "echo", f"cheaper here: {n} echo requests per state vs one top-logprobs; measured {measured}"
            return "top-logprobs", f"cheaper here: one request per state vs {n} echo; measured {measured}"
        if over is not None:
            return "top-logprobs", f"echo is far slower here: {measured}"
        if caps.echo:
            return "echo", "the server echoes prompt log-probabilities"
        return "top-logprobs", f"the server has no echo; top {caps.top_logprobs} log-probabilities of one token"
    if caps.echo:
        return "echo", ("texts need echo (top-logprobs scores one token)" if caps.top_logprobs
                        else "the server echoes prompt log-probabilities") + (f"; measured {measured}" if measured
                                                                              else "")
    if caps.top_logprobs:
        return "top-logprobs", f"the server has no echo; top {caps.top_logprobs} log-probabilities of one token"
    return None, "neither echo nor top log-probabilities"


def _reasoning_field(obj: Any) -> str:
    """The thinking a server sent beside the answer: ``reasoning_content`` (vLLM before 0.11,
    SGLang, llama.cpp's server, DeepSeek's API) or ``reasoning`` (vLLM 0.11 and later, Ollama's
    OpenAI API); "" when neither is there."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(obj, name, None)
        if value is None:
            value = (getattr(obj, "model_extra", None) or {}).get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _reasoning_tokens(usage: Any, completion_tokens: int, texts: list[str], thinking: list[str]) -> int:
    """Tokens spent thinking: the server's count (``completion_tokens_details.reasoning_tokens``,
    OpenAI's and vLLM's) where it gives one; else the thinking's share of the completion tokens
    by characters (servers count thinking in ``completion_tokens`` either way)."""
    details = getattr(usage, "completion_tokens_details", None)
    given = getattr(details, "reasoning_tokens", None)
    if isinstance(given, int) and not isinstance(given, bool) and given >= 0:
        return given
    thought = sum(len(t) for t in thinking)
    total = thought + sum(len(t) for t in texts)
    return round(completion_tokens * thought / total) if thought else 0


def _total_logprob(choice: Any) -> float | None:
    """Sum of the sampled tokens' log-probabilities of one choice (legacy or content form, see
    solver/lm/logprobs.py); None when the server sent none."""
    return total_logprob(getattr(choice, "logprobs", None))


def _safe_message(exc: BaseException, secret: str | None = None, prefix: str = "") -> str:
    """An error line without any secret: the API key (given, or from the environment) is never
    echoed, even when a server quotes it back."""
    msg = f"{prefix + ': ' if prefix else ''}{type(exc).__name__}: {exc}"
    for key in (secret, os.environ.get("OPENAI_API_KEY")):
        if key and key != "not-needed":
            msg = msg.replace(key, "***")
    return msg.splitlines()[0][:300] if msg.strip() else type(exc).__name__
