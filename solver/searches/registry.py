"""Searches by name: ``tot solve --method NAME``, ``tot bench --methods``, ``solver.run.solve``.

A search is only an order of expansion over one run (``solver.expansion.Run``) and its gated
step (``run.step``, ``solver.step.GatedStep``). The gate, dedup, trace, budget and answer
re-verification come with the run, so a search of your own gets them for free. A built-in search
is a class made from its options (one dataclass of ``solver.search_options.option`` fields:
``Bfs(BfsOptions(breadth=2))``) and called with the run and the search settings; the registry
holds the class, and the command line, ``tot list --json`` and ``run_search`` take the options
from its declaration. A search of your own may be such a class, or one async function
``(run, settings) -> result`` with its options named here::

    @dataclass(frozen=True)
    class RandomFirstOptions(Options):
        tries: int = option(3, "random orders tried from the root", at_least=1)

    async def random_first(run: Run[Any], settings: SearchSettings) -> SearchResult[Any]:
        tries = settings.own(RandomFirstOptions).tries
        ...

    register_search("random-first", random_first, options=RandomFirstOptions)

Third-party packages register theirs without touching this one, through the entry-point group
``tot.searches`` (the name, and a ``Search``, a search class or such a function), read on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from importlib.metadata import entry_points
from typing import Any, Callable, Hashable, Mapping, TypeVar

from solver.budget import Usage
from solver.evaluators import Evaluator
from solver.expansion import Run, SearchOrder, SearchResult, open_run
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.search_options import OptionSpec, OptionValue, build_options, option_specs, options_of
from solver.searches.beam import Beam, no_likelihood_notice
from solver.searches.best_first import BestFirst
from solver.searches.complete import Complete
from solver.searches.controller import Long
from solver.searches.mcts import Mcts
from solver.searches.tot import Bfs, Dfs
from solver.settings import SearchSettings
from solver.task import Task
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type
__all__ = ["COMMON_OPTIONS", "ENTRY_POINTS", "SEARCHES", "Search", "SearchFn", "bfs", "complete_dfs", "dfs",
           "declared_options", "get_search", "register_search", "run_search", "search_names", "DeclaredOption"]

ENTRY_POINTS = "tot.searches"

SearchFn = SearchOrder[Any]
"""A search order: ``(run, settings) -> result``; ``settings.own(ItsOptions)`` gives its options."""


@dataclass(frozen=True, slots=True)
class Search:
    """A registered search: its name, its order (a class made from its options, or a function),
    one line of help, and the evaluators it scores with (None: whichever the run names; Long's
    controller ranks only with the exact oracle, so the run checks no other evaluator's needs
    for it)."""

    name: str
    run: type | SearchFn
    help: str = ""
    evaluators: tuple[str, ...] | None = None
    # The dataclass of its own options (``solver.search_options``): a class's own, or the one a
    # function was registered with; None: a function that takes none.
    options: type | None = None
    # A line to say once before runs, given the run's generator (None: nothing to say).
    notice: Callable[[Generator], str | None] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.run, type) and self.options is None:
            object.__setattr__(self, "options", options_of(self.run))

    @property
    def specs(self) -> tuple[OptionSpec, ...]:
        """Its own options as declared (none where it declares none)."""
        return option_specs(self.options) if self.options is not None else ()

    def options_from(self, values: Mapping[str, object]) -> Any:
        """Its options from ``values`` by name (names it does not declare are other searches' and
        left out; those missing take their defaults); ValueError in one line for a bad value."""
        return build_options(self.options, values) if self.options is not None else None

    def uses_evaluator(self, name: str) -> bool:
        """Whether this search scores with the evaluator called ``name``."""
        return self.evaluators is None or name in self.evaluators

    def open(self, task: Task[S], puzzle: str, generator: Generator, evaluator: Evaluator | None,
             client: LMClient | None = None, trace: Trace | None = None, usage: Usage | None = None,
             gate: bool = True, *, named: str | None = None) -> Run[S]:
        """A run for this search (``open_run``), given ``evaluator`` only where it scores with it
        (by the name the settings give it, ``named``, else its own)."""
        scores = evaluator is not None and self.uses_evaluator(evaluator.name if named is None else named)
        return open_run(task, puzzle, generator, evaluator if scores else None, client, trace, usage, gate)

    async def __call__(self, run: Run[Any], settings: SearchSettings) -> SearchResult[Any]:
        """The search's result under ``settings`` (their options: an instance of its own, or None
        for its defaults), through ``Run.conduct`` (a puzzle given solved; a budget that runs out)."""
        options = settings.options
        if self.options is not None:
            options = settings.own(self.options)
        elif options is not None:
            raise TypeError(f"search {self.name!r} takes no options, not {type(options).__name__}")
        order = self.run(options) if isinstance(self.run, type) else self.run
        return await run.conduct(order, replace(settings, options=options), self.name)


# Filled at import with the built-in searches, in the order help texts list them.
SEARCHES: dict[str, Search] = {s.name: s for s in (
    Search("tot-complete", Complete, "DFS over every legal step, model-ordered, backtracking; an unanswered, "
                                     "uncut run proves there is no answer"),
    Search("tot-bfs", Bfs, "the paper's BFS: a beam of --breadth states per level"),
    Search("tot-dfs", Dfs, "the paper's DFS: best child first, children below --prune-below cut, backtracking"),
    Search("long", Long, "Long (2023)'s controller: one proposal per round, --max-children per node, "
                         "--max-rounds in all", evaluators=("oracle",)),
    Search("best-first", BestFirst, "one global frontier, best evaluator score first (ties: deeper, then "
                                    "earlier); nothing pruned, complete on finite trees"),
    Search("mcts", Mcts, "Monte Carlo tree search: UCT on evaluator values, verifier rewards; "
                         "--iterations, --exploration, --rollout-depth, --answers"),
    Search("beam", Beam, "Xie et al. (2023)'s stochastic beam search: --breadth chains, --beam-candidates each, "
                         "log-likelihood and self-evaluation mixed by --lambda, --tau decaying by --decay; "
                         "--beam-runs fresh runs until a verified answer", notice=no_likelihood_notice),
)}
_loaded = False


def register_search(name: str, search: Search | type | SearchFn, help: str = "", *,
                    options: type | None = None) -> Search:
    """Register ``search`` (a Search, a search class made from its options, or an order function
    ``(run, settings) -> result``) under ``name``, replacing any search of that name; ``options``
    is the dataclass of a function's own options (``solver.search_options``; a class and a Search
    name their own). Returns the registered Search; ValueError in one line where an option shares
    a name with another search's but not its type, default, flag or bounds (one flag cannot mean
    two things)."""
    if not name or not isinstance(name, str):
        raise ValueError("a search needs a non-empty name")
    if isinstance(search, Search):
        entry = Search(name, search.run, help or search.help, search.evaluators, options or search.options,
                       search.notice)
    elif callable(search):
        entry = Search(name, search, help or (search.__doc__ or "").strip().split("\n")[0],
                       options=None if isinstance(search, type) else options)
    else:
        raise TypeError(f"search {name!r} must be a Search or an async function (run, settings), "
                        f"not {type(search).__name__}")
    entry.specs  # noqa: B018 - a malformed declaration is refused here, in one line
    _merged([*(s for n, s in SEARCHES.items() if n != name), entry])
    SEARCHES[name] = entry
    return entry


# The search settings every search takes, beside its own (``Search.options``).
COMMON_OPTIONS = ("depth", "seed")


@dataclass(frozen=True, slots=True)
class DeclaredOption:
    """One option as the command line offers it: its declaration, and which searches declare it
    (with each one's help)."""

    spec: OptionSpec
    searches: tuple[str, ...]
    helps: tuple[str, ...]

    def help(self) -> str:
        """The flag's help: each search's own line, then the default."""
        default = self.spec.default
        said = "" if self.spec.negated or default is None else f" (default {default:g})" \
            if isinstance(default, float) else f" (default {default})"
        lead = "turns off: " if self.spec.negated else ""
        return "; ".join(f"{n}: {lead}{h}" for n, h in zip(self.searches, self.helps, strict=True)) + said


def _merged(searches: list[Search]) -> dict[str, DeclaredOption]:
    out: dict[str, DeclaredOption] = {}
    flags: dict[str, str] = {}
    for search in searches:
        for spec in search.specs:
            seen = out.get(spec.name)
            if seen is None:
                for f in (spec.flag, spec.short, spec.dest):
                    if f is not None and flags.get(f, spec.name) != spec.name:
                        raise ValueError(f"search {search.name!r}: option {spec.name!r} takes {f}, which "
                                         f"option {flags[f]!r} of another search has; rename it")
                    if f is not None:
                        flags[f] = spec.name
                out[spec.name] = DeclaredOption(spec, (search.name,), (spec.help,))
            elif replace(seen.spec, help="") != replace(spec, help=""):
                raise ValueError(f"search {search.name!r} declares option {spec.name!r} unlike "
                                 f"{seen.searches[0]!r} does (type, default, flag or bounds); one flag cannot "
                                 "mean two things: rename it")
            else:
                out[spec.name] = DeclaredOption(seen.spec, (*seen.searches, search.name), (*seen.helps, spec.help))
    return out


def declared_options() -> dict[str, DeclaredOption]:
    """Every registered search's own options by name, in registration order (an option several
    searches declare alike, such as ``breadth``, once)."""
    _load_entry_points()
    return _merged(list(SEARCHES.values()))


async def run_search(name: str, task: Task[S], puzzle: str, generator: Generator, evaluator: Evaluator | None,
                     client: LMClient | None = None, *, trace: Trace | None = None, usage: Usage | None = None,
                     gate: bool = True, depth: int | None = None, seed: int = 0,
                     **options: OptionValue) -> SearchResult[S]:
    """One entry point for every registered search, with parts you made (``make_generator``,
    ``make_evaluator`` or your own): ``run_search("mcts", task, "4 9 10 13", gen, ev, iterations=50)``.
    ``options`` are the search's own (``Search.options``) besides ``depth`` and ``seed``; one it
    does not take is a TypeError in one line naming those it does, a bad value a ValueError.
    ``evaluator`` may be None for a search that scores nothing (Long's controller without the oracle)."""
    search = get_search(name)
    own = [s.name for s in search.specs]
    for key in options:
        if key not in own:
            raise TypeError(f"{key!r} is not an option of search {name!r}; its options are "
                            f"{', '.join((*COMMON_OPTIONS, *own))}")
    settings = SearchSettings(method=name, gate=gate, generator=generator.name, depth=depth, seed=seed,
                              options=search.options_from(options))  # a bad value, before the run starts
    if evaluator is not None:
        settings.evaluator = evaluator.name
    return await search(search.open(task, puzzle, generator, evaluator, client, trace, usage, gate), settings)


# The paper's BFS and DFS and the complete search under the names they had as functions:
# ``bfs(task, puzzle, generator, evaluator, client, breadth=2)`` is ``run_search("tot-bfs", ...)``.
bfs = partial(run_search, "tot-bfs")
dfs = partial(run_search, "tot-dfs")
complete_dfs = partial(run_search, "tot-complete")


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
