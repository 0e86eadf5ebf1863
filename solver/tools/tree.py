"""Rebuild the search tree from a trace's events: one tree per run, each node with its fate.

Task-agnostic: it reads only the event names and fields that ``solver/searches/tot.py`` writes. A trace
file may hold several runs appended one after another; each begins with a ``start`` event (or, for
traces written by calling ``bfs``/``dfs`` directly, with a ``search`` event).

Ground truth (is this state still solvable?) is optional. It is read from a boolean ``solvable``
field on any event that names a ``node`` (``score``, ``cut``, ``keep``, ``verdict``, ...), or given
separately as a mapping of node id to bool (see :func:`load_truth`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from solver.inputs import MAX_TRACE_FILE, read_text
from solver.tools.truth import JUDGED_CUTS, is_false_prune

# What finally happened to a node, from the search's point of view.
FATES: dict[str, str] = {
    "root": "the puzzle",
    "solution": "solved, answer re-verified",
    "unverified": "solved, but its answer is not verified (a check failed or could not be made)",
    "solved": "solved, not needed (an answer was already found)",
    "kept": "kept by the search",
    "backtracked": "kept, expanded, then backtracked from",
    "pruned": "cut by the evaluator (score below the threshold)",
    "beam": "lost to the beam",
    "depth": "cut at the depth limit",
    "children": "cut by the cap on children per node",
    "duplicate": "duplicate of a state already generated",
    "rejected": "rejected by the exact checker",
    "unexplored": "generated, but the search ended before deciding",
}
# Fates where the evaluator's judgement removed a state from the search (solver/tools/truth.py holds the
# one definition of a false prune, shared with tot audit).
PRUNED_FATES = JUDGED_CUTS


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One node as the search saw it. ``key`` is the trace's node id as text, ``r<n>`` for a
    rejected proposal, or ``p<n>`` for a scored thought pruned before it became a node (the trace
    gives those no node id)."""

    key: str
    parent: str | None
    depth: int
    thought: str
    state: str | None
    verdict: str  # root, valid, solved, invalid, unchecked (gate off), or unknown (not in the trace)
    reason: str | None
    prior: float | None
    score: float | None
    detail: Any
    fate: str
    expanded_at: int | None  # 1 for the first node expanded, 2 for the next, ...
    tie: bool  # lost to the beam on a tie with the last kept score
    on_path: bool  # on the path from the root to the verified answer
    answer: str | None
    verified: bool | None
    solvable: bool | None
    errors: tuple[str, ...]
    children: tuple[str, ...]

    @property
    def false_prune(self) -> bool:
        return is_false_prune(self.solvable, self.fate)


@dataclass(frozen=True, slots=True)
class SearchTree:
    """The tree of one run, nodes in the order the trace first mentions them (root first)."""

    run: int  # 1-based position of the run in its trace file
    info: dict[str, Any]  # the start and search events' fields (task, puzzle, method, model, ...)
    end: dict[str, Any] | None  # the end event's fields; None when the run was cut off
    nodes: dict[str, TreeNode]
    root: str | None
    answer: str | None
    verified: bool
    errors: tuple[str, ...] = field(default=())

    def counts(self) -> dict[str, int]:
        out = {fate: 0 for fate in FATES}
        for nd in self.nodes.values():
            out[nd.fate] = out.get(nd.fate, 0) + 1
        return {k: v for k, v in out.items() if v}

    def false_prunes(self) -> list[TreeNode]:
        return [nd for nd in self.nodes.values() if nd.false_prune]

    def has_truth(self) -> bool:
        return any(nd.solvable is not None for nd in self.nodes.values())

    def outcome(self) -> str:
        if self.verified:
            return f"answer {self.answer} [verified]"
        if self.end is None:
            return "incomplete trace (no end event)"
        if self.end.get("error"):
            return f"error: {self.end['error']}"
        stop = self.end.get("stopped_by")
        return "no verified solution found" + (f" ({stop} budget ran out)" if stop else "")


class _Draft:
    """Mutable node while events are read; frozen into a TreeNode at the end."""

    __slots__ = ("key", "parent", "depth", "thought", "state", "verdict", "reason", "prior", "score",
                 "detail", "solved", "kept", "cut", "tie", "backtracked", "expanded_at", "answer", "verified",
                 "solvable", "errors", "children")

    def __init__(self, key: str, parent: str | None, depth: int, thought: str = "",
                 verdict: str = "unknown", prior: float | None = None) -> None:
        self.key, self.parent, self.depth, self.thought = key, parent, depth, thought
        self.verdict, self.prior = verdict, prior
        self.state: str | None = None
        self.reason: str | None = None
        self.score: float | None = None
        self.detail: Any = None
        self.solved = self.kept = self.tie = self.backtracked = False
        self.cut: str | None = None
        self.expanded_at: int | None = None
        self.answer: str | None = None
        self.verified: bool | None = None
        self.solvable: bool | None = None
        self.errors: list[str] = []
        self.children: list[str] = []

    def fate(self) -> str:
        if self.verdict == "invalid":
            return "rejected"
        if self.verified is True:
            return "solution"
        if self.verified is False:
            return "unverified"
        if self.cut is not None:
            return self.cut if self.cut in FATES else "pruned"
        if self.backtracked:
            return "backtracked"
        if self.kept:
            return "kept"
        if self.solved:
            return "solved"
        if self.verdict == "root":
            return "root"
        return "unexplored"


def split_runs(events: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Cut an appended trace into runs: a ``start`` begins one, and so does a ``search`` event
    when the current run already has one (a run written without ``start``)."""
    runs: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] | None = None
    searched = False
    for ev in events:
        name = ev.get("event")
        if current is None or name == "start" or (name == "search" and searched):
            current = []
            runs.append(current)
            searched = False
        if name == "search":
            searched = True
        current.append(ev)
    return runs


def _node_key(value: Any) -> str | None:
    return None if value is None else str(value)


def build_tree(events: Sequence[dict[str, Any]], run: int = 1,
               truth: Mapping[str, bool] | None = None) -> SearchTree:
    """The tree of one run's events. ``truth`` maps node keys to solvable; it overrides any
    ``solvable`` field in the trace."""
    drafts: dict[str, _Draft] = {}
    info: dict[str, Any] = {}
    end: dict[str, Any] | None = None
    root: str | None = None
    expanding: str | None = None
    expansions = 0
    rejected = probed = 0
    probes: dict[tuple[str | None, str], tuple[Any, Any]] = {}  # (parent, thought) -> (score, detail)
    last_solved: str | None = None
    errors: list[str] = []
    answer: str | None = None
    verified = False
    solution: str | None = None

    def get(key: str) -> _Draft:
        # A node named before it was created (a cut-off or hand-made trace) still gets a place.
        if key not in drafts:
            drafts[key] = _Draft(key, None, 0)
        return drafts[key]

    for ev in events:
        name = ev.get("event")
        key = _node_key(ev.get("node"))
        if name in ("start", "search"):
            info.update({k: v for k, v in ev.items() if k not in ("event", "t")})
        elif name == "root" and key is not None:
            nd = get(key)
            nd.verdict, nd.state = "root", ev.get("state")
            root = root or key
        elif name == "expand" and key is not None:
            if get(key).expanded_at is None:  # a controller may ask the same node again: keep the first
                expansions += 1
                drafts[key].expanded_at = expansions
            expanding = key
        elif name == "proposal":
            parent = _node_key(ev.get("parent"))
            if key is None:
                rejected += 1
                key = f"r{rejected}"
            depth = ev.get("depth")
            if depth is None:
                depth = (drafts[parent].depth + 1) if parent in drafts else 1
            nd = _Draft(key, parent, int(depth), str(ev.get("thought", "")), "unknown", ev.get("prior"))
            drafts[key] = nd
            if parent is not None:
                get(parent).children.append(key)
            if (parent, nd.thought) in probes:  # scored before it became a node (Long's controller)
                nd.score, nd.detail = probes.pop((parent, nd.thought))
        elif name == "verdict":
            verdict = str(ev.get("verdict", "unknown"))
            if key is None:
                # A rejected thought: its proposal event came just before, under the same parent.
                key = f"r{rejected}"
                if key not in drafts or drafts[key].thought != ev.get("thought", drafts[key].thought):
                    continue
            nd = get(key)
            nd.verdict, nd.reason = verdict, ev.get("reason")
            nd.solved = verdict == "solved" or ev.get("solved") is True
            if nd.solved:
                last_solved = key
            if ev.get("state") is not None:
                nd.state = ev["state"]
        elif name == "score" and key is not None:
            nd = get(key)
            nd.score, nd.detail = ev.get("score"), ev.get("detail")
        elif name == "score" and "thought" in ev:
            probes[(_node_key(ev.get("parent")), str(ev["thought"]))] = (ev.get("score"), ev.get("detail"))
        elif name == "keep" and key is not None:
            get(key).kept = True
        elif name == "cut" and key is not None:
            nd = get(key)
            why = str(ev.get("why", "pruned"))
            if why in FATES:
                nd.cut, nd.tie = why, bool(ev.get("tie", False))
            else:  # e.g. "no new proposal": a remark on a node, not the end of it
                nd.reason = f"{nd.reason}; {why}" if nd.reason else why
        elif name == "cut" and "thought" in ev:
            # A scored thought cut before it became a node: it passed the gate, so it is shown.
            parent = _node_key(ev.get("parent"))
            probed += 1
            key = f"p{probed}"
            nd = _Draft(key, parent, (drafts[parent].depth + 1) if parent in drafts else 1, str(ev["thought"]),
                        "valid")
            nd.score, nd.detail = probes.pop((parent, nd.thought), (ev.get("score"), None))
            nd.cut = str(ev.get("why", "pruned"))
            drafts[key] = nd
            if parent is not None:
                get(parent).children.append(key)
        elif name == "backtrack" and key is not None:
            get(key).backtracked = True
        elif name == "answer" and (key is not None or last_solved is not None):
            # Without a node id (single-shot baselines), the answer is the last solved thought's.
            key = key if key is not None else last_solved
            assert key is not None
            nd = get(key)
            nd.answer, nd.verified = ev.get("answer"), bool(ev.get("verified"))
            if not nd.verified and ev.get("reason"):
                nd.reason = f"{nd.reason}; answer: {ev['reason']}" if nd.reason else str(ev["reason"])
            if nd.verified and solution is None:
                solution, answer, verified = key, nd.answer, True
        elif name == "end":
            end = {k: v for k, v in ev.items() if k not in ("event", "t")}
        elif name == "lm_error":
            msg = f"{ev.get('purpose', 'call')}: {ev.get('error', '')}"
            errors.append(msg)
            if expanding is not None:
                get(expanding).errors.append(msg)
        if key is not None and isinstance(ev.get("solvable"), bool) and key in drafts:
            drafts[key].solvable = ev["solvable"]

    if truth:
        for k, v in truth.items():
            if k in drafts:
                drafts[k].solvable = v

    if root is None:  # a trace without a root event: the first node without a parent stands in
        root = next((k for k, d in drafts.items() if d.parent is None), None)

    on_path: set[str] = set()
    cursor = solution
    while cursor is not None and cursor not in on_path:
        on_path.add(cursor)
        cursor = drafts[cursor].parent if cursor in drafts else None

    nodes = {
        k: TreeNode(k, d.parent, d.depth, d.thought, d.state, d.verdict, d.reason, d.prior, d.score,
                    d.detail, d.fate(), d.expanded_at, d.tie, k in on_path, d.answer, d.verified,
                    d.solvable, tuple(d.errors), tuple(d.children))
        for k, d in drafts.items()
    }
    return SearchTree(run, info, end, nodes, root, answer, verified, tuple(errors))


def build_trees(events: Iterable[dict[str, Any]],
                truth: Mapping[int, Mapping[str, bool]] | None = None) -> list[SearchTree]:
    """One tree per run, in file order; runs that never produced a node are left out."""
    trees = []
    for i, run_events in enumerate(split_runs(events), 1):
        tree = build_tree(run_events, i, (truth or {}).get(i))
        if tree.nodes:
            trees.append(tree)
    return trees


def load_truth(path: str | Path) -> dict[int, dict[str, bool]]:
    """Ground truth from a file: a JSON list, or JSON lines, of objects
    ``{"run": 1, "node": 12, "solvable": true}`` (``run`` is the 1-based run in the trace file and
    defaults to 1). Returns ``{run: {node key: solvable}}``."""
    if not Path(path).exists():
        raise ValueError(f"ground-truth file not found: {path}")
    text = read_text(path, "ground-truth file", MAX_TRACE_FILE).strip()
    try:
        rows = json.loads(text) if text.startswith("[") else [json.loads(ln) for ln in text.splitlines() if ln.strip()]
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON or JSON lines ({exc.msg} at line {exc.lineno})") from None
    out: dict[int, dict[str, bool]] = {}
    for i, row in enumerate(rows, 1):
        if not (isinstance(row, dict) and "node" in row and isinstance(row.get("solvable"), bool)):
            raise ValueError(f'{path}: entry {i} must look like {{"run": 1, "node": 12, "solvable": true}}')
        run = row.get("run", 1)
        if not isinstance(run, int) or run < 1:
            raise ValueError(f"{path}: entry {i}: run must be a positive integer (1 = first run in the trace)")
        out.setdefault(run, {})[str(row["node"])] = row["solvable"]
    return out
