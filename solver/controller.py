"""Long (2023)'s memory and rule-based controller, as a task-agnostic search.

One round checks one proposal for the current node. The exact gate keeps invalid proposals out
of the tree, so "backtrack to the parent of an invalid board" means staying at the node that
proposed it (as Long's own code does: it rolls back one step from the invalid board). After
``max_children`` (Long's C) proposals at a node without a solution, the controller returns to
that node's parent, whose state the memory still holds unchanged; the root has no parent, so the
controller keeps asking there. It stops at a verified solution or after ``max_rounds`` (K).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from solver.budget import BudgetExhausted, Usage
from solver.evaluators import Evaluator
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.lm.session import Session
from solver.node import Node
from solver.search import SearchResult, _Run, _run_usage
from solver.task import Task, Thought
from solver.trace import Trace
from verifiers.verdict import Invalid, Solved

__all__ = ["DEFAULT_CHILDREN", "DEFAULT_ROUNDS", "Memory", "long_search"]

DEFAULT_CHILDREN = 5  # Long's C
DEFAULT_ROUNDS = 100  # Long's K
_SEED_STRIDE = 1000  # fresh seeds per request at the same node, clear of Sample's seed+i


@dataclass(slots=True)
class Memory:
    """Long's memory: the tree of nodes reached so far, which node is current, what each node has
    already been offered (so a repeated proposal is not checked twice) and the proposals still
    waiting to be tried there. The conversation itself is in the trace."""

    root: Node[Any]
    current: Node[Any]
    tried: dict[int, int] = field(default_factory=dict)
    requests: dict[int, int] = field(default_factory=dict)
    offered: dict[int, set[str]] = field(default_factory=dict)
    pending: dict[int, list[Thought]] = field(default_factory=dict)
    visited: set[Any] = field(default_factory=set)

    def exhausted(self, node: Node[Any], max_children: int) -> bool:
        return self.tried.get(node.id, 0) >= max_children


def _reseeded(generator: Generator, attempt: int) -> Generator:
    """The same generator with a fresh sampling seed for the ``attempt``-th request at a node, so
    that asking again at a node can give something new (identical requests are memoised)."""
    params = getattr(generator, "params", None)
    if attempt == 0 or params is None or not dataclasses.is_dataclass(generator):
        return generator
    seed = (getattr(params, "seed", None) or 0) + attempt * _SEED_STRIDE
    return dataclasses.replace(generator, params=dataclasses.replace(params, seed=seed))  # type: ignore[type-var]


async def long_search(task: Task[Any], puzzle: str, generator: Generator, client: LMClient | None, *,
                      max_children: int = DEFAULT_CHILDREN, max_rounds: int = DEFAULT_ROUNDS,
                      depth: int | None = None, evaluator: Evaluator | None = None,
                      trace: Trace | None = None, usage: Usage | None = None) -> SearchResult:
    """Long's controller. With ``evaluator`` (e.g. the exact oracle, for an upper bound), the
    proposals of a node are tried in non-increasing score order and those scoring below its
    ``prune_below`` are dropped; without one (Long), in the generator's order."""
    if max_children < 1 or max_rounds < 1:
        raise ValueError("the controller needs at least one child per node and one round")
    trace = trace or Trace()
    usage = usage or _run_usage(client)
    run = _Run(task, puzzle, generator, evaluator if evaluator is not None else _NoEvaluator(),
               client, trace, usage)  # checks the task first
    max_depth = depth or task.max_depth
    trace.emit("search", **run.about(), method="long", max_children=max_children, max_rounds=max_rounds,
               depth=max_depth, generator=generator.name,
               evaluator=evaluator.name if evaluator is not None else None)
    root = run.root()
    mem = Memory(root, root, visited={root.state})

    async def next_proposal(node: Node[Any]) -> Thought | None:
        queue = mem.pending.setdefault(node.id, [])
        if not queue:
            attempt = mem.requests.get(node.id, 0)
            mem.requests[node.id] = attempt + 1
            run.expanded += 1
            trace.emit("expand", node=node.id, depth=node.depth, request=attempt + 1)
            thoughts = await _reseeded(generator, attempt)(task, node.state, run.model)
            offered = mem.offered.setdefault(node.id, set())
            fresh = []
            for th in thoughts:
                if th.text not in offered:
                    offered.add(th.text)
                    fresh.append(th)
            queue.extend(await _ranked(node, fresh) if evaluator is not None else fresh)
        return queue.pop(0) if queue else None

    async def _ranked(node: Node[Any], thoughts: list[Thought]) -> list[Thought]:
        assert evaluator is not None
        scored: list[tuple[Thought, Node[Any]]] = []
        for th in thoughts:
            verdict = task.check(node.state, th)
            if isinstance(verdict, Invalid):  # recorded here, since no round will try it
                run.proposed += 1
                run.rejected += 1
                trace.emit("proposal", parent=node.id, thought=th.text, prior=th.prior)
                trace.emit("verdict", parent=node.id, thought=th.text, verdict="invalid", reason=verdict.reason)
            else:
                # Id -1: a scoring probe, not a tree node (the round that tries it makes the node).
                scored.append((th, Node(-1, verdict.state, node, node.depth + 1, th.text, th.prior)))
        if not scored:
            return []
        results = await evaluator(task, [nd for _th, nd in scored], run.model)
        for (th, probe), (score, detail) in zip(scored, results, strict=False):
            # The probe's state lets tot audit judge this scored thought against the exact oracle.
            trace.emit("score", parent=node.id, thought=th.text, score=score, detail=detail,
                       state=task.describe(probe.state))
        keep = []
        for k, ((th, _nd), (score, _d)) in enumerate(zip(scored, results, strict=False)):
            if score >= evaluator.prune_below:
                keep.append((score, k, th))
            else:
                trace.emit("cut", parent=node.id, thought=th.text, why="pruned", score=score)
        keep.sort(key=lambda x: (-x[0], x[1]))
        return [th for _s, _k, th in keep]

    try:
        for rnd in range(1, max_rounds + 1):
            usage.check_step()
            node = mem.current
            trace.emit("round", round=rnd, node=node.id, depth=node.depth)
            thought = await next_proposal(node)
            mem.tried[node.id] = mem.tried.get(node.id, 0) + 1
            if thought is None:
                trace.emit("cut", node=node.id, why="no new proposal")
            else:
                hit = _step(run, mem, node, thought, max_depth)
                if hit is not None:
                    return run.result(hit[0], hit[1], None)
            while mem.current is not mem.root and mem.exhausted(mem.current, max_children):
                child = mem.current
                parent = child.parent
                assert parent is not None
                trace.emit("backtrack", node=child.id, to=parent.id, state=task.describe(parent.state),
                           why=f"{mem.tried[child.id]} children tried")
                mem.current = parent
    except BudgetExhausted as exc:
        return run.result(None, None, exc.which)
    return run.result(None, None, "rounds")


def _step(run: _Run, mem: Memory, node: Node[Any], thought: Thought,
          max_depth: int) -> tuple[Node[Any], str] | None:
    """Gate one proposal; a valid one becomes the current node. Returns a verified solution."""
    run.proposed += 1
    verdict = run.task.check(node.state, thought)
    if isinstance(verdict, Invalid):
        run.rejected += 1
        run.trace.emit("proposal", parent=node.id, thought=thought.text, prior=thought.prior)
        run.trace.emit("verdict", parent=node.id, thought=thought.text, verdict="invalid", reason=verdict.reason)
        return None
    solved = isinstance(verdict, Solved)
    child = run.nodes.make(verdict.state, node, thought.text, thought.prior, solved, verdict.note)
    run.trace.emit("proposal", node=child.id, parent=node.id, depth=child.depth, thought=thought.text,
                   prior=thought.prior)
    run.trace.emit("verdict", node=child.id, verdict="solved" if solved else "valid",
                   reason=verdict.note or None, state=run.task.describe(child.state))
    if solved:
        answer = run.accept(child)
        return (child, answer) if answer is not None else None
    if child.state in mem.visited:
        run.trace.emit("cut", node=child.id, why="duplicate")
        return None
    if child.depth >= max_depth:
        run.trace.emit("cut", node=child.id, why="depth")
        return None
    mem.visited.add(child.state)
    run.trace.emit("keep", node=child.id, score=None)
    mem.current = child
    return None


@dataclass(slots=True)
class _NoEvaluator:
    """Long's controller scores nothing; _Run only needs something with this shape."""

    name: str = "none"
    prune_below: float = float("-inf")

    async def __call__(self, task: Task[Any], nodes: Any, model: Session | None) -> list[tuple[float, Any]]:
        return [(0.0, None) for _ in nodes]
