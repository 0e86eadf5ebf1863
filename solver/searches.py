"""Searches by name: ``tot solve --method NAME``, ``tot bench --methods``, ``solver.run.solve``.

A search is only an order of expansion over one run's gated step (``solver.expansion.Expansion``):
it gets the run and the search options and returns the run's result. The gate, dedup, trace,
budget and answer re-verification come with the run, so a search of your own gets them for free::

    async def random_first(run: Expansion, options: SearchSettings) -> SearchResult: ...
    register_search("random-first", random_first)

Third-party packages register theirs without touching this one, through the entry-point group
``tot.searches`` (the name, and a ``Search`` or such a function), read on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Awaitable, Callable

from solver.beam import no_likelihood_notice, search_beam
from solver.best_first import search_best_first
from solver.budget import Usage
from solver.complete import search_complete
from solver.controller import search_long
from solver.evaluators import Evaluator
from solver.expansion import Expansion, SearchResult
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.mcts import search_mcts
from solver.search import search_bfs, search_dfs
from solver.settings import SearchSettings
from solver.task import Task
from solver.trace import Trace

__all__ = ["COMMON_OPTIONS", "ENTRY_POINTS", "SEARCHES", "SEARCH_OPTIONS", "Search", "SearchFn", "get_search",
           "register_search", "run_search", "search_names"]

ENTRY_POINTS = "tot.searches"

SearchFn = Callable[[Expansion, SearchSettings], Awaitable[SearchResult]]
"""A search order: ``(run, options) -> result``; ``options`` are the run's search settings."""


@dataclass(frozen=True, slots=True)
class Search:
    """A registered search: its name, its order, one line of help, and the evaluators it scores
    with (None: whichever the run names; Long's controller ranks only with the exact oracle, so
    the run checks no other evaluator's needs for it)."""

    name: str
    run: SearchFn
    help: str = ""
    evaluators: tuple[str, ...] | None = None
    # The search settings of its own it reads (names in SEARCH_OPTIONS): ``tot solve`` refuses
    # another search's option given with it. None: not declared (a user's search), not checked.
    options: tuple[str, ...] | None = None
    # A line to say once before runs, given the run's generator (None: nothing to say).
    notice: Callable[[Generator], str | None] | None = None

    def uses_evaluator(self, name: str) -> bool:
        """Whether this search scores with the evaluator called ``name``."""
        return self.evaluators is None or name in self.evaluators

    async def __call__(self, run: Expansion, options: SearchSettings) -> SearchResult:
        """The search's result; a puzzle given already solved is answered at its root, without
        the search (``Expansion.solved_at_start``)."""
        done = run.solved_at_start(self.name)
        return done if done is not None else await self.run(run, options)


async def _bfs(run: Expansion, o: SearchSettings) -> SearchResult:
    return await search_bfs(run, breadth=o.breadth, depth=o.depth, early_stop=o.early_stop)


async def _dfs(run: Expansion, o: SearchSettings) -> SearchResult:
    return await search_dfs(run, depth=o.depth, prune_below=o.prune_below, max_children=o.dfs_children)


async def _complete(run: Expansion, o: SearchSettings) -> SearchResult:
    return await search_complete(run, depth=o.depth)


async def _long(run: Expansion, o: SearchSettings) -> SearchResult:
    return await search_long(run, max_children=o.max_children, max_rounds=o.max_rounds, depth=o.depth)


async def _best_first(run: Expansion, o: SearchSettings) -> SearchResult:
    return await search_best_first(run, depth=o.depth)


async def _mcts(run: Expansion, o: SearchSettings) -> SearchResult:
    return await search_mcts(run, iterations=o.iterations, exploration=o.exploration,
                             rollout_depth=o.rollout_depth, depth=o.depth, seed=o.seed, answers=o.answers)


async def _beam(run: Expansion, o: SearchSettings) -> SearchResult:
    return await search_beam(run, beam=o.breadth, candidates=o.candidates, mix=o.mix, tau=o.tau, decay=o.decay,
                             runs=o.beam_runs, depth=o.depth, seed=o.seed)


# The search settings that belong to one search or another (the rest, depth, generator,
# evaluator and their sizes, every search takes); ``Search.options`` names those it reads.
SEARCH_OPTIONS = ("breadth", "early_stop", "prune_below", "max_children", "max_rounds", "iterations",
                  "exploration", "rollout_depth", "answers", "candidates", "mix", "tau", "decay", "beam_runs")


# Filled at import with the built-in searches, in the order help texts list them.
SEARCHES: dict[str, Search] = {s.name: s for s in (
    Search("tot-complete", _complete, "DFS over every legal step, model-ordered, backtracking; an unanswered, "
                                      "uncut run proves there is no answer", options=()),
    Search("tot-bfs", _bfs, "the paper's BFS: a beam of --breadth states per level",
           options=("breadth", "early_stop")),
    Search("tot-dfs", _dfs, "the paper's DFS: best child first, children below --prune-below cut, backtracking",
           options=("prune_below",)),
    Search("long", _long, "Long (2023)'s controller: one proposal per round, --max-children per node, "
                          "--max-rounds in all", evaluators=("oracle",), options=("max_children", "max_rounds")),
    Search("best-first", _best_first, "one global frontier, best evaluator score first (ties: deeper, then "
                                      "earlier); nothing pruned, complete on finite trees", options=()),
    Search("mcts", _mcts, "Monte Carlo tree search: UCT on evaluator values, verifier rewards; "
                          "--iterations, --exploration, --rollout-depth, --answers",
           options=("iterations", "exploration", "rollout_depth", "answers")),
    Search("beam", _beam, "Xie et al. (2023)'s stochastic beam search: --breadth chains, --beam-candidates each, "
                          "log-likelihood and self-evaluation mixed by --lambda, --tau decaying by --decay; "
                          "--beam-runs fresh runs until a verified answer",
           options=("breadth", "candidates", "mix", "tau", "decay", "beam_runs"), notice=no_likelihood_notice),
)}
_loaded = False


def register_search(name: str, search: Search | SearchFn, help: str = "") -> Search:
    """Register ``search`` (a Search, or an order function ``(run, options) -> result``) under
    ``name``, replacing any search of that name; returns the registered Search."""
    if not name or not isinstance(name, str):
        raise ValueError("a search needs a non-empty name")
    if isinstance(search, Search):
        entry = Search(name, search.run, help or search.help, search.evaluators, search.options, search.notice)
    elif callable(search):
        entry = Search(name, search, help or (search.__doc__ or "").strip().split("\n")[0])
    else:
        raise TypeError(f"search {name!r} must be a Search or an async function (run, options), "
                        f"not {type(search).__name__}")
    SEARCHES[name] = entry
    return entry


# The search settings every search takes (the rest are a search's own, SEARCH_OPTIONS).
COMMON_OPTIONS = ("depth", "seed")


async def run_search(name: str, task: Task[Any], puzzle: str, generator: Generator, evaluator: Evaluator | None,
                     client: LMClient | None = None, *, trace: Trace | None = None, usage: Usage | None = None,
                     gate: bool = True, **options: Any) -> SearchResult:
    """One entry point for every registered search, with parts you made (``make_generator``,
    ``make_evaluator`` or your own): ``run_search("mcts", task, "4 9 10 13", gen, ev, iterations=50)``.
    ``options`` are the search's own (``Search.options``) and ``depth``, ``seed``; one it does not
    take is a TypeError in one line naming those it does. ``evaluator`` may be None for a search
    that scores nothing (Long's controller without the oracle)."""
    search = get_search(name)
    allowed = (*COMMON_OPTIONS, *(search.options if search.options is not None else SEARCH_OPTIONS))
    for key in options:
        if key not in allowed:
            raise TypeError(f"{key!r} is not an option of search {name!r}; its options are {', '.join(allowed)}")
    settings = SearchSettings(method=name, gate=gate, generator=generator.name, **options)
    if evaluator is not None:
        settings.evaluator = evaluator.name
        if not search.uses_evaluator(evaluator.name):
            evaluator = None  # as solve: a search that ranks with another evaluator checks nothing of this one
    run = Expansion(task, puzzle, generator, evaluator, client, trace if trace is not None else Trace(), usage, gate)
    return await search(run, settings)


def _load_entry_points() -> None:
    """Third-party searches (group ``tot.searches``), read once, on first use; a built-in or
    user-registered name is not replaced by a plugin's."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in sorted(entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        if ep.name not in SEARCHES:
            register_search(ep.name, ep.load())


def search_names() -> tuple[str, ...]:
    """Every registered search's name (third-party ones included)."""
    _load_entry_points()
    return tuple(SEARCHES)


def get_search(name: str) -> Search:
    """The search registered as ``name``; ValueError in one line naming the choices."""
    _load_entry_points()
    found = SEARCHES.get(name)
    if found is None:
        raise ValueError(f"unknown method {name!r}; use one of {', '.join(SEARCHES)}")
    return found
