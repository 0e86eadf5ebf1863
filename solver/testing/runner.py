"""Run generated cases on a user's task and check every search invariant.

``check_search_invariants(task, puzzles)`` is the one call for a pytest test: it runs hypothesis
itself. ``run_and_check(task, case)`` checks one case; ``check_replay`` and ``check_complete_iff``
are the two checks that need several runs.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from solver.budget import Usage
from solver.evaluators import EVALUATORS as EVALUATORS_BUILT_IN
from solver.evaluators import make_evaluator
from solver.generators import GENERATORS as GENERATORS_BUILT_IN
from solver.generators import make_generator
from solver.lm.base import Completion, GenParams, LMError
from solver.lm.cache import Cache, CacheMode
from solver.lm.client import LMClient
from solver.lm.session import Session
from solver.run import make_parts
from solver.searches import get_search
from solver.settings import ModelSettings, SearchSettings, Settings
from solver.task import Task
from solver.task_capabilities import HasOracle, LegalMoves, find, has, require
from solver.testing.invariants import IFF, REPLAY, AnswerCheck, InvariantBroken, Outcome, check_outcome
from solver.testing.parts import check_parts
from solver.testing.recording import RecordingTask
from solver.testing.scripted import ScriptedModel
from solver.testing.strategies import (
    EVALUATORS,
    GENERATORS,
    Case,
    ThoughtTexts,
    budgets,
    cases,
    scripts,
    search_settings,
    settings_of,
)
from solver.trace import Trace

Render = Callable[[str], str]
# (method, evaluator) pairs run with complete enumeration for the iff check.
IFF_METHODS: tuple[tuple[str, str], ...] = (("tot-complete", "oracle"), ("tot-complete", "prior"),
                                            ("tot-dfs", "oracle"), ("tot-bfs", "oracle"),
                                            ("best-first", "oracle"), ("best-first", "prior"))
_FAST_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None  # sqlite commits each write


def capable(task: Any, name: str) -> bool:
    """Whether ``task`` has every capability the built-in generator or evaluator ``name`` declares
    it needs (``solver.task_capabilities``); a name the task makes itself (``OwnGenerators``,
    ``OwnEvaluators``) is taken as given."""
    from solver.task_capabilities import needs_of

    if name in GENERATORS_BUILT_IN:
        part: Any = make_generator(name)
    elif name in EVALUATORS_BUILT_IN:
        part = make_evaluator(name)
    else:
        return True
    return all(has(task, cap) for cap in needs_of(part).parts)


def _parts(task: Any, case: Case) -> tuple[Any, Any]:
    """The generator and evaluator of ``case`` for ``task``, built as ``tot solve`` builds them
    (``solver.run.make_parts``: the task's own names first, then the core's, then its tuning)."""
    cfg = Settings(case.settings, ModelSettings(seed=case.script.seed))
    return make_parts(task, cfg)


def _inner(task: Any) -> Any:
    """A fresh task from a factory (a function or a class), or the task itself."""
    return task() if isinstance(task, type) or (callable(task) and not isinstance(task, Task)) else task


async def run_case_async(task: Any, case: Case, *, model: bool = True, render: Render | None = None,
                         cache: Cache | None = None, mode: CacheMode = "off",
                         backend: Any = None, trace: Trace | None = None) -> Outcome:
    """Run ``case`` on ``task`` (wrapped in a recording proxy) with a fresh scripted model (or
    ``backend``; no model when ``model`` is False). Only runs: checks nothing."""
    proxy = RecordingTask(_inner(task))
    scripted = ScriptedModel(proxy, case.script, render) if model else None
    backend = backend if backend is not None else scripted
    client = None
    usage = Usage(budget=case.budget, model=backend.model if backend is not None else "")
    if backend is not None:
        client = LMClient(backend, cache, mode, concurrency=case.concurrency)
    gen, ev = _parts(proxy, case)
    generated: list[tuple[Any, list[str]]] = []
    gen = _RecordingGenerator(gen, generated)
    trace = trace or Trace()
    s = case.settings
    search = get_search(s.method)  # the registered search, as ``tot solve --method`` runs it
    run = search.open(proxy, case.puzzle, gen, ev, client, trace, usage, named=s.evaluator)  # as solver.run.solve
    ev = run.evaluator
    result = await search(run, s)
    late = 0
    if scripted is not None:
        before = len(scripted.requests) + len(scripted.score_requests)
        for _ in range(20):  # anything search left running would make its requests now
            await asyncio.sleep(0)
        late = len(scripted.requests) + len(scripted.score_requests) - before
    return Outcome(case, proxy, result, trace.events, ev, scripted, late, generated=generated)


class _RecordingGenerator:
    """Passes ``inner``'s thoughts on, remembering which state each list was generated for."""

    def __init__(self, inner: Any, sink: list[tuple[Any, list[str]]]) -> None:
        self.inner, self.sink = inner, sink

    async def __call__(self, task: Any, state: Any, model: Session | None) -> list[Any]:
        out = await self.inner(task, state, model)
        self.sink.append((state, [t.text for t in out]))
        return list(out)

    def __getattr__(self, name: str) -> Any:  # name, exhaustive, ...
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


def run_case(task: Any, case: Case, **kwargs: Any) -> Outcome:
    """``run_case_async`` in a fresh event loop."""
    return asyncio.run(run_case_async(task, case, **kwargs))


def run_and_check(task: Any, case: Case, *, render: Render | None = None,
                  answer_ok: AnswerCheck | None = None) -> Outcome:
    """Run one case and check every invariant of a single run; raises ``InvariantBroken``."""
    o = run_case(task, case, render=render)
    check_outcome(o, answer_ok)
    return o


def _strip(events: list[dict[str, Any]], usage: bool = True) -> list[dict[str, Any]]:
    """Events without wall-clock fields (and, with ``usage`` False, without the counts that
    differ between a live run and its replay: backend calls, cache hits, replayed tokens)."""
    drop = {"t"} if usage else {"t", "backend_calls", "cache_hits", "replayed_tokens"}
    out = []
    for e in events:
        e = {k: v for k, v in e.items() if k not in drop}
        if e.get("event") == "end":
            e.pop("seconds", None)
        out.append(e)
    return out


class _ReplayGuard:
    """Stands in for the scripted model during a replay: a request the model would have failed
    fails again (failures are not recorded), any other request reaching it is an error."""

    supports_chat = True
    concurrent = True

    def __init__(self, model: ScriptedModel) -> None:
        self.model, self.name, self.script = model.model, model.name, model.script
        self.like = model

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        await asyncio.sleep(0)  # as the scripted model does, so concurrent requests interleave alike
        if self.like.fails(prompt, params.key()):
            raise LMError("scripted failure")
        raise _ReachedModel("the replay reached the model")

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        await asyncio.sleep(0)
        if self.like.fails(prompt, list(continuations)):
            raise LMError("scripted failure")
        raise _ReachedModel("the replay reached the model")

    async def close(self) -> None:
        return None


class _ReachedModel(Exception):
    pass


def check_replay(task: Any, case: Case, *, render: Render | None = None) -> None:
    """Record a run, run it again with the same seed, and replay it twice from the recording
    with a model that must not be reached: all four give the same trace (usage counts aside).

    Not checked: a token budget with several requests at once. Which of the requests in flight
    get in before the budget runs out depends on timing (a replay's cached answers arrive at
    once), so the case runs without its token budget."""
    if case.concurrency > 1 and case.budget.tokens is not None:
        case = replace(case, budget=replace(case.budget, tokens=None))
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as tmp:
        db = Path(tmp) / "rec.sqlite"

        def go(mode: CacheMode, guard: bool) -> list[dict[str, Any]]:
            cache = Cache(db)
            try:
                backend = None
                if guard:
                    backend = _ReplayGuard(ScriptedModel(RecordingTask(_inner(task)), case.script, render))
                try:
                    o = run_case(task, case, render=render, cache=cache, mode=mode, backend=backend)
                except _ReachedModel:
                    raise InvariantBroken(REPLAY, "replaying the recorded answers reached the model", case) from None
            finally:
                cache.close()
            return o.events

        recorded = go("record", False)
        again = go("off", False)
        if _strip(again) != _strip(recorded):
            raise InvariantBroken(REPLAY, _first_difference(_strip(recorded), _strip(again), "a second live run"), case)
        # "record" mode serves every recorded answer from the cache; the guard proves none was missing.
        one, two = go("record", True), go("record", True)
        if _strip(one) != _strip(two):
            raise InvariantBroken(REPLAY, _first_difference(_strip(one), _strip(two), "a second replay"), case)
        if _strip(one, usage=False) != _strip(recorded, usage=False):
            raise InvariantBroken(REPLAY, _first_difference(_strip(recorded, False), _strip(one, False), "the replay"),
                                  case)


def _first_difference(a: list[dict[str, Any]], b: list[dict[str, Any]], what: str) -> str:
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"{what} differs at event {k}: {x} != {y}"
    return f"{what} has {len(b)} events, the recorded run {len(a)}"


def check_complete_iff(task: Any, puzzle: str, *, solvable: Callable[[str], bool] | None = None,
                       methods: Sequence[tuple[str, str]] = IFF_METHODS,
                       answer_ok: AnswerCheck | None = None) -> bool:
    """With complete enumeration (``enumerate``, no model) each search in ``methods`` returns an
    answer iff the puzzle has a solution: ``solvable(puzzle)`` when given, else the task's exact
    oracle on the root. A complete search that claims exhaustion must be right. Each run's own
    invariants are checked too. Returns the reference's verdict."""
    inner = _inner(task)
    expected = (bool(solvable(puzzle)) if solvable is not None
                else bool(require(inner, HasOracle, "check_complete_iff without solvable").oracle(inner.root(puzzle))))
    where = "the reference" if solvable is not None else "the oracle on the root"
    for method, evaluator in methods:
        if evaluator == "oracle" and not has(inner, HasOracle):
            continue
        # The exact oracle needs a beam of one; without it the beam must hold every state.
        breadth = 1 if evaluator == "oracle" else 10**6
        case = Case(puzzle, settings_of(method, "enumerate", evaluator, breadth=breadth))
        o = run_case(inner, case, model=False)
        check_outcome(o, answer_ok)
        found = o.result.answer is not None
        if found != expected:
            raise InvariantBroken(IFF, f"{method} with {evaluator} {'found' if found else 'found no'} answer; "
                                  f"{where} says {'solvable' if expected else 'unsolvable'}", case)
        if o.result.exhausted and expected:
            raise InvariantBroken(IFF, f"{method} claims no answer exists; {where} says solvable", case)
    return expected


def _profile(profile: str | hsettings | None, max_examples: int | None) -> hsettings:
    base = (hsettings.get_profile(profile) if isinstance(profile, str)
            else profile if profile is not None else hsettings())
    quiet = [*base.suppress_health_check, HealthCheck.too_slow, HealthCheck.data_too_large]
    kwargs: dict[str, Any] = {"deadline": None, "suppress_health_check": quiet}
    if max_examples is not None:
        kwargs["max_examples"] = max_examples
    return hsettings(base, **kwargs)


def check_search_invariants(task: Any, puzzles: Sequence[str] | st.SearchStrategy[str], *,
                            profile: str | hsettings | None = None, max_examples: int | None = None,
                            settings: st.SearchStrategy[SearchSettings] | None = None,
                            models: st.SearchStrategy[Any] | None = None,
                            budget: st.SearchStrategy[Any] | None = None,
                            thoughts: ThoughtTexts | None = None, render: Render | None = None,
                            answer_ok: AnswerCheck | None = None,
                            solvable: Callable[[str], bool] | None = None,
                            iff: bool | None = None, iff_methods: Sequence[tuple[str, str]] = IFF_METHODS,
                            replay: bool = True) -> None:
    """Property-test search on ``task`` (an instance, or a function making a fresh one): for each
    generated case, run it with a scripted model and check every invariant of the run, that
    replaying it gives the same trace (``replay``), and, once per puzzle, that complete
    enumeration finds a solution iff one exists (``iff``; by default where the task has
    ``legal_thoughts`` and either ``oracle`` or ``solvable`` is given, for each puzzle whose root
    it enumerates any thought at). ``profile`` names a hypothesis
    settings profile (or is one); ``max_examples`` overrides its count. ``thoughts`` gives
    thought texts for a task without enumeration; ``render`` writes a thought as the model would.
    Raises ``InvariantBroken`` (an AssertionError) naming the invariant and the case."""
    sample = _inner(task)
    if settings is None:
        settings = search_settings(generators=[g for g in GENERATORS if capable(sample, g)],
                                   evaluators=[e for e in EVALUATORS if capable(sample, e)])
    else:  # only parts the task has what they need for (the others stop at once, in one line)
        settings = settings.filter(lambda s: capable(sample, s.generator) and capable(sample, s.evaluator))
    strategy = cases(puzzles, settings=settings, models=models if models is not None else scripts(),
                     budget=budget if budget is not None else budgets(), thoughts=thoughts)
    check_parts(sample)  # every part found for a capability really implements it
    do_iff = iff if iff is not None else (has(sample, LegalMoves)
                                          and (has(sample, HasOracle) or solvable is not None))
    judged: set[str] = set()

    @_profile(profile, max_examples)
    @given(strategy)
    def property_(case: Case) -> None:
        run_and_check(task, case, render=render, answer_ok=answer_ok)
        if replay:
            check_replay(task, case, render=render)
        if do_iff and case.puzzle not in judged:
            inner = _inner(task)
            # By default a task that enumerates nothing at the root (passages, say) cannot be searched completely.
            moves = find(inner, LegalMoves)
            if iff or (moves is not None and moves.legal_thoughts(inner.root(case.puzzle))):
                check_complete_iff(task, case.puzzle, solvable=solvable, methods=iff_methods, answer_ok=answer_ok)
            judged.add(case.puzzle)

    property_()
