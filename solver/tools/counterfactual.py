"""Counterfactual replays: the candidates a run generated, re-selected under another evaluator or
selection rule, to say what a perfect judge, other tie-breaks or a wider beam would have kept.

A replay uses only what the trace recorded: the children a node really had. When the replayed
search wants to expand a node the run never expanded (it was cut, or the run ended first), its
children are unknown and the puzzle is counted as **undecidable from the log**, never guessed.
A node the run expanded counts as expanded with exactly its recorded children (a run cut short by
a budget may have recorded only part of the last node's children).

Policies (``--counterfactual`` takes a comma-separated list; ``+`` combines modifiers):

- ``original``: the recorded scores and the run's own rule (a sanity check: it reproduces the run);
- ``oracle``: a perfect judge, 1 for a solvable state and 0 otherwise, same selection rule;
- ``ties=reverse``: the recorded scores, equal scores ordered last-generated first;
- ``beam=N``: BFS keeps N states per level; DFS tries at most N children per node.

BFS replays keep the ``breadth`` best candidates of each level (stable order: generation order
unless ``ties=reverse``) and stop at the first level with a solved state. DFS replays visit
children best first, skip a child scoring below the pruning threshold, and stop at the first
solved state. Cost = states scored by the replay, against the states the run scored.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

SOLVED = "solved"
LOST = "lost"
UNDECIDABLE = "undecidable"


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    oracle: bool = False
    reverse_ties: bool = False
    beam: int | None = None


def parse_policies(text: str) -> list[Policy]:
    """``oracle,beam=10,ties=reverse,oracle+beam=10`` -> policies; ValueError for a bad item."""
    out = []
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        oracle = reverse = False
        beam = None
        for part in item.split("+"):
            if part == "oracle":
                oracle = True
            elif part == "original":
                pass
            elif part in ("ties=reverse", "reverse-ties"):
                reverse = True
            elif part.startswith("beam="):
                try:
                    beam = int(part[5:])
                except ValueError:
                    beam = 0
                if not 1 <= beam <= 10_000:
                    raise ValueError(f"--counterfactual {part!r}: beam must be a whole number from 1 to 10000")
            else:
                raise ValueError(f"--counterfactual {part!r}: use original, oracle, ties=reverse or beam=N "
                                 "(comma-separated; + combines)")
        out.append(Policy(item, oracle, reverse, beam))
    if not out:
        raise ValueError("--counterfactual needs at least one policy, e.g. oracle,beam=10")
    return out


@dataclass(slots=True)
class Replay:
    outcome: str  # solved | lost | undecidable
    cost: int  # states scored
    kept_solvable: bool  # BFS: a solvable state was still held when the replay ended


class _Tree:
    """The recorded tree of one run (``solver.tools.audit.runs.Run``) with its ground truth."""

    def __init__(self, run: Any, truth: dict[int, str]) -> None:
        self.run, self.truth = run, truth
        self.children: dict[int, list[Any]] = defaultdict(list)
        for nd in sorted(run.nodes.values(), key=lambda n: n.id):
            if nd is run.root or nd.parent is None or nd.fate == "duplicate":
                continue
            if nd.verdict in ("invalid", "unchecked") and not nd.scored:
                continue  # refused by the gate before scoring (imported logs score them too)
            self.children[nd.parent].append(nd)
        self.last_id = max(run.nodes) if run.nodes else 0
        self.max_depth = int(run.meta.get("depth") or max((n.depth for n in run.nodes.values()), default=0))

    def goal(self, nd: Any) -> bool:
        return bool(nd.verdict == "solved" and self.truth.get(nd.id) == "solvable")

    def expanded(self, nd: Any) -> bool:
        """Did the run see this node's children (so its recorded children are all there are)?"""
        if self.children.get(nd.id) or nd is self.run.root or nd.depth >= self.max_depth:
            return True
        return bool(nd.fate == "kept" and self.run.ended and not self.run.stopped_by and nd.id != self.last_id)

    def score(self, nd: Any, policy: Policy) -> float:
        if policy.oracle:
            return 1.0 if self.truth.get(nd.id) == "solvable" else 0.0
        return nd.score if nd.score is not None else float("-inf")

    def rank(self, nodes: Sequence[Any], policy: Policy) -> list[Any]:
        order = list(reversed(nodes)) if policy.reverse_ties else list(nodes)
        return sorted(order, key=lambda n: -self.score(n, policy))  # stable: ties keep `order`


def _bfs(t: _Tree, policy: Policy, breadth: int) -> Replay:
    """A solved state the run did not score is accepted on sight (our BFS); one it scored (an
    imported log that ranked its final answers) counts only when the policy keeps it."""
    frontier = [t.run.root]
    cost = 0
    for _level in range(t.max_depth):
        if any(not t.expanded(nd) for nd in frontier):
            return Replay(UNDECIDABLE, cost, False)
        cands = [c for nd in frontier for c in t.children.get(nd.id, [])]
        if any(t.goal(c) and not c.scored for c in cands):
            return Replay(SOLVED, cost, True)
        ranked = [c for c in cands if c.scored or c.verdict != "solved"]
        if not ranked:
            return Replay(LOST, cost, False)
        cost += len(ranked)
        frontier = t.rank(ranked, policy)[: policy.beam or breadth]
        if any(t.goal(c) for c in frontier):
            return Replay(SOLVED, cost, True)
        frontier = [c for c in frontier if c.verdict != "solved"]
    return Replay(LOST, cost, any(t.truth.get(n.id) == "solvable" for n in frontier))


def _dfs(t: _Tree, policy: Policy, threshold: float) -> Replay:
    cost = 0

    def visit(nd: Any) -> str:
        nonlocal cost
        if not t.expanded(nd):
            return UNDECIDABLE
        kids = t.children.get(nd.id, [])
        for c in kids:
            if t.goal(c):
                return SOLVED
        open_nodes = [c for c in kids if c.verdict != "solved"]
        cost += sum(c.scored for c in kids)
        tried = 0
        for c in t.rank(open_nodes, policy):
            if t.score(c, policy) < threshold or c.depth >= t.max_depth:
                continue
            if policy.beam is not None and tried >= policy.beam:
                break
            tried += 1
            res = visit(c)
            if res != LOST:
                return res
        return LOST

    outcome = visit(t.run.root)
    return Replay(outcome, cost, outcome == SOLVED)


def replay(run: Any, truth: dict[int, str], policy: Policy) -> Replay:
    """Replay one run (a ``solver.tools.audit.runs.Run``) with its ``truth`` (node id -> solvable/...)."""
    t = _Tree(run, truth)
    if str(run.meta.get("method", "")).startswith("tot-dfs"):
        threshold = run.meta.get("prune_below")
        return _dfs(t, policy, float(threshold) if isinstance(threshold, (int, float)) else 0.5)
    breadth = run.meta.get("breadth")
    if not isinstance(breadth, int) or breadth < 1:  # e.g. imported logs: the widest kept level
        kept: dict[int, int] = defaultdict(int)
        for nd in run.nodes.values():
            kept[nd.depth] += nd.fate == "kept" and nd is not run.root
        breadth = max(kept.values(), default=1) or 1
    return _bfs(t, policy, breadth)


def summarize(rows: Iterable[tuple[bool, bool, int, Replay]]) -> dict[str, Any]:
    """rows: (root solvable, run solved it, states the run scored, replay) per run."""
    out = {"runs": 0, "run_solved": 0, "solved": 0, "run_lost": 0, "lost_now_solved": 0,
           "lost_now_kept": 0, "lost_undecidable": 0, "undecidable": 0, "cost": 0, "run_cost": 0}
    for root_ok, solved, run_cost, rep in rows:
        out["runs"] += 1
        out["run_solved"] += solved
        out["solved"] += rep.outcome == SOLVED
        out["undecidable"] += rep.outcome == UNDECIDABLE
        out["cost"] += rep.cost
        out["run_cost"] += run_cost
        if root_ok and not solved:
            out["run_lost"] += 1
            out["lost_now_solved"] += rep.outcome == SOLVED
            out["lost_now_kept"] += rep.outcome == LOST and rep.kept_solvable
            out["lost_undecidable"] += rep.outcome == UNDECIDABLE
    out["extra_cost"] = out["cost"] - out["run_cost"]
    return out
