"""Complete depth-first search: the default where a task's tree is finite.

The task's exact enumeration (``legal_thoughts``) and the gate make the tree; the evaluator only
*orders* the children of a node (best first) and never drops one: a child scored below the
evaluator's ``prune_below`` is deferred (tried after its better-scored siblings), not cut.
Backtracking therefore visits every state the tree holds before it gives up, so a search that
ends without an answer and without a budget or depth cut has *proved* that none exists
(``SearchResult.exhausted``). A state explored once is not explored again (transposition table).

Results do not depend on float noise: scores are quantised to ``decimals`` places and ties go
to the generator's order (for ``enumerate``: the checker's enumeration order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, TypeVar

from solver.budget import Usage
from solver.evaluators import Evaluator
from solver.expansion import Run, SearchResult, open_run
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.node import Node, SeenStates
from solver.search_options import NoOptions
from solver.searches.common import DECIMALS, begin, quantise, ranked, visit_from_root
from solver.settings import SearchSettings
from solver.task import Task
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["Complete", "complete_dfs"]


async def complete_dfs(task: Task[S], puzzle: str, generator: Generator, evaluator: Evaluator,
                       client: LMClient | None, *, depth: int | None = None, decimals: int = DECIMALS,
                       trace: Trace | None = None, usage: Usage | None = None,
                       gate: bool = True) -> SearchResult[S]:
    """DFS over every gated child, best-scored first; nothing is pruned, low scores are deferred.
    With an exhaustive generator (``enumerate*``) an unanswered, uncut search is a proof that no
    answer exists (``exhausted``); with a sampling generator it only means the samples ran out."""
    run = open_run(task, puzzle, generator, evaluator, client, trace, usage, gate)
    return await run.conduct(Complete(decimals=decimals), SearchSettings("tot-complete", depth=depth))


@dataclass(frozen=True)
class Complete:
    """``complete_dfs``'s order on a run's gated step (it has no options of its own; ``decimals``
    is for tests of float noise)."""

    options: NoOptions = NoOptions()
    decimals: int = DECIMALS

    async def __call__(self, run: Run[S], settings: SearchSettings) -> SearchResult[S]:
        step, evaluator, decimals = run.step, run.step.require_evaluator(), self.decimals
        max_depth = begin(run, settings, self.options, defer_below=evaluator.prune_below, decimals=decimals)
        explored: SeenStates[S] = SeenStates()  # the states fully explored, each at its smallest depth

        async def visit(node: Node[S]) -> tuple[Node[S], str] | None:
            run.reach(node)
            children = await step.expand(node)
            hit = run.first_answer(children)
            if hit is not None:
                return hit
            open_nodes = [c for c in children if not c.solved]
            fresh = []
            for child in open_nodes:
                if explored.known(child):
                    run.cut(child, "duplicate")  # explored before, with no answer
                else:
                    fresh.append(child)
            # Children at the depth limit are never expanded, so their order does not matter, and a
            # single child needs no ordering: neither costs a model call.
            to_order = [c for c in fresh if c.depth < max_depth]
            if len(to_order) > 1:
                await step.score(to_order)
            order = ranked(fresh, decimals)
            good = [c for c in order if quantise(c.score, decimals) >= evaluator.prune_below]
            deferred = [c for c in order if c not in good]  # below the threshold, or NaN: last, never dropped
            for child in good + deferred:
                if explored.known(child):
                    run.cut(child, "duplicate")
                    continue
                if child.depth >= max_depth:
                    run.cut_at_depth(child)  # the step remembers whether this loses anything
                    continue
                run.keep(child, deferred=child in deferred or None)
                hit = await visit(child)
                if hit is not None:
                    return hit
                explored.record(child)
                run.backtrack(child, node)
            return None

        return await visit_from_root(run, visit, searched_all=True)  # a proof where the step says so
