"""The one entry point generators and evaluators use to reach a model.

It checks the budget before each request, serves and records the cache, counts usage, makes
identical requests within a run once, and turns a failed call into a recorded failure (an
empty answer) instead of a crash.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Awaitable, Callable, Sequence, TypeVar

from solver.budget import BudgetExhausted, Usage
from solver.lm.base import Backend, GenParams, LMError, ServerUnavailable
from solver.lm.cache import Cache, CacheMiss, CacheMode, cache_key

EventSink = Callable[[dict[str, object]], None]
T = TypeVar("T")


class _OutOfTime(LMError):
    """A request cut off because the run's seconds budget ran out while it was in flight."""


def _tokens_key(keys: list[str]) -> str:
    return cache_key(kind="tokens", keys=keys)


def _logprobs_key(keys: list[str]) -> str:
    return cache_key(kind="logprobs", keys=keys)


class LMClient:
    def __init__(self, backend: Backend, usage: Usage | None = None, cache: Cache | None = None,
                 mode: CacheMode = "record", concurrency: int = 1) -> None:
        self.backend = backend
        self.usage = usage or Usage(model=backend.model)
        self.cache = cache
        self.mode: CacheMode = mode if cache is not None else "off"
        self.on_event: EventSink | None = None
        # A pool of endpoints takes ``concurrency`` requests on each of them.
        limit = concurrency * len(getattr(backend, "endpoints", [None])) if backend.concurrent else 1
        self._sem = asyncio.Semaphore(max(1, limit))
        if hasattr(backend, "request_slots"):  # a backend that fans one call out: the same bound N
            backend.request_slots = asyncio.Semaphore(max(1, limit))
        self._memo: dict[str, list[str] | list[float]] = {}
        self._logprobs: dict[str, list[float | None]] = {}

    @property
    def chat(self) -> bool:
        return False

    def _key(self, kind: str, prompt: str, extra: dict[str, object], index: int | str) -> str:
        return cache_key(backend=self.backend.name, model=self.backend.model, kind=kind,
                         prompt=prompt, params=extra, index=index)

    def _emit(self, event: dict[str, object]) -> None:
        if self.on_event is not None:
            self.on_event(event)

    async def _send(self, call: Callable[[], Awaitable[T]]) -> T:
        """Send one request once a concurrency slot is free. The token and time budgets are checked
        again while holding the slot, because requests that finished meanwhile may have spent
        them (so tokens overrun by at most one call per slot); the request is cut off, as a
        failed call, when the seconds budget runs out (retries and backoff included)."""
        async with self._sem:
            try:
                b = self.usage.budget
                if b.tokens is not None and self.usage.tokens >= b.tokens:
                    raise BudgetExhausted("tokens")
                self.usage.check_time()
            except BudgetExhausted:
                self.usage.calls -= 1  # counted on entry, but never sent
                raise
            left = None if b.seconds is None else max(0.0, b.seconds - self.usage.seconds)
            try:
                return await asyncio.wait_for(call(), left)
            except asyncio.TimeoutError:
                raise _OutOfTime("the seconds budget ran out during the call") from None

    def _replay_tokens(self, keys: list[str]) -> None:
        """Count the tokens a recorded request used when it was made, so a replayed run reports
        the same usage and stops at the same token budget as the live run did."""
        assert self.cache is not None
        got = self.cache.get(_tokens_key(keys))
        if isinstance(got, list) and len(got) == 2 and all(isinstance(x, int) for x in got):
            self.usage.prompt_tokens += got[0]
            self.usage.completion_tokens += got[1]
            self.usage.replayed_tokens += got[0] + got[1]

    def _sample_keys(self, prompt: str, params: GenParams) -> list[str]:
        return [self._key("chat" if params.chat else "complete", prompt, params.key(), i) for i in range(params.n)]

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
        """``params.n`` texts; [] when the call failed (recorded in usage and the trace)."""
        self.usage.check_call()
        self.usage.calls += 1
        keys = self._sample_keys(prompt, params)
        memo_key = "|".join(keys)
        if memo_key in self._memo:
            self.usage.cache_hits += 1
            return list(self._memo[memo_key])  # type: ignore[arg-type]
        if self.cache is not None and self.mode != "off":
            hits = [self.cache.get(k) for k in keys]
            if all(h is not None for h in hits):
                self.usage.cache_hits += 1
                self._replay_tokens(keys)
                texts = [str(h) for h in hits]
                self._memo[memo_key] = texts
                if params.logprobs is not None:
                    got = self.cache.get(_logprobs_key(keys))
                    if isinstance(got, list):
                        self._logprobs[memo_key] = [float(x) if isinstance(x, (int, float)) else None for x in got]
                return texts
            if self.mode == "replay":
                raise CacheMiss(f"replay-only cache has no recording for this {purpose or 'request'} "
                                f"({self.backend.name}); record it first with --cache-mode record")
        try:
            comp = await self._send(lambda: self.backend.complete(prompt, params))
        except LMError as exc:
            self.usage.failed_calls += 1
            self._emit({"event": "lm_error", "purpose": purpose, "error": str(exc)})
            if isinstance(exc, _OutOfTime):  # recorded as failed, and the search stops there
                raise BudgetExhausted("seconds") from None
            if isinstance(exc, ServerUnavailable):  # every later call would fail or stall too: end the run
                raise
            return []
        self.usage.backend_calls += 1
        self.usage.prompt_tokens += comp.prompt_tokens
        self.usage.completion_tokens += comp.completion_tokens
        if self.cache is not None and self.mode == "record":
            for k, t in zip(keys, comp.texts, strict=False):
                self.cache.put(k, t)
            self.cache.put(_tokens_key(keys), [comp.prompt_tokens, comp.completion_tokens])
            if params.logprobs is not None:
                self.cache.put(_logprobs_key(keys), list(comp.logprobs))
        self._memo[memo_key] = list(comp.texts)
        if params.logprobs is not None:
            self._logprobs[memo_key] = list(comp.logprobs)
        return list(comp.texts)

    async def score(self, prompt: str, continuations: Sequence[str], purpose: str = "") -> list[float] | None:
        """Log-probability of each continuation after ``prompt``; None when the call failed."""
        self.usage.check_call()
        self.usage.calls += 1
        key = self._key("score", prompt, {"continuations": list(continuations)}, 0)
        if key in self._memo:
            self.usage.cache_hits += 1
            return list(self._memo[key])  # type: ignore[arg-type]
        if self.cache is not None and self.mode != "off":
            hit = self.cache.get(key)
            if isinstance(hit, list):
                self.usage.cache_hits += 1
                self._replay_tokens([key])
                self._memo[key] = [float(x) for x in hit]
                return [float(x) for x in hit]
            if self.mode == "replay":
                raise CacheMiss(f"replay-only cache has no recording for this {purpose or 'score'} "
                                f"request ({self.backend.name})")
        try:
            scores, tokens = await self._send(lambda: self.backend.score(prompt, continuations))
        except LMError as exc:
            self.usage.failed_calls += 1
            self._emit({"event": "lm_error", "purpose": purpose, "error": str(exc)})
            if isinstance(exc, _OutOfTime):  # recorded as failed, and the search stops there
                raise BudgetExhausted("seconds") from None
            if isinstance(exc, ServerUnavailable):  # every later call would fail or stall too: end the run
                raise
            return None
        self.usage.backend_calls += 1
        self.usage.prompt_tokens += tokens
        if self.cache is not None and self.mode == "record":
            self.cache.put(key, scores)
            self.cache.put(_tokens_key([key]), [tokens, 0])
        self._memo[key] = list(scores)
        return list(scores)

    async def gather(self, *coros):  # type: ignore[no-untyped-def]
        """Run several requests concurrently (bounded by the backend's concurrency)."""
        return await gather_all(*coros)

    async def close(self) -> None:
        await self.backend.close()
        if self.cache is not None:
            self.cache.close()


async def gather_all(*coros):  # type: ignore[no-untyped-def]
    """``asyncio.gather`` that, when one request fails (say, a budget ran out), still waits for the
    others before raising the first failure (in argument order). Requests the budget already
    allowed thus complete, are counted and recorded (a replay of the run finds them), and none
    outlives the search that made it. Cancelling the caller cancels them all."""
    results = await asyncio.gather(*coros, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results
