"""One run's use of a shared ``LMClient``: the entry point generators and evaluators use to
reach a model.

A session checks its run's budget before each request, serves and records the client's cache,
counts its run's usage, makes identical requests within the run once, and turns a failed call
into a recorded failure (an empty answer, reported to the run's event sink) instead of a crash.
Everything here belongs to one run; what runs share (backend, cache, request slots) stays on
the client, so concurrent runs on one client never see each other's usage, budget or events.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from typing import Any, Awaitable, Callable, Literal, Protocol, Sequence, TypeVar, cast, get_args

from solver.budget import BudgetExhausted, Usage
from solver.lm.base import Backend, GenParams, LMError, ServerUnavailable
from solver.lm.cache import Cache, CacheMiss, CacheMode, cache_key

EventSink = Callable[[dict[str, object]], None]
T = TypeVar("T")

__all__ = ["OUT_OF_TIME", "EventSink", "Session", "SharedClient", "gather_all", "trace_sink"]


class SharedClient(Protocol):
    """What a session uses of the client that runs share (``solver.lm.client.LMClient``, which
    makes sessions): written here so that a session needs no import of the client."""

    @property
    def backend(self) -> Backend: ...

    @property
    def cache(self) -> Cache | None: ...

    @property
    def mode(self) -> CacheMode: ...

    def key(self, kind: str, prompt: str, extra: dict[str, object], index: int | str) -> str: ...

    def slot(self) -> AbstractAsyncContextManager[None]: ...


LmEvent = Literal["lm_error", "thinking"]  # the events the model layer writes (solver.trace_format)


class _Emits(Protocol):
    def emit(self, event: LmEvent, **fields: Any) -> None: ...


def trace_sink(trace: _Emits) -> EventSink:
    """An event sink that writes each event (``{"event": name, **fields}``, ``name`` one of
    ``LmEvent``) into ``trace``."""

    def sink(event: dict[str, object]) -> None:
        fields = dict(event)
        name = fields.pop("event")
        if name not in get_args(LmEvent):
            raise ValueError(f"the model layer writes no {name!r} event")
        trace.emit(cast(LmEvent, name), **fields)

    return sink


# The error of a call cut off by the run's seconds budget (its ``lm_error`` event says this): a
# budget stop, not a model failure (``tot bench`` does not count such a pair as errored).
OUT_OF_TIME = "the seconds budget ran out during the call"


class _OutOfTime(LMError):
    """A request cut off because the run's seconds budget ran out while it was in flight."""


class _NotSent(ServerUnavailable):
    """A request of a run whose server already stopped answering: never sent (the run is ending;
    waiting out each queued request's own timeout would hold it for minutes)."""


# How a saved run's failed request failed (``Session.memo_state``): a failed call, or one the
# seconds budget cut off (which stopped the search there).
_FAILURES = ("failed", "seconds")
_MEMO_PARTS = ("texts", "scores", "logprobs", "failed")


def _table(value: object, what: str, item: Callable[[object], Any]) -> dict[str, list[Any]]:
    """A saved memo's table (request key -> list), each item through ``item`` (ValueError in one
    line where it does not fit)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, list) for k, v in value.items()):
        raise ValueError(f"the checkpoint's model memo is malformed ({what}: not lists by request)")
    try:
        return {k: [item(x) for x in v] for k, v in value.items()}
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"the checkpoint's model memo is malformed (a value of its {what})") from None


def _text(x: object) -> str:
    if not isinstance(x, str):
        raise TypeError
    return x


def _number(x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError
    return float(x)  # OverflowError for an int beyond a float


def _number_or_none(x: object) -> float | None:
    return None if x is None else _number(x)


def _failure(x: object) -> str:
    if x not in _FAILURES:
        raise ValueError
    return str(x)


def _tokens_key(keys: list[str]) -> str:
    return cache_key(kind="tokens", keys=keys)


def _logprobs_key(keys: list[str]) -> str:
    return cache_key(kind="logprobs", keys=keys)


def _thinking_key(keys: list[str]) -> str:
    return cache_key(kind="thinking", keys=keys)


@dataclass(frozen=True, slots=True)
class _Failure:
    """What a failed request hands the identical requests that waited for it."""

    error: LMError


class Session:
    """One run on a shared client: its ``usage`` (and budget), its event sink and its memo."""

    __slots__ = ("_client", "_usage", "_on_event", "_texts", "_scores", "_logprobs", "_failures", "_pending",
                 "_unavailable")

    def __init__(self, client: SharedClient, usage: Usage | None = None,
                 on_event: EventSink | None = None) -> None:
        self._client = client
        self._usage = usage if usage is not None else Usage(model=client.backend.model)
        self._on_event = on_event
        self._texts: dict[str, list[str]] = {}  # the memo: each completion request's answer
        self._scores: dict[str, list[float]] = {}  # and each scoring request's
        self._logprobs: dict[str, list[float | None]] = {}
        # Every failed request of this run, by key, in order (a checkpoint keeps them: its replay
        # fails them again, so it rebuilds the run as it was, and asks the model nothing).
        self._failures: dict[str, list[str]] = {}
        # Requests of this run still in flight, by memo key: an identical request made meanwhile
        # waits for the first one's answer (a memo hit, as it is in a replay, where the recorded
        # answer arrives at once), so live and replayed runs count the same calls and tokens.
        self._pending: dict[str, asyncio.Future[Any]] = {}
        # Set when a request of this run found the server gone or stalled: the run ends, and the
        # requests still queued for a slot fail at once instead of each waiting its own timeout.
        self._unavailable: ServerUnavailable | None = None

    @property
    def client(self) -> SharedClient:
        return self._client

    def memo_state(self) -> dict[str, dict[str, list[Any]]]:
        """This run's memo, for a checkpoint, as JSON: the answers by request (``texts`` of
        completions, ``scores`` of scoring requests), their log-probabilities and the requests
        that failed (``failed``: how, in order). A resumed run answers the requests made before it
        from here, as the run did."""
        if self._pending:
            raise RuntimeError("a checkpoint between requests only: some of this run's requests are in flight")
        return {"texts": dict(self._texts), "scores": dict(self._scores), "logprobs": dict(self._logprobs),
                "failed": {k: list(v) for k, v in self._failures.items()}}

    def restore_memo(self, state: object) -> None:
        """The memo a checkpoint saved (``memo_state``); ValueError in one line where it is malformed
        (nothing is restored then)."""
        if not isinstance(state, dict) or set(state) != set(_MEMO_PARTS):
            raise ValueError(f"the checkpoint's model memo is malformed (not {', '.join(_MEMO_PARTS)})")
        texts, scores = _table(state["texts"], "texts", _text), _table(state["scores"], "scores", _number)
        logprobs = _table(state["logprobs"], "log-probabilities", _number_or_none)
        failures = _table(state["failed"], "failed requests", _failure)
        self._texts, self._scores, self._logprobs, self._failures = texts, scores, logprobs, failures

    @property
    def usage(self) -> Usage:
        """This run's counts and budget (the same object for the whole session)."""
        return self._usage

    @property
    def backend(self) -> Backend:
        return self._client.backend

    @property
    def chat(self) -> bool:
        """False: a request is a chat request only when its ``GenParams.chat`` says so."""
        return False

    def _emit(self, event: dict[str, object]) -> None:
        if self._on_event is not None:
            self._on_event(event)

    async def _send(self, call: Callable[[], Awaitable[T]]) -> T:
        """Send one request once a concurrency slot of the client is free. The token and time
        budgets are checked again while holding the slot, because requests of this run that
        finished meanwhile may have spent them (so tokens overrun by at most one call per slot);
        the request is cut off, as a failed call, when the seconds budget runs out (retries and
        backoff included)."""
        usage = self._usage
        async with self._client.slot():
            if self._unavailable is not None:
                usage.calls -= 1  # counted on entry, but never sent
                raise _NotSent(str(self._unavailable))
            try:
                b = usage.budget
                if b.tokens is not None and usage.tokens >= b.tokens:
                    raise BudgetExhausted("tokens")
                usage.check_time()
            except BudgetExhausted:
                usage.calls -= 1  # counted on entry, but never sent
                raise
            left = None if b.seconds is None else max(0.0, b.seconds - usage.seconds)
            try:
                return await asyncio.wait_for(call(), left)
            except asyncio.TimeoutError:
                raise _OutOfTime(OUT_OF_TIME) from None

    def _failed(self, exc: LMError, purpose: str, key: str) -> None:
        """Count, remember and report a failed call; raise when the run cannot go on."""
        if isinstance(exc, _NotSent):  # not a call: the failure that ends the run is already reported
            raise exc
        self._usage.failed_calls += 1
        self._failures.setdefault(key, []).append("seconds" if isinstance(exc, _OutOfTime) else "failed")
        self._emit({"event": "lm_error", "purpose": purpose, "error": str(exc)})
        if isinstance(exc, _OutOfTime):  # recorded as failed, and the search stops there
            raise BudgetExhausted("seconds") from None
        if isinstance(exc, ServerUnavailable):  # every later call would fail or stall too: end the run
            self._unavailable = self._unavailable or exc
            raise exc

    def _thought(self, purpose: str, thinking: list[str], tokens: int) -> None:
        """Keep what a reasoning model thought in the run's trace (one ``thinking`` event per
        request, each sample's thinking in order) and count its tokens apart; they are part of
        the completion tokens too (live, and replayed by ``_replay_tokens``), so the budget
        counts them once."""
        if not any(thinking):
            return
        self._usage.reasoning_tokens += tokens
        self._emit({"event": "thinking", "purpose": purpose, "thinking": "\n\n".join(t for t in thinking if t),
                    "reasoning_tokens": tokens})

    def _replay_tokens(self, keys: list[str]) -> None:
        """Count the tokens a recorded request used when it was made, so a replayed run reports
        the same usage and stops at the same token budget as the live run did."""
        cache = self._client.cache
        assert cache is not None
        got = cache.get(_tokens_key(keys))
        if isinstance(got, list) and len(got) == 2 and all(isinstance(x, int) for x in got):
            self._usage.prompt_tokens += got[0]
            self._usage.completion_tokens += got[1]
            self._usage.replayed_tokens += got[0] + got[1]

    def _sample_keys(self, prompt: str, params: GenParams) -> list[str]:
        kind = "chat" if params.chat else "complete"
        return [self._client.key(kind, prompt, params.key(), i) for i in range(params.n)]

    async def complete_scored(self, prompt: str, params: GenParams,
                              purpose: str = "") -> list[tuple[str, float | None]]:
        """Like ``complete``, with each sample's total log-probability (None where the backend
        gave none). Recorded and replayed with the texts."""
        if params.logprobs is None:
            params = replace(params, logprobs=0)
        texts = await self.complete(prompt, params, purpose)
        lps = self._logprobs.get("|".join(self._sample_keys(prompt, params)), [])
        return [(t, lps[i] if i < len(lps) else None) for i, t in enumerate(texts)]

    async def complete(self, prompt: str, params: GenParams, purpose: str = "") -> list[str]:
        """``params.n`` texts; [] when the call failed (recorded in usage and the event sink)."""
        usage = self._usage
        keys = self._sample_keys(prompt, params)
        memo_key = "|".join(keys)
        usage.check_call()
        usage.calls += 1
        if memo_key in self._texts:
            usage.cache_hits += 1
            return list(self._texts[memo_key])
        if memo_key in self._pending:
            usage.cache_hits += 1
            got = await asyncio.shield(self._pending[memo_key])
            return [] if self._shared_failure(got, purpose, memo_key) else list(got)
        result = await self._first(memo_key, self._complete_new(prompt, params, purpose, keys, memo_key))
        return [] if isinstance(result, _Failure) else result

    def _shared_failure(self, got: Any, purpose: str, key: str) -> bool:
        """A request that waited for an identical one in flight shares its failure as its own (an
        lm_error event and a failed call, no cache hit), exactly as when it is made after that one
        failed: so the trace does not depend on whether the two overlapped (a live run and its
        replay from a cache interleave differently)."""
        if not isinstance(got, _Failure):
            return False
        self._usage.cache_hits -= 1
        self._failed(got.error, purpose, key)
        return True

    async def _first(self, key: str, request: Awaitable[T]) -> T:
        """Make ``request``, the first of its key in flight; identical ones wait for its answer."""
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[key] = done
        try:
            result = await request
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                done.cancel()
            else:
                done.set_exception(exc)
                done.exception()  # retrieved: a request no one waited for logs nothing
            raise
        else:
            done.set_result(result)
            return result
        finally:
            del self._pending[key]

    async def _complete_new(self, prompt: str, params: GenParams, purpose: str, keys: list[str],
                            memo_key: str) -> list[str] | _Failure:
        usage, client = self._usage, self._client
        cache, mode = client.cache, client.mode
        if cache is not None and mode != "off":
            hits = [cache.get(k) for k in keys]
            if all(h is not None for h in hits):
                usage.cache_hits += 1
                self._replay_tokens(keys)
                texts = [str(h) for h in hits]
                self._texts[memo_key] = texts
                if params.logprobs is not None:
                    got = cache.get(_logprobs_key(keys))
                    if isinstance(got, list):
                        self._logprobs[memo_key] = [float(x) if isinstance(x, (int, float)) else None for x in got]
                thought = cache.get(_thinking_key(keys))
                if isinstance(thought, dict):
                    self._thought(purpose, [str(t) for t in thought.get("thinking", [])],
                                  int(thought.get("tokens", 0)))
                return texts
            if mode == "replay":
                raise CacheMiss(f"replay-only cache has no recording for this {purpose or 'request'} "
                                f"({client.backend.name}); record it first with --cache-mode record")
        try:
            comp = await self._send(lambda: client.backend.complete(prompt, params))
        except LMError as exc:
            self._failed(exc, purpose, memo_key)
            return _Failure(exc)
        usage.backend_calls += 1
        usage.prompt_tokens += comp.prompt_tokens
        usage.completion_tokens += comp.completion_tokens
        self._thought(purpose, comp.thinking, comp.reasoning_tokens)
        if cache is not None and mode == "record":
            for k, t in zip(keys, comp.texts, strict=False):
                cache.put(k, t)
            cache.put(_tokens_key(keys), [comp.prompt_tokens, comp.completion_tokens])
            if params.logprobs is not None:
                cache.put(_logprobs_key(keys), list(comp.logprobs))
            if any(comp.thinking):
                cache.put(_thinking_key(keys), {"thinking": list(comp.thinking), "tokens": comp.reasoning_tokens})
        self._texts[memo_key] = list(comp.texts)
        if params.logprobs is not None:
            self._logprobs[memo_key] = list(comp.logprobs)
        return list(comp.texts)

    async def score(self, prompt: str, continuations: Sequence[str], purpose: str = "") -> list[float] | None:
        """Log-probability of each continuation after ``prompt``; None when the call failed."""
        got = await self._score(prompt, continuations, purpose)
        self._usage.score_calls += 1  # as ``calls``: cache hits included, so a replayed run counts the same
        if got is None:
            self._usage.failed_scores += 1
        return got

    async def _score(self, prompt: str, continuations: Sequence[str], purpose: str) -> list[float] | None:
        usage, client = self._usage, self._client
        key = client.key("score", prompt, {"continuations": list(continuations)}, 0)
        usage.check_call()
        usage.calls += 1
        memo = self._scores.get(key)
        if memo is not None and len(memo) == len(continuations):  # one per continuation, as asked
            usage.cache_hits += 1
            return list(memo)
        if key in self._pending:
            usage.cache_hits += 1
            got = await asyncio.shield(self._pending[key])
            return None if self._shared_failure(got, purpose, key) else list(got)
        result = await self._first(key, self._score_new(prompt, continuations, purpose, key))
        return None if isinstance(result, _Failure) else result

    async def _score_new(self, prompt: str, continuations: Sequence[str], purpose: str,
                         key: str) -> list[float] | _Failure:
        usage, client = self._usage, self._client
        cache, mode = client.cache, client.mode
        if cache is not None and mode != "off":
            hit = cache.get(key)
            if isinstance(hit, list):
                usage.cache_hits += 1
                self._replay_tokens([key])
                self._scores[key] = [float(x) for x in hit]
                return [float(x) for x in hit]
            if mode == "replay":
                raise CacheMiss(f"replay-only cache has no recording for this {purpose or 'score'} "
                                f"request ({client.backend.name})")
        try:
            scores, tokens = await self._send(lambda: client.backend.score(prompt, continuations))
        except LMError as exc:
            self._failed(exc, purpose, key)
            return _Failure(exc)
        usage.backend_calls += 1
        usage.prompt_tokens += tokens
        if cache is not None and mode == "record":
            cache.put(key, scores)
            cache.put(_tokens_key([key]), [tokens, 0])
        self._scores[key] = list(scores)
        return list(scores)

    async def gather(self, *coros: Awaitable[T]) -> list[T]:
        """Run several requests concurrently (bounded by the client's request slots)."""
        return await gather_all(*coros)


async def gather_all(*coros: Awaitable[T]) -> list[T]:
    """``asyncio.gather`` that, when one request fails (say, a budget ran out), still waits for the
    others before raising the first failure (in argument order). Requests the budget already
    allowed thus complete, are counted and recorded (a replay of the run finds them), and none
    outlives the search that made it. Cancelling the caller cancels them all."""
    results = await asyncio.gather(*coros, return_exceptions=True)
    out: list[T] = []
    for r in results:
        if isinstance(r, BaseException):
            raise r
        out.append(r)
    return out
