"""The model connection that runs share: backend, record/replay cache and the bound on requests
in flight.

Per-run state (usage and budget, where failed calls are reported, the within-run memo) lives in
a ``Session`` (``solver/lm/session.py``), made by ``LMClient.session``. Many sessions may use one
client at once, so searches running concurrently on one client each get exactly their own
trace and usage. The client holds nothing that belongs to one run, and its attributes are fixed.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import AsyncIterator

from solver.budget import Usage
from solver.lm.base import Backend
from solver.lm.cache import Cache, CacheMode, cache_key
from solver.lm.session import EventSink, Session

__all__ = ["LMClient"]


class LMClient:
    """Shared by every run that uses one model: ``session()`` gives each run its own view."""

    __slots__ = ("_backend", "_cache", "_mode", "_sem")

    def __init__(self, backend: Backend, cache: Cache | None = None, mode: CacheMode = "record",
                 concurrency: int = 1) -> None:
        self._backend = backend
        self._cache = cache
        self._mode: CacheMode = mode if cache is not None else "off"
        # A pool of endpoints takes ``concurrency`` requests on each of them.
        # A backend that serves one request at a time may still take several to batch them
        # (``batch_slots``: the embedded model scores requests made together in one pass).
        limit = (concurrency * len(getattr(backend, "endpoints", [None])) if backend.concurrent
                 else getattr(backend, "batch_slots", 1))
        self._sem = asyncio.Semaphore(max(1, limit))
        if hasattr(backend, "request_slots"):  # a backend that fans one call out: the same bound N
            backend.request_slots = asyncio.Semaphore(max(1, limit))

    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def cache(self) -> Cache | None:
        return self._cache

    @property
    def mode(self) -> CacheMode:
        return self._mode

    def session(self, usage: Usage | None = None, on_event: EventSink | None = None) -> Session:
        """A new run's view of this client: ``usage`` (with its budget; default: fresh counters,
        no limits) counts and limits its requests, ``on_event`` receives its failed calls
        (``{"event": "lm_error", ...}``), and identical requests within it are made once."""
        return Session(self, usage, on_event)

    def key(self, kind: str, prompt: str, extra: dict[str, object], index: int | str) -> str:
        """The record/replay key of one request (or one sample of it)."""
        return cache_key(backend=self._backend.name, model=self._backend.model, kind=kind,
                         prompt=prompt, params=extra, index=index)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the backend's request slots (shared by every session of this client)."""
        async with self._sem:
            yield

    async def close(self) -> None:
        await self._backend.close()
        if self._cache is not None:
            self._cache.close()
