"""The Task protocol: everything search needs to know about a puzzle, and nothing more."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Protocol, TypeVar, runtime_checkable

from verifiers.report import AnswerReport
from verifiers.verdict import Verdict

__all__ = ["Restorable", "Task", "Thought", "ValueScale"]

S = TypeVar("S", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Thought:
    """One proposed reasoning step, as text, with an optional prior score from its generator."""

    text: str
    prior: float | None = None


@dataclass(frozen=True, slots=True)
class ValueScale:
    """Maps value labels to numbers (the paper: sure=20, likely=1, impossible=0.001)."""

    labels: dict[str, float] = field(
        default_factory=lambda: {"sure": 20.0, "likely": 1.0, "impossible": 0.001}
    )

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.labels.items())))


@runtime_checkable
class Task(Protocol[S]):
    """The required core of a puzzle family, five methods: parse the puzzle (``root``), the exact
    check of a step (``check``), the answer of a solved state (``answer``), the answer's report
    (``report_answer``) and a short description of a state (``describe``); plus ``name`` and
    ``max_depth``. Search nodes carry their own depth.

    States are frozen and hashable; a step never mutates a state. Everything else a generator,
    evaluator or command may call is an optional capability, each a protocol of its own in
    ``solver.task_capabilities`` (legal moves, prompts and parsers, an exact oracle, restore from a
    trace, ...); a run that needs one the task lacks fails at its start with one line naming it.
    docs/task-protocol.md has the list and a minimal task."""

    name: str
    max_depth: int

    def root(self, puzzle: str) -> S:
        """Parse the puzzle text; raise ValueError with a one-line reason on bad input."""

    def check(self, state: S, thought: Thought) -> Verdict[S]:
        """The exact gate: Invalid(reason), Valid(next) or Solved(next). Never calls a model."""

    def answer(self, state: S) -> str:
        """The answer text of a solved state."""

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every exact check of an answer from the puzzle text alone, each named, under the
        task's rules (``AnswerReport.rules``); ``verified`` is derived from the checks. This is the
        one verdict every output carries (``tot solve``, ``--json``, traces, bench, audit)."""

    def describe(self, state: S) -> str:
        """Short human text of a state, for traces (``tot verify --trace`` compares it)."""


S_co = TypeVar("S_co", bound=Hashable, covariant=True)


@runtime_checkable
class Restorable(Protocol[S_co]):
    """Optional extra of a Task, used by ``tot audit``: rebuild a state from the text that
    ``describe`` wrote into a trace, so the exact oracle can judge states recorded in the past.

    ``restore(puzzle, describe(state)) == state`` must hold (equality of states, as used for
    deduplication); history kept outside equality (how a state was reached) may be lost. Raise
    ValueError with a one-line reason when the text is not a state of this task. A task without
    this method still runs everywhere else; the audit reports it as not auditable.
    """

    def restore(self, puzzle: str, description: str) -> S_co:
        """The state described by ``description`` (from ``describe``) within ``puzzle``."""
