"""Hypothesis strategies: scripted models, search settings, budgets, and whole cases."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

from hypothesis import strategies as st

from solver.budget import Budget
from solver.searches import get_search, search_names
from solver.settings import SearchSettings
from solver.testing.scripted import Script

# The built-in searches whose own order the kit checks (solver/testing/invariants.py); by default
# ``search_settings`` draws every registered search (a user's own too), which gets the checks that
# hold for any search.
METHODS = ("tot-bfs", "tot-dfs", "tot-complete", "best-first", "mcts", "beam")
GENERATORS = ("propose", "sample", "enumerate", "enumerate-rank", "enumerate-choice")
EVALUATORS = ("value", "vote", "likelihood", "prior", "oracle", "random")

# A strategy of thought texts, or a function from the puzzle text to one.
ThoughtTexts = Union[st.SearchStrategy[str], Callable[[str], st.SearchStrategy[str]]]


@dataclass(frozen=True, slots=True)
class Case:
    """One generated run: a puzzle, the search settings (``solver.settings.SearchSettings``, as
    ``tot solve`` makes them: the method, generator and evaluator names, a depth limit, ``k``
    samples, ``n_evaluate`` evaluations and the search's own options), the model's script, the
    budget and how many model requests may run at once (``concurrency``)."""

    puzzle: str
    settings: SearchSettings = field(default_factory=lambda: settings_of("tot-bfs", breadth=2))
    script: Script = field(default_factory=Script)
    budget: Budget = field(default_factory=Budget)
    concurrency: int = 1


def settings_of(method: str, generator: str = "enumerate", evaluator: str = "prior", *, depth: int | None = None,
                k: int = 3, n: int = 2, **options: object) -> SearchSettings:
    """Search settings for ``method`` with ``options`` by name (those the search does not declare,
    another search's, are left out): ``settings_of("tot-bfs", breadth=3)``."""
    return SearchSettings(method, generator, evaluator, depth, k, n, options=get_search(method).options_from(options))


# Shares in steps of a tenth: hypothesis draws boundary floats (0.0, 1.0) far more often than others.
_tenths = st.integers(0, 10).map(lambda k: k / 10)


def scripts(*, legal: st.SearchStrategy[float] | None = None, fail_rate: st.SearchStrategy[float] | None = None,
            max_lines: st.SearchStrategy[int] | None = None,
            pool: st.SearchStrategy[Sequence[str]] | None = None) -> st.SearchStrategy[Script]:
    """Scripted models: a seed, the share of legal lines (the rest split between illegal and
    garbage), the share of failing calls, lines per proposal, and the pool of thought texts."""
    return st.builds(
        _script, st.integers(0, 2**32 - 1), legal if legal is not None else _tenths,
        _tenths, fail_rate if fail_rate is not None else st.sampled_from([0.0, 0.0, 0.1, 0.3]),
        max_lines if max_lines is not None else st.integers(0, 6),
        pool if pool is not None else st.just(()))


def _script(seed: int, legal: float, illegal_share: float, fail_rate: float, max_lines: int,
            pool: Sequence[str]) -> Script:
    rest = 1.0 - legal
    return Script(seed, legal, rest * illegal_share, rest * (1.0 - illegal_share), fail_rate, max_lines, tuple(pool))


def search_settings(*, methods: Sequence[str] | None = None, generators: Sequence[str] = GENERATORS,
                    evaluators: Sequence[str] = EVALUATORS, max_breadth: int = 4,
                    max_depth: int | None = None) -> st.SearchStrategy[SearchSettings]:
    """Search settings; ``methods`` defaults to every registered search (``solver.searches``:
    built in, registered with ``register_search`` or by a ``tot.searches`` entry point) when the
    strategy is made; ``max_depth`` (when given) also draws depth limits 1..max_depth. Of the
    searches' own options it draws a beam ``breadth`` (1..max_breadth), DFS's ``dfs_children`` and
    MCTS's ``answers`` (1..3); the rest keep their defaults."""
    if methods is None:
        methods = search_names()
    depth = st.none() if max_depth is None else st.one_of(st.none(), st.integers(1, max_depth))
    return st.builds(_settings, st.sampled_from(list(methods)), st.sampled_from(list(generators)),
                     st.sampled_from(list(evaluators)), st.integers(1, max_breadth), depth,
                     st.one_of(st.none(), st.integers(1, 3)), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3))


def _settings(method: str, generator: str, evaluator: str, breadth: int, depth: int | None,
              dfs_children: int | None, k: int, n: int, answers: int) -> SearchSettings:
    return settings_of(method, generator, evaluator, depth=depth, k=k, n=n, breadth=breadth,
                       dfs_children=dfs_children, answers=answers)


def budgets(*, max_calls: int | None = 12, max_tokens: int | None = 400,
            max_steps: int | None = 10) -> st.SearchStrategy[Budget]:
    """Budgets of calls, tokens and steps, each unlimited (None) or drawn from 0..max (steps
    from 1); a max of None never limits that resource. Seconds are never drawn: a run they cut
    would depend on the machine's speed, and could not be replayed."""

    def one(top: int | None, low: int = 0) -> st.SearchStrategy[int | None]:
        return st.none() if top is None else st.one_of(st.none(), st.integers(low, top))

    return st.builds(Budget, one(max_calls), one(max_tokens), one(max_steps, 1))


def cases(puzzles: Sequence[str] | st.SearchStrategy[str], *,
          settings: st.SearchStrategy[SearchSettings] | None = None,
          models: st.SearchStrategy[Script] | None = None,
          budget: st.SearchStrategy[Budget] | None = None,
          thoughts: ThoughtTexts | None = None, pool_size: int = 8,
          max_concurrency: int = 3) -> st.SearchStrategy[Case]:
    """Whole cases. ``thoughts`` (a strategy of thought texts, or a function from the puzzle to
    one) fills the script's pool, for tasks whose legal moves cannot be enumerated; model requests
    run up to ``max_concurrency`` at once."""
    puzzle_st = puzzles if isinstance(puzzles, st.SearchStrategy) else st.sampled_from(list(puzzles))
    models = models if models is not None else scripts()
    settings = settings if settings is not None else search_settings()
    budget = budget if budget is not None else budgets()

    @st.composite
    def one(draw: st.DrawFn) -> Case:
        puzzle = draw(puzzle_st)
        script = draw(models)
        if thoughts is not None:
            texts = thoughts if isinstance(thoughts, st.SearchStrategy) else thoughts(puzzle)
            pool = draw(st.lists(texts, min_size=1, max_size=pool_size))
            script = Script(script.seed, script.legal, script.illegal, script.garbage, script.fail_rate,
                            script.max_lines, tuple(pool))
        return Case(puzzle, draw(settings), script, draw(budget), draw(st.integers(1, max_concurrency)))

    return one()
