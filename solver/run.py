"""Assemble a run from settings: backend, cache, client, generator, evaluator and search."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solver.budget import Budget, Usage
from solver.capabilities import DeclaresNeeds, OwnEvaluators, OwnGenerators, TunesParts, require_parts, task_options
from solver.evaluators import EVALUATORS, Evaluator, make_evaluator
from solver.expansion import Expansion, SearchResult
from solver.generators import GENERATORS, Generator, make_generator
from solver.lm.base import Backend
from solver.lm.cache import Cache, CacheMode
from solver.lm.client import LMClient
from solver.searches import get_search
from solver.task import ValueScale
from solver.trace import Trace

__all__ = ["DEFAULT_EVALUATOR", "DEFAULT_GENERATOR", "Settings", "check_settings", "make_backend",
           "make_client", "make_parts", "needs_model", "solve", "usage_for"]

# Measured with the embedded model on Game of 24 (README, "Which generator and evaluator"): the
# checker enumerates legal steps and the model's label probabilities score states.
DEFAULT_GENERATOR = "enumerate"
DEFAULT_EVALUATOR = "likelihood"


@dataclass(slots=True)
class Settings:
    method: str = "tot-bfs"
    breadth: int = 5
    depth: int | None = None
    generator: str = DEFAULT_GENERATOR
    evaluator: str = DEFAULT_EVALUATOR
    k: int = 5
    n_evaluate: int = 3
    prune_below: float | None = None
    early_stop: bool = True
    model_free: tuple[str, ...] = ()  # a task's own evaluators that need no model (crosswords: fillable)
    max_children: int = 5  # --method long: Long's C
    max_rounds: int = 100  # --method long: Long's K
    gate: bool = True  # False: the paper's unchecked behaviour (ablation; see Task.apply_unchecked)
    temperature: float = 0.7
    seed: int | None = 0
    chat: bool = False
    backend: str = "local"
    model: str | None = None
    base_url: str | None = None  # one URL, or several separated by commas (an endpoint pool)
    scoring: str = "auto"  # OpenAI-compatible servers: auto, echo or top-logprobs
    timeout: float = 60.0
    retries: int = 3
    concurrency: int = 4
    cache: str | None = None
    cache_mode: CacheMode = "record"
    budget: Budget = field(default_factory=Budget)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)


def make_backend(s: Settings) -> Backend:
    if s.backend == "local":
        from solver.lm.local import LocalBackend

        if s.chat:
            raise ValueError("the embedded base model has no chat template; use --chat with --model/--base-url")
        if s.model and not Path(s.model).is_file():
            raise ValueError(f"no such GGUF file: {s.model} (a server model needs --backend openai or --base-url)")
        return LocalBackend(s.model or None)
    if s.backend == "openai":
        from solver.lm.openai_backend import OpenAIBackend

        model = s.model or os.environ.get("OPENAI_MODEL")
        if not model:
            raise ValueError("--model is required with an OpenAI-compatible server")
        from solver.lm.pool import EndpointPool, split_urls

        urls: list[str | None] = [*split_urls(s.base_url)] or [None]
        ends = [OpenAIBackend(model, url, timeout=s.timeout, max_retries=s.retries, scoring=s.scoring)
                for url in urls]
        return ends[0] if len(ends) == 1 else EndpointPool(ends, s.concurrency)
    raise ValueError(f"unknown backend {s.backend!r}; use local or openai")


def needs_model(s: Settings) -> bool:
    """Whether the generator or evaluator ``s`` names calls a model: what a registered one
    declares (``needs``); a name the task makes itself (or an undeclared one) is taken to need
    one, unless ``s.model_free`` lists it."""
    gen = GENERATORS.get(s.generator)
    ev = EVALUATORS.get(s.evaluator)
    return (_calls_model(gen(k=s.k, temperature=s.temperature, seed=s.seed, chat=s.chat) if gen else None)
            or (s.evaluator not in s.model_free
                and _calls_model(ev(n=s.n_evaluate, scale=ValueScale(), seed=s.seed, chat=s.chat) if ev else None)))


def _calls_model(part: object | None) -> bool:
    return part is None or not isinstance(part, DeclaresNeeds) or part.needs.model


def make_client(s: Settings, backend: Backend | None = None) -> LMClient | None:
    if not needs_model(s):
        return None
    backend = backend or make_backend(s)
    cache = Cache(s.cache) if s.cache else None
    return LMClient(backend, cache, s.cache_mode if cache is not None else "off", s.concurrency)


def usage_for(s: Settings, client: LMClient | None) -> Usage:
    """Fresh counters for one run under the settings' budget and prices."""
    usage = Usage(budget=s.budget, model=client.backend.model if client is not None else "")
    usage.prices.update(s.prices)
    return usage


def make_parts(task: Any, s: Settings) -> tuple[Generator, Evaluator]:
    """The generator and evaluator ``s`` names: the task's own where it has one of that name
    (OwnGenerators, OwnEvaluators), else the core's; then the task's tuning (TunesParts)."""
    gen = (task.make_generator(s.generator, s) if isinstance(task, OwnGenerators) else None) or make_generator(
        s.generator, k=s.k, temperature=s.temperature, seed=s.seed, chat=s.chat)
    ev = (task.make_evaluator(s.evaluator, s) if isinstance(task, OwnEvaluators) else None) or make_evaluator(
        s.evaluator, n=s.n_evaluate, seed=s.seed, chat=s.chat)
    if isinstance(task, TunesParts):
        gen, ev = task.tune(gen, ev)
    return gen, ev


def check_settings(task: Any, s: Settings) -> None:
    """Before a model is loaded: ValueError for an unknown method, MissingCapability (one line)
    when the generator or evaluator ``s`` names needs a capability ``task`` lacks, or a model
    ``s`` would not load."""
    search = get_search(s.method)
    gen, ev = make_parts(task, s)
    require_parts(task, gen, ev if search.uses_evaluator(s.evaluator) else None, model=needs_model(s))


async def solve(task: Any, puzzle: str, s: Settings, client: LMClient | None,
                trace: Trace | None = None) -> SearchResult:
    """One puzzle with its own usage counters and budget (the client and its cache may be shared,
    also by runs going on at the same time), by the search registered as ``s.method``."""
    search = get_search(s.method)
    usage = usage_for(s, client)
    gen, ev = make_parts(task, s)
    trace = trace or Trace()
    run = Expansion(task, puzzle, gen, ev if search.uses_evaluator(s.evaluator) else None, client, trace, usage,
                    s.gate)  # checks the task, the parts and the model first
    trace.emit("start", task=task.name, puzzle=puzzle, options=task_options(task), method=s.method,
               model=client.backend.name if client else None, generator=s.generator,
               evaluator=s.evaluator, breadth=s.breadth, seed=s.seed, gate=s.gate)
    return await search(run, s)
