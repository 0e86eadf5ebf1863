"""Several OpenAI-compatible endpoints serving one model, used as one backend.

Each request goes to the live endpoint with the fewest requests in flight, and each endpoint takes
at most ``concurrency`` HTTP requests at once. An endpoint that refuses connections (or times out
on every try) is set aside for ``revive_after`` seconds and its requests go to the others; then it
is tried again. When every endpoint is set aside the call fails with one line naming each.

The pool's name is the single backend's name (``openai:MODEL``), so record/replay keys do not
depend on how many machines served a run.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Sequence, TypeVar

from solver.lm.base import Completion, EndpointDown, GenParams, ServerUnavailable
from solver.lm.openai_backend import Notify, OpenAIBackend, stderr_notice

__all__ = ["EndpointPool", "split_urls"]

T = TypeVar("T")


def split_urls(values: Sequence[str] | str | None) -> list[str]:
    """``--base-url`` values, each possibly comma-separated, in order, without repeats."""
    if values is None:
        return []
    items = [values] if isinstance(values, str) else list(values)
    out: list[str] = []
    for item in items:
        for url in (u.strip() for u in item.split(",")):
            if url and url not in out:
                out.append(url)
    return out


class EndpointPool:
    supports_chat = True
    concurrent = True

    def __init__(self, endpoints: Sequence[OpenAIBackend], concurrency: int = 4, revive_after: float = 30.0,
                 notify: Notify | None = stderr_notice) -> None:
        if not endpoints:
            raise ValueError("an endpoint pool needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.model = self.endpoints[0].model
        self.name = self.endpoints[0].name
        self.revive_after = revive_after
        self.notify = notify
        self.per_endpoint = max(1, concurrency)
        for e in self.endpoints:
            e.request_slots = asyncio.Semaphore(self.per_endpoint)
        self.busy = [0] * len(self.endpoints)
        self.served = [0] * len(self.endpoints)
        self._down_until = [0.0] * len(self.endpoints)
        self._why: list[str] = [""] * len(self.endpoints)

    def __repr__(self) -> str:
        return f"EndpointPool({[e.base_url for e in self.endpoints]!r})"

    async def _route(self, call: Callable[[OpenAIBackend], Awaitable[T]]) -> T:
        tried: set[int] = set()
        while True:
            now = time.monotonic()
            live = [i for i in range(len(self.endpoints)) if i not in tried and self._down_until[i] <= now]
            if not live:
                why = "; ".join(f"{e.base_url}: {self._why[i] or 'down'}" for i, e in enumerate(self.endpoints))
                raise EndpointDown(f"all {len(self.endpoints)} endpoints are unavailable ({why})")
            i = min(live, key=lambda j: (self.busy[j], self.served[j]))
            self.busy[i] += 1
            try:
                out = await call(self.endpoints[i])
                self.served[i] += 1
                return out
            except ServerUnavailable as exc:
                tried.add(i)
                self._down_until[i] = time.monotonic() + self.revive_after
                self._why[i] = str(exc)[:120]
                if self.notify is not None:
                    self.notify(f"endpoint {self.endpoints[i].base_url} is unavailable ({str(exc)[:80]}); "
                                f"its requests go to the others, it is tried again in {self.revive_after:g} s")
            finally:
                self.busy[i] -= 1

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        return await self._route(lambda e: e.complete(prompt, params))

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        return await self._route(lambda e: e.score(prompt, continuations))

    async def capabilities(self, features: Any = None) -> Any:
        return await self._route(lambda e: e.capabilities(*(() if features is None else (features,))))

    async def close(self) -> None:
        for e in self.endpoints:
            await e.close()
