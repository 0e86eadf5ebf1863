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
from typing import Any, Generic, Hashable, TypeVar

from solver.budget import Usage
from solver.evaluators import Evaluator
from solver.expansion import Run, SearchResult, open_run
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.node import Node, SeenStates
from solver.search_options import Options, option
from solver.searches.common import begin
from solver.settings import SearchSettings
from solver.task import Task, Thought
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["Long", "LongOptions", "Memory", "long_search"]


@dataclass(frozen=True)
class LongOptions(Options):
    """``long``'s own options (``solver.search_options``)."""

    max_children: int = option(5, "children per node (C)", at_least=1)  # Long's C
    max_rounds: int = option(100, "rounds (K)", at_least=1)  # Long's K


_SEED_STRIDE = 1000  # fresh seeds per request at the same node, clear of Sample's seed+i


@dataclass(slots=True)
class Memory(Generic[S]):
    """Long's memory: the tree of nodes reached so far, which node is current, what each node has
    already been offered (so a repeated proposal is not checked twice) and the proposals still
    waiting to be tried there. The conversation itself is in the trace."""

    root: Node[S]
    current: Node[S]
    tried: dict[int, int] = field(default_factory=dict)
    requests: dict[int, int] = field(default_factory=dict)
    offered: dict[int, set[str]] = field(default_factory=dict)
    pending: dict[int, list[Thought]] = field(default_factory=dict)
    visited: SeenStates[S] = field(default_factory=lambda: SeenStates(any_depth=True))

    def exhausted(self, node: Node[S], max_children: int) -> bool:
        return self.tried.get(node.id, 0) >= max_children


def _reseeded(generator: Generator, attempt: int) -> Generator:
    """The same generator with a fresh sampling seed for the ``attempt``-th request at a node, so
    that asking again at a node can give something new (identical requests are memoised)."""
    params = getattr(generator, "params", None)
    if attempt == 0 or params is None or not dataclasses.is_dataclass(generator):
        return generator
    seed = (getattr(params, "seed", None) or 0) + attempt * _SEED_STRIDE
    return dataclasses.replace(generator, params=dataclasses.replace(params, seed=seed))


async def long_search(task: Task[S], puzzle: str, generator: Generator, client: LMClient | None, *,
                      depth: int | None = None, evaluator: Evaluator | None = None, trace: Trace | None = None,
                      usage: Usage | None = None, **options: Any) -> SearchResult[S]:
    """Long's controller, ``options`` those of ``LongOptions`` (``max_children``, ``max_rounds``).
    With ``evaluator`` (e.g. the exact oracle, for an upper bound), the proposals of a node are
    tried in non-increasing score order and those scoring below its ``prune_below`` are dropped;
    without one (Long), in the generator's order."""
    long = Long(LongOptions(**options))
    run = open_run(task, puzzle, generator, evaluator, client, trace, usage)
    return await run.conduct(long, SearchSettings("long", depth=depth))


@dataclass(frozen=True)
class Long:
    """Long's controller on a run's gated step; the run's evaluator (None: Long's own, no
    ranking) orders and prunes the proposals of a node before its rounds try them."""

    options: LongOptions = LongOptions()

    async def __call__(self, run: Run[S], settings: SearchSettings) -> SearchResult[S]:
        max_depth, options, step = begin(run, settings, self.options), self.options, run.step
        evaluator, generator, max_children = step.evaluator, step.generator, options.max_children
        root = run.root()
        mem = Memory(root, root)
        mem.visited.record(root)
        run.reach(root)

        async def next_proposal(node: Node[S]) -> Thought | None:
            queue = mem.pending.setdefault(node.id, [])
            if not queue:
                attempt = mem.requests.get(node.id, 0)
                mem.requests[node.id] = attempt + 1
                thoughts = await step.propose(node, request=attempt + 1, generator=_reseeded(generator, attempt))
                offered = mem.offered.setdefault(node.id, set())
                fresh = []
                for th in thoughts:
                    if th.text not in offered:
                        offered.add(th.text)
                        fresh.append(th)
                queue.extend(await _ranked(node, fresh) if evaluator is not None else fresh)
            return queue.pop(0) if queue else None

        async def _ranked(node: Node[S], thoughts: list[Thought]) -> list[Thought]:
            assert evaluator is not None
            probes = [p for p in (step.probe(node, th) for th in thoughts) if p is not None]
            await step.score_probes(probes)
            keep = []
            for k, probe in enumerate(probes):
                score = probe.score if probe.score is not None else 0.0
                if score >= evaluator.prune_below:
                    keep.append((score, k, probe))
                else:
                    run.cut_thought(node, probe.thought, "pruned", probe.score)
            keep.sort(key=lambda x: (-x[0], x[1]))
            return [Thought(probe.thought, probe.prior) for _s, _k, probe in keep]

        for rnd in range(1, options.max_rounds + 1):
            step.charge()
            node = mem.current
            run.new_round(rnd, node)
            thought = await next_proposal(node)
            mem.tried[node.id] = mem.tried.get(node.id, 0) + 1
            if thought is None:
                run.cut(node, "no new proposal")
            else:
                hit = _step(run, mem, node, thought, max_depth)
                if hit is not None:
                    return run.result(hit[0], hit[1], None)
            while mem.current is not mem.root and mem.exhausted(mem.current, max_children):
                child = mem.current
                parent = child.parent
                assert parent is not None
                run.backtrack(child, parent, why=f"{mem.tried[child.id]} children tried")
                mem.current = parent
        return run.result(None, None, "rounds")


def _step(run: Run[S], mem: Memory[S], node: Node[S], thought: Thought,
          max_depth: int) -> tuple[Node[S], str] | None:
    """Gate one proposal; a valid one becomes the current node. Returns a verified solution."""
    child = run.step.gate_one(node, thought)
    if child is None:
        return None
    if child.solved:
        answer = run.accept(child)
        return (child, answer) if answer is not None else None
    if run.step.duplicate(child, mem.visited, remember=False):
        return None
    if child.depth >= max_depth:
        run.cut(child, "depth")
        return None
    mem.visited.record(child)
    run.keep(child, score=None)
    run.reach(child)  # the deepest state kept, reported when no answer is found
    mem.current = child
    return None
