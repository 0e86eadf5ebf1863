"""Assemble a run from settings: backend, cache, client, generator, evaluator and search."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from solver.budget import Usage
from solver.evaluators import EVALUATORS, Evaluator, make_evaluator
from solver.expansion import SearchResult
from solver.generators import GENERATORS, Generator, make_generator
from solver.lm.adapters import adapter_of
from solver.lm.base import Backend, LMError, ServerUnavailable
from solver.lm.cache import Cache
from solver.lm.client import LMClient
from solver.lm.grammar_report import grammar_setting
from solver.searches import get_search
from solver.settings import DEFAULT_EVALUATOR, DEFAULT_GENERATOR, ModelSettings, SearchSettings, Settings
from solver.task import ValueScale
from solver.task_capabilities import (
    DeclaresNeeds,
    OwnEvaluators,
    OwnGenerators,
    ThoughtGrammar,
    TunesParts,
    find,
    require_parts,
    task_options,
)
from solver.trace import Trace

__all__ = ["DEFAULT_EVALUATOR", "DEFAULT_GENERATOR", "ModelSettings", "RunStopped", "SearchSettings", "Settings",
           "check_settings", "make_backend", "make_client", "make_parts", "needs_model", "solve", "usage_for"]


def make_backend(s: ModelSettings) -> Backend:
    if s.backend == "local":
        from solver.lm.local import LocalBackend

        if s.chat:
            raise ValueError("the embedded base model has no chat template; use --chat with --model/--base-url")
        if s.model and not Path(s.model).is_file():
            raise ValueError(f"no such GGUF file: {s.model} (a server model needs --backend openai or --base-url)")
        from solver.lm.adapters import resolve_adapter

        adapter = resolve_adapter(s.adapter, s.task, default_model=not s.model, shipped=s.shipped_adapters)
        return LocalBackend(s.model or None, context=s.context, adapter=adapter)
    if s.backend == "openai":
        from solver.lm.adapters import resolve_adapter
        from solver.lm.openai_backend import OpenAIBackend
        from solver.lm.pool import EndpointPool, split_urls

        # a path: the adapter the server has loaded (llama.cpp: --lora, asked for by request; vLLM:
        # served under --model NAME)
        adapter = resolve_adapter(s.adapter, s.task, default_model=False)
        # auto: the adapter shipped for the task, taken where a llama.cpp server has it loaded on
        # the embedded model (OpenAIBackend.settle_adapter, before the run's first prompt)
        auto = (resolve_adapter("auto", s.task, default_model=True, shipped=s.shipped_adapters)
                if s.adapter == "auto" else None)
        urls: list[str | None] = [*split_urls(s.base_url)] or [None]
        auto = auto if len(urls) == 1 else None
        model = s.model or os.environ.get("OPENAI_MODEL")
        if not model:
            raise ValueError("--model is required with an OpenAI-compatible server")
        ends = [OpenAIBackend(model, url, timeout=s.timeout, max_retries=s.retries, scoring=s.scoring,
                              thinking=s.thinking, probe_parallel=s.probe_parallel,
                              grammar="on" if s.grammar_forced else "auto", adapter=adapter, adapter_auto=auto)
                for url in urls]
        return ends[0] if len(ends) == 1 else EndpointPool(ends, s.concurrency)
    raise ValueError(f"unknown backend {s.backend!r}; use local or openai")


def needs_model(s: Settings) -> bool:
    """Whether the generator or evaluator ``s`` names calls a model: what a registered one
    declares (``needs``); a name the task makes itself (or an undeclared one) is taken to need
    one, unless ``s.search.model_free`` lists it."""
    o, m = s.search, s.model
    gen = GENERATORS.get(o.generator)
    ev = EVALUATORS.get(o.evaluator)
    return (_calls_model(gen(k=o.k, temperature=m.temperature, seed=m.seed, chat=m.chat, grammar=m.grammar)
                         if gen else None)
            or (o.evaluator not in o.model_free
                and _calls_model(ev(n=o.n_evaluate, scale=ValueScale(), seed=m.seed, chat=m.chat) if ev else None)))


def _calls_model(part: object | None) -> bool:
    return part is None or not isinstance(part, DeclaresNeeds) or part.needs.model


def make_client(s: Settings, backend: Backend | None = None) -> LMClient | None:
    if not needs_model(s):
        return None
    m = s.model
    backend = backend or make_backend(m)
    cache = Cache(m.cache) if m.cache else None
    return LMClient(backend, cache, m.cache_mode if cache is not None else "off", m.concurrency)


def usage_for(s: Settings, client: LMClient | None) -> Usage:
    """Fresh counters for one run under the settings' budget and prices."""
    usage = Usage(budget=s.budget, model=client.backend.model if client is not None else "")
    usage.prices.update(s.model.prices)
    return usage


def make_parts(task: Any, s: Settings) -> tuple[Generator, Evaluator]:
    """The generator and evaluator ``s`` names: the task's own where it has one of that name
    (OwnGenerators, OwnEvaluators, given ``s``), else the registered one; then the task's tuning
    (TunesParts)."""
    o, m = s.search, s.model
    own_gen, own_ev = find(task, OwnGenerators), find(task, OwnEvaluators)
    gen = (own_gen.make_generator(o.generator, s) if own_gen is not None else None) or make_generator(
        o.generator, k=o.k, temperature=m.temperature, seed=m.seed, chat=m.chat, grammar=m.grammar)
    ev = (own_ev.make_evaluator(o.evaluator, s) if own_ev is not None else None) or make_evaluator(
        o.evaluator, n=o.n_evaluate, seed=m.seed, chat=m.chat)
    tuning = find(task, TunesParts)
    if tuning is not None:
        gen, ev = tuning.tune(gen, ev)
    return gen, ev


async def settle_adapter(backend: object) -> None:
    """Where ``backend`` is one server, let it take ``--adapter auto``'s adapter if it serves it
    (OpenAIBackend.settle_adapter). Several endpoints get none: the prompts follow the adapter, so
    every endpoint would have to serve it."""
    from solver.lm.openai_backend import OpenAIBackend

    if isinstance(backend, OpenAIBackend):
        await backend.settle_adapter()


async def scoring_notice(client: LMClient | None, parts: tuple[Any, ...]) -> str | None:
    """One line, before a run, where a part needs the model's log-probabilities (its ``needs``
    say ``scores``) and the server gives neither kind (echo, top log-probabilities) that ``tot``
    scores with: every scoring call would fail and the search would go in the checker's own order.
    None where scoring can work, or nothing needs it, or the model is not a server. Raises
    LMError where the run names an adapter (--adapter PATH) that the server has not loaded."""
    from solver.lm.openai_backend import OpenAIBackend

    backend = client.backend if client is not None else None
    if not isinstance(backend, OpenAIBackend) or client is None or client.mode == "replay":
        return None
    if backend.adapter is not None:  # LMError, before any call, where the server has not loaded it
        await backend.adapter_request()
    names = [str(getattr(p, "name", type(p).__name__)) for p in parts if isinstance(p, DeclaresNeeds)
             and p.needs.scores]
    if not names:
        return None
    try:
        caps = await backend.capabilities(("echo", "top_logprobs"))
    except LMError:
        return None  # a server that cannot be reached says so at its first call
    can = {"auto": caps.echo or bool(caps.top_logprobs), "echo": caps.echo,
           "top-logprobs": bool(caps.top_logprobs)}[backend.scoring]
    if can:
        return None
    which = " and ".join(names)
    if caps.echo or caps.top_logprobs:  # --scoring names the kind this server lacks
        other = "echo" if caps.echo else "top-logprobs"
        return (f"the server at {backend.base_url} does not give what --scoring {backend.scoring} reads: {which} "
                f"cannot score there, so the model would order nothing; use --scoring {other}")
    return (f"the server at {backend.base_url} gives no log-probabilities (neither echo nor top log-probabilities): "
            f"{which} cannot score there, so the model would order nothing; use --evaluator value (the model "
            "writes its label) or --generator enumerate")


def check_settings(task: Any, s: Settings) -> None:
    """Before a model is loaded: ValueError for an unknown method, MissingCapability (one line)
    when the generator or evaluator ``s`` names needs a capability ``task`` lacks, or a model
    ``s`` would not load."""
    search = get_search(s.search.method)
    gen, ev = make_parts(task, s)
    require_parts(task, gen, ev if search.uses_evaluator(s.search.evaluator) else None, model=needs_model(s))


async def solve(task: Any, puzzle: str, s: Settings, client: LMClient | None,
                trace: Trace | None = None) -> SearchResult[Any]:
    """One puzzle with its own usage counters and budget (the client and its cache may be shared,
    also by runs going on at the same time), by the search registered as ``s.search.method``."""
    o = s.search
    search = get_search(o.method)
    usage = usage_for(s, client)
    gen, ev = make_parts(task, s)
    trace = trace or Trace()
    run = search.open(task, puzzle, gen, ev, client, trace, usage, o.gate, named=o.evaluator)  # checked first
    if client is not None:
        await settle_adapter(client.backend)  # --adapter auto through a server: before the first prompt
    decodes = bool(getattr(gen, "grammar", False)) and find(task, ThoughtGrammar) is not None
    grammar = await grammar_setting(client, s.model.grammar, decodes)
    adapter = adapter_of(client.backend) if client else None
    trace.emit("start", task=task.name, puzzle=puzzle, options=task_options(task), method=o.method,
               model=client.backend.name if client else None, generator=o.generator,
               evaluator=o.evaluator, seed=s.model.seed, gate=o.gate, grammar=grammar,
               **({"adapter": adapter.describe()} if adapter is not None else {}))
    try:
        return await search(run, o)
    except ServerUnavailable as exc:  # the server stopped answering: the results so far, then the error
        raise RunStopped(run.result(None, None, "server", error=str(exc)), str(exc)) from None


class RunStopped(ServerUnavailable):
    """A run ended by a server that stopped answering (or refused every connection): ``result``
    holds what the search had done so far (stopped_by "server", its trace ended)."""

    def __init__(self, result: SearchResult[Any], message: str) -> None:
        super().__init__(message)
        self.result = result
