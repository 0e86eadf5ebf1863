"""The false-prune audit as a library call: your task's exact oracle judges a trace of your search.

    from solver.tools.audit import audit_trace
    result = audit_trace(MyTask(), "run.jsonl")      # or a Trace, or a list of events
    fp = result.groups[0].overall.false_prune        # a Proportion: k, n, rate, interval (95% Wilson)

The figures are those of ``tot audit`` (the same computation, ``solver.tools.audit.figures``):
one ``GroupAudit`` per group of runs (task, method, generator, evaluator, model) with figures over
all depths and per depth. The task must have an exact ``oracle(state)`` and ``restore(puzzle,
description)`` (the inverse of ``describe``); it judges every run of the trace, so it must be the
task the runs used (same name, same options), which is checked against each run's header.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from solver.task_capabilities import HasOracle, Restorable, require, task_options
from solver.tools.audit.figures import audit_with, searches
from solver.tools.audit.render import render
from solver.tools.stats import Proportion
from solver.tools.truth import Oracle, make_oracle
from solver.trace import Trace
from solver.trace_reader import check_events, read_trace

__all__ = ["audit_trace", "TraceAudit", "GroupAudit", "DepthFigures", "ClassFigures", "LostPuzzle"]


def _rate(d: Mapping[str, Any]) -> Proportion:
    return Proportion(int(d["k"]), int(d["n"]))


@dataclass(frozen=True, slots=True)
class ClassFigures:
    """The evaluated states the evaluator judged one way (a label, a vote count, a score bin)."""

    solvable: int
    unsolvable: int
    invalid: int
    unknown: int
    solvable_cut: int
    unsolvable_cut: int
    p_solvable: Proportion  # P(solvable | this judgement), over solvable + unsolvable

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ClassFigures:
        return cls(d["solvable"], d["unsolvable"], d["invalid"], d["unknown"], d["solvable_cut"],
                   d["unsolvable_cut"], _rate(d["p_solvable"]))


@dataclass(frozen=True, slots=True)
class DepthFigures:
    """Figures over the evaluated states of one depth, or of all depths."""

    evaluated: int
    solvable: int
    unsolvable: int
    invalid: int
    unknown: int
    false_prune: Proportion  # solvable states cut by a judgement / solvable states evaluated
    false_prune_pruned: Proportion  # ... cut below the pruning threshold
    false_prune_beam: Proportion  # ... lost to the beam
    false_prune_beam_tie: Proportion  # ... lost to the beam at the last kept score (order decided)
    cut_other_solvable: Proportion  # solvable states cut by depth or child limits (not judgements)
    true_prune: Proportion  # unsolvable states cut by a judgement / unsolvable states evaluated
    classes: Mapping[str, ClassFigures]
    # ... MCTS children never visited when the run ended (no other search leaves any)
    false_prune_unvisited: Proportion = Proportion(0, 0)
    # ... lost to the beam though a ranking with every solvable state first would have kept them
    # (the judgement's share of false_prune_beam; the rest is the beam's width). The paper's BFS
    # only, whose beam chooses once per depth; n = 0 elsewhere
    false_prune_beam_avoidable: Proportion = Proportion(0, 0)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DepthFigures:
        return cls(d["evaluated"], d["solvable"], d["unsolvable"], d["invalid"], d["unknown"],
                   _rate(d["false_prune"]), _rate(d["false_prune_pruned"]), _rate(d["false_prune_beam"]),
                   _rate(d["false_prune_beam_tie"]), _rate(d["cut_other_solvable"]), _rate(d["true_prune"]),
                   {k: ClassFigures.from_json(v) for k, v in d["classes"].items()},
                   _rate(d.get("false_prune_unvisited", {"k": 0, "n": d["solvable"]})),
                   _rate(d.get("false_prune_beam_avoidable", {"k": 0, "n": 0})))


@dataclass(frozen=True, slots=True)
class LostPuzzle:
    """A puzzle whose root was solvable and whose run kept no solvable state to the end."""

    puzzle: str
    step: int | None  # the first depth with no solvable state kept
    cause: str


@dataclass(frozen=True, slots=True)
class GroupAudit:
    """The runs of one source with the same task, method, generator, evaluator and model."""

    source: str
    task: str | None
    method: str | None
    generator: str | None
    evaluator: str | None
    model: str | None
    runs: int
    overall: DepthFigures
    by_depth: Mapping[int, DepthFigures]
    puzzles_solvable: int
    answered: int
    answered_correct: int  # answers the oracle confirms
    lost: tuple[LostPuzzle, ...]
    lost_rate: Proportion  # lost puzzles / puzzles whose root was solvable

    @classmethod
    def from_json(cls, g: Mapping[str, Any]) -> GroupAudit:
        depths = g["depths"]
        return cls(g["source"], g.get("task"), g.get("method"), g.get("generator"), g.get("evaluator"),
                   g.get("model"), g["runs"], DepthFigures.from_json(depths["all"]),
                   {int(k): DepthFigures.from_json(v) for k, v in depths.items() if k != "all"},
                   g["puzzles_solvable"], g["answered"], g["answered_correct"],
                   tuple(LostPuzzle(x["puzzle"], x["step"], x["cause"]) for x in g["lost"]), _rate(g["lost_rate"]))


@dataclass(frozen=True, slots=True)
class TraceAudit:
    """The audit of one trace: its groups, and ``report``, the object ``tot audit --json`` prints."""

    groups: tuple[GroupAudit, ...]
    report: Mapping[str, Any]

    def text(self, markdown: bool = False) -> str:
        """The tables ``tot audit`` prints (Markdown with ``markdown=True``)."""
        return render(dict(self.report), markdown)


def audit_trace(task: Any, trace: str | Path | Trace | Iterable[Mapping[str, Any]],
                source: str | None = None) -> TraceAudit:
    """Audit ``trace`` (a trace file, a ``Trace``, or its events) with ``task``'s exact oracle.
    ValueError (one line) when the task cannot judge, or the trace is malformed, holds no search,
    or records runs of another task or other options."""
    require(task, HasOracle, "the false-prune audit")
    require(task, Restorable, "the false-prune audit")
    if isinstance(trace, (str, Path)):
        label = source or str(trace)
        events = read_trace(trace)
    else:
        label = source or "trace"
        events = check_events(trace.events if isinstance(trace, Trace) else trace, label)
    events = searches(events, label)
    judge = make_oracle(task)
    options = task_options(task)

    def judge_for(name: str, recorded: dict[str, Any]) -> Oracle | str:
        if name not in (task.name, "?"):
            raise ValueError(f"{label} holds runs of task {name!r}; the task given is {task.name!r}")
        if recorded and _canon(recorded) != _canon(options):
            raise ValueError(f"{label} holds runs with task options {_canon(recorded)}; the task given has "
                             f"{_canon(options)}")
        return judge

    report = audit_with([(label, events)], judge_for)
    return TraceAudit(tuple(GroupAudit.from_json(g) for g in report["groups"]), report)


def _canon(options: Mapping[str, Any]) -> str:
    return json.dumps(options, sort_keys=True, default=str)
