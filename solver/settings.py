"""The settings of a run, in groups: the search, the model, the budget.

``tot solve`` and ``tot bench`` fill them from the same command-line flags as ever
(``solver.tools.cli.settings_from``); ``solver.run.solve`` runs a puzzle under them. Where the
output goes (``--trace``, ``--json``) is the command line's business, not a run's: ``solve``
takes the trace itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from solver.budget import Budget
from solver.lm.cache import CacheMode

__all__ = ["DEFAULT_EVALUATOR", "DEFAULT_GENERATOR", "ModelSettings", "SearchSettings", "Settings"]

# Measured with the embedded model on Game of 24 (README, "Which generator and evaluator"): the
# checker enumerates legal steps and the model's label probabilities score states.
DEFAULT_GENERATOR = "enumerate"
DEFAULT_EVALUATOR = "likelihood"


@dataclass(slots=True)
class SearchSettings:
    """Which search, with which generator and evaluator, and their sizes. A registered search
    (``solver.searches``) gets these as its options."""

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
    dfs_children: int | None = None  # --method tot-dfs: children tried per node (None: all; library only)
    max_rounds: int = 100  # --method long: Long's K
    gate: bool = True  # False: the paper's unchecked behaviour (ablation; see capabilities.Unchecked)
    seed: int = 0  # searches that draw at random (mcts rollouts, beam sampling) draw from this seed
    iterations: int = 200  # --method mcts: iterations (solver/mcts.py DEFAULT_ITERATIONS)
    exploration: float = 1.0  # --method mcts: UCT's exploration constant c
    rollout_depth: int = 0  # --method mcts: random gated steps per rollout (0: the evaluator's value)
    answers: int = 1  # --method mcts: distinct accepted answers to find before it stops
    candidates: int = 16  # --method beam: next steps drawn per chain (n); the beam is ``breadth`` (k)
    mix: float = 0.5  # --method beam: lambda, the weight of the generation log-likelihood
    tau: float = 0.5  # --method beam: the sampling temperature
    decay: float = 0.5  # --method beam: tau's decay alpha per level
    beam_runs: int = 100  # --method beam: runs from the root until a verified answer (1: the paper's one)


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
    task: str | None = None  # the task being run (which shipped adapter ``auto`` means)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(slots=True)
class Settings:
    """One run's settings: ``search``, ``model`` and the per-puzzle ``budget``."""

    search: SearchSettings = field(default_factory=SearchSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    budget: Budget = field(default_factory=Budget)
