"""A trace's events as runs of node records: what the audit knows about each node of each run
(its parent, depth, state, gate verdict, score and fate). Long's controller scores thoughts
before they become nodes: such a thought becomes a node of its own with a negative id."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable


@dataclass(slots=True)
class NodeRec:
    """What a trace says about one node."""

    id: int
    depth: int = 0
    parent: int | None = None
    state: str | None = None
    verdict: str | None = None  # valid | solved | invalid | unchecked
    kind: str | None = None  # why a refused step was refused, when the trace says (imported logs)
    scored: bool = False
    score: float | None = None
    detail: Any = None
    fate: str = "open"  # kept | pruned | beam | depth | children | duplicate | open
    tie: bool = False


@dataclass(slots=True)
class Run:
    """One search of one puzzle, as recorded between a ``start`` event and the next."""

    meta: dict[str, Any]
    root: NodeRec | None = None
    nodes: dict[int, NodeRec] = field(default_factory=dict)
    answered: bool = False  # an answer passed the task's own re-verification
    answers: list[int] = field(default_factory=list)  # nodes of those answers
    stopped_by: str | None = None
    ended: bool = False  # False: the trace stops before the search did (a killed run)
    rejected: Counter[str] = field(default_factory=Counter)  # gate refusals that made no node
    probes: dict[tuple[Any, str], NodeRec] = field(default_factory=dict)  # scored before becoming nodes

    @property
    def task(self) -> str:
        return str(self.meta.get("task") or "?")

    @property
    def puzzle(self) -> str:
        return str(self.meta.get("puzzle") or "")


def split_runs(events: Iterable[dict[str, Any]]) -> list[Run]:
    """Cut a trace (possibly many puzzles appended to one file) into runs."""
    runs: list[Run] = []
    cur: Run | None = None
    for ev in events:
        kind = ev.get("event")
        # A new run at each ``start``; and, for searches called directly (no ``start``), at a
        # ``search`` or ``root`` after the current run's root.
        if kind == "start" or cur is None or (kind in ("root", "search") and cur.root is not None):
            meta = {k: v for k, v in ev.items() if k not in ("event", "t")} if kind == "start" else {}
            cur = Run(meta)
            runs.append(cur)
        _apply(cur, ev)
    return [r for r in runs if r.root is not None]


def _node(run: Run, ev: dict[str, Any]) -> NodeRec | None:
    nid = ev.get("node")
    if not isinstance(nid, int):
        return None
    if nid not in run.nodes:
        run.nodes[nid] = NodeRec(nid)
    return run.nodes[nid]


def _apply(run: Run, ev: dict[str, Any]) -> None:
    kind = ev.get("event")
    if kind == "search":
        for key in ("task", "puzzle", "options", "method", "generator", "evaluator", "breadth", "depth",
                    "prune_below"):
            run.meta.setdefault(key, ev.get(key))
        own = ev.get("search_options")  # the search's own options (trace version 2; before: at the top level)
        for key, value in own.items() if isinstance(own, dict) else ():
            if run.meta.get(key) is None:
                run.meta[key] = value
    elif kind == "root":
        nd = _node(run, ev)
        if nd is not None:
            nd.state, nd.verdict, nd.fate = ev.get("state"), "valid", "kept"
            run.root = nd
    elif kind == "proposal":
        nd = _node(run, ev)
        if nd is not None:
            nd.parent, nd.depth = ev.get("parent"), int(ev.get("depth") or 0)
    elif kind == "verdict":
        nd = _node(run, ev)
        if nd is None:  # a refused thought gets no node
            run.rejected[str(ev.get("kind") or "refused by the gate")] += 1
            return
        nd.verdict, nd.state, nd.kind = ev.get("verdict"), ev.get("state"), ev.get("kind")
    elif kind == "score":
        nd = _node(run, ev) if isinstance(ev.get("node"), int) else _probe(run, ev)
        if nd is not None:
            nd.scored, nd.score, nd.detail = True, finite_number(ev.get("score")), ev.get("detail")
    elif kind == "keep":
        nd = _node(run, ev)
        if nd is not None:
            nd.fate = "kept"
    elif kind == "cut":
        nd = _node(run, ev) if isinstance(ev.get("node"), int) else run.probes.get(_probe_key(ev))
        if nd is not None:
            nd.fate, nd.tie = str(ev.get("why") or "other"), bool(ev.get("tie"))
    elif kind == "answer":
        if ev.get("verified"):
            run.answered = True
            if isinstance(ev.get("node"), int):
                run.answers.append(ev["node"])
    elif kind == "end":
        run.stopped_by, run.ended = ev.get("stopped_by"), True


def _probe_key(ev: dict[str, Any]) -> tuple[Any, str]:
    return ev.get("parent"), str(ev.get("thought"))


def _probe(run: Run, ev: dict[str, Any]) -> NodeRec | None:
    """A thought scored before it became a node (Long's controller ranks proposals first): a
    node of its own, with a negative id, judged by the state the score event carries."""
    parent = run.nodes.get(ev["parent"]) if isinstance(ev.get("parent"), int) else None
    if parent is None or not isinstance(ev.get("state"), str):
        return None
    nd = NodeRec(-(len(run.probes) + 1), parent.depth + 1, parent.id, ev["state"], "valid", fate="kept")
    run.nodes[nd.id] = nd
    run.probes[_probe_key(ev)] = nd
    return nd


def finite_number(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None
