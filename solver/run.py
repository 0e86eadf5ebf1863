"""Assemble a run from settings: backend, cache, client, generator, evaluator and search."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solver.budget import Budget, Usage
from solver.capabilities import OwnEvaluators, OwnGenerators, TunesParts, require_parts, task_options
from solver.complete import complete_dfs
from solver.evaluators import Evaluator, make_evaluator
from solver.generators import Generator, make_generator
from solver.lm.base import Backend
from solver.lm.cache import Cache, CacheMode
from solver.lm.client import LMClient
from solver.search import SearchResult, bfs, dfs
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
    grammar: bool = True  # propose/sample decode under the task's ThoughtGrammar (--grammar off: not)
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
    context: int | None = None  # embedded model: cap on its context window (None: TOT_CONTEXT or 8192)
    budget: Budget = field(default_factory=Budget)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)


def make_backend(s: Settings) -> Backend:
    if s.backend == "local":
        from solver.lm.local import LocalBackend

        if s.chat:
            raise ValueError("the embedded base model has no chat template; use --chat with --model/--base-url")
        if s.model and not Path(s.model).is_file():
            raise ValueError(f"no such GGUF file: {s.model} (a server model needs --backend openai or --base-url)")
        return LocalBackend(s.model or None, context=s.context)
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
    return not (s.generator == "enumerate" and s.evaluator in ("oracle", "prior", "random", *s.model_free))


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
    """Before a model is loaded: MissingCapability (one line) when the generator or evaluator
    ``s`` names needs a capability ``task`` lacks, or a model ``s`` would not load."""
    gen, ev = make_parts(task, s)
    # Long (2023)'s controller uses the evaluator only when it is the exact oracle (see solve).
    require_parts(task, gen, ev if s.method != "long" or s.evaluator == "oracle" else None,
                  model=needs_model(s))


async def solve(task: Any, puzzle: str, s: Settings, client: LMClient | None,
                trace: Trace | None = None) -> SearchResult:
    """One puzzle with its own usage counters and budget (the client and its cache may be shared,
    also by runs going on at the same time)."""
    usage = usage_for(s, client)
    gen, ev = make_parts(task, s)
    require_parts(task, gen, ev if s.method != "long" or s.evaluator == "oracle" else None, model=client)
    trace = trace or Trace()
    trace.emit("start", task=task.name, puzzle=puzzle, options=task_options(task), method=s.method,
               model=client.backend.name if client else None, generator=s.generator,
               evaluator=s.evaluator, breadth=s.breadth, seed=s.seed, gate=s.gate)
    if s.method == "tot-bfs":
        return await bfs(task, puzzle, gen, ev, client, breadth=s.breadth, depth=s.depth,
                         early_stop=s.early_stop, trace=trace, usage=usage, gate=s.gate)
    if s.method == "tot-dfs":
        return await dfs(task, puzzle, gen, ev, client, depth=s.depth, prune_below=s.prune_below,
                         trace=trace, usage=usage, gate=s.gate)
    if s.method == "tot-complete":
        return await complete_dfs(task, puzzle, gen, ev, client, depth=s.depth, trace=trace, usage=usage,
                                  gate=s.gate)
    if s.method == "long":  # Long (2023)'s controller; only the exact oracle ranks its proposals
        from solver.controller import long_search

        return await long_search(task, puzzle, gen, client, max_children=s.max_children,
                                 max_rounds=s.max_rounds, depth=s.depth, trace=trace, usage=usage,
                                 evaluator=ev if s.evaluator == "oracle" else None)
    raise ValueError(f"unknown method {s.method!r}; use tot-complete, tot-bfs, tot-dfs or long")
