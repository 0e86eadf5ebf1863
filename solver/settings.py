"""The settings of a run, in groups: the search, the model, the budget.

``tot solve`` and ``tot bench`` fill them from the same command-line flags as ever
(``solver.tools.cli.settings_from``); ``solver.run.solve`` runs a puzzle under them. Where the
output goes (``--trace``, ``--json``) is the command line's business, not a run's: ``solve``
takes the trace itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from solver.budget import Budget
from solver.lm.cache import CacheMode

OptionsT = TypeVar("OptionsT")

__all__ = ["DEFAULT_EVALUATOR", "DEFAULT_GENERATOR", "ModelSettings", "SearchSettings", "Settings"]

# Measured with the embedded model on Game of 24 (README, "Which generator and evaluator"): the
# checker enumerates legal steps and the model's label probabilities score states.
DEFAULT_GENERATOR = "enumerate"
DEFAULT_EVALUATOR = "likelihood"


@dataclass(slots=True)
class SearchSettings:
    """Which search, with which generator and evaluator and their sizes, and the search's own
    options: one instance of the options dataclass it takes (``BfsOptions(breadth=2)`` for
    ``tot-bfs``; None: its declared defaults)."""

    method: str = "tot-bfs"
    generator: str = DEFAULT_GENERATOR
    evaluator: str = DEFAULT_EVALUATOR
    depth: int | None = None
    k: int = 5
    n_evaluate: int = 3
    model_free: tuple[str, ...] = ()  # a task's own evaluators that need no model (crosswords: fillable)
    gate: bool = True  # False: the paper's unchecked behaviour (ablation; see task_capabilities.Unchecked)
    seed: int = 0  # searches that draw at random (mcts rollouts, beam sampling) draw from this seed
    options: Any = None

    def own(self, cls: type[OptionsT]) -> OptionsT:
        """The search's own options as ``cls`` (its options dataclass): the instance held, or
        ``cls``'s defaults where none is; TypeError in one line where another search's is held."""
        if self.options is None:
            return cls()
        if not isinstance(self.options, cls):
            raise TypeError(f"the options are {type(self.options).__name__}, not {cls.__name__}")
        return self.options


@dataclass(slots=True)
class ModelSettings:
    """Which model, reached how, and how it samples."""

    temperature: float = 0.7
    seed: int | None = 0
    chat: bool = False
    backend: str = "local"
    model: str | None = None
    base_url: str | None = None  # one URL, or several separated by commas (an endpoint pool)
    scoring: str = "auto"  # OpenAI-compatible servers: auto, echo or top-logprobs
    thinking: str = "auto"  # reasoning models: auto, on, off, low/medium/high or a token bound (--thinking)
    grammar_forced: bool = False  # --grammar on: keep grammars on a server that decodes them slowly
    grammar: bool = True  # propose/sample decode under the task's ThoughtGrammar (--grammar off: not)
    timeout: float = 60.0
    retries: int = 3
    concurrency: int = 4
    probe_parallel: bool = True  # probe whether a server serves requests at once (False: --concurrency given)
    cache: str | None = None
    cache_mode: CacheMode = "record"
    context: int | None = None  # embedded model: cap on its context window (None: TOT_CONTEXT or 8192)
    adapter: str = "auto"  # embedded model: a LoRA adapter, auto (the task's shipped one), off or a path
    task: str | None = None  # the task being run (an adapter trained for another task is refused)
    shipped_adapters: tuple[str, ...] = ()  # the task's own adapters (its plugin's ``adapters``): ``auto`` picks one
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(slots=True)
class Settings:
    """One run's settings: ``search``, ``model`` and the per-puzzle ``budget``."""

    search: SearchSettings = field(default_factory=SearchSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    budget: Budget = field(default_factory=Budget)
