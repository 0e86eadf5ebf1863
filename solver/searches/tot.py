"""Breadth-first search with a beam and depth-first search with pruning and backtracking.

Both only see a Task, a generator and an evaluator. Every proposed thought goes through the
task's exact checker before it can be scored or kept, and an answer leaves only after it was
re-verified from the original puzzle text alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, TypeVar

from solver.budget import Usage
from solver.evaluators import Evaluator
from solver.expansion import Run, SearchResult, open_run
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.lm.session import gather_all
from solver.node import Node, SeenStates
from solver.search_options import Options, option
from solver.searches.common import DECIMALS, begin, quantise, ranked, visit_from_root
from solver.settings import SearchSettings
from solver.task import Task
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["DECIMALS", "Bfs", "BfsOptions", "Dfs", "DfsOptions", "SearchResult", "bfs", "dfs", "quantise", "ranked"]


@dataclass(frozen=True)
class BfsOptions(Options):
    """``tot-bfs``'s own options (``solver.search_options``)."""

    breadth: int = option(5, "beam width: the states kept per level", short="-b", at_least=1)  # the paper's b
    early_stop: bool = option(True, "stop at the first level that holds a verified answer")


@dataclass(frozen=True)
class DfsOptions(Options):
    """``tot-dfs``'s own options."""

    prune_below: float | None = option(None, "pruning threshold: children scored below it are cut (default: "
                                             "the evaluator's own)")
    dfs_children: int | None = option(None, "children tried per node, best first (default: all)", at_least=1)


async def bfs(task: Task[S], puzzle: str, generator: Generator, evaluator: Evaluator,
              client: LMClient | None, *, depth: int | None = None, trace: Trace | None = None,
              usage: Usage | None = None, gate: bool = True, **options: Any) -> SearchResult[S]:
    """BFS for ``depth`` levels (default: the task's maximum), ``options`` those of ``BfsOptions``
    (``breadth``, ``early_stop``). ``gate=False`` lets rejected thoughts in through the task's
    ``apply_unchecked`` (ablation)."""
    run = open_run(task, puzzle, generator, evaluator, client, trace, usage, gate)
    return await run.conduct(Bfs(BfsOptions(**options)), SearchSettings("tot-bfs", depth=depth))


@dataclass(frozen=True)
class Bfs:
    """The paper's BFS on a run's gated step: level by level, the best ``breadth`` states of each
    level (by quantised score, ties in generation order) go on to the next."""

    options: BfsOptions = BfsOptions()

    async def __call__(self, run: Run[S], settings: SearchSettings) -> SearchResult[S]:
        breadth, step = self.options.breadth, run.step
        max_depth = begin(run, settings, self.options)
        frontier = [run.root()]
        run.reach(frontier[0])
        for _level in range(max_depth):
            proposals = await gather_all(*(step.generate(nd) for nd in frontier))
            groups = [step.gate_all(nd, ths) for nd, ths in zip(frontier, proposals, strict=True)]
            candidates: list[Node[S]] = []
            seen: SeenStates[S] = SeenStates()  # this level's states
            for group in groups:
                candidates.extend(child for child in group if not step.duplicate(child, seen))
            solved = [c for c in candidates if c.solved]
            if len(solved) > 1 and run.found is None:
                # Several verified solutions at once (e.g. passages that all pass the gate): let
                # the evaluator choose among them, as the paper's vote does at the last step.
                await step.score(solved)
                solved = ranked(solved)
            if run.found is None:
                run.found = run.first_answer(solved)  # kept if a budget stops the search later
            if run.found is not None and self.options.early_stop:
                break
            open_nodes = [c for c in candidates if not c.solved]
            if not open_nodes:
                break
            await step.score(open_nodes)
            # Quantised scores, stable order: ties keep generation order, and the trace says a
            # tie decided it.
            order = ranked(open_nodes)
            frontier = order[:breadth]
            for nd in frontier[:1]:
                run.reach(nd)
            cutoff = quantise(frontier[-1].score) if frontier else None
            for nd in frontier:
                run.keep(nd)
            for nd in order[breadth:]:
                run.cut(nd, "beam", score=nd.score, tie=quantise(nd.score) == cutoff)
        return run.stop(None)  # the answer found, if any


async def dfs(task: Task[S], puzzle: str, generator: Generator, evaluator: Evaluator,
              client: LMClient | None, *, depth: int | None = None, trace: Trace | None = None,
              usage: Usage | None = None, gate: bool = True, **options: Any) -> SearchResult[S]:
    """DFS for ``depth`` levels, ``options`` those of ``DfsOptions`` (``prune_below``,
    ``dfs_children``)."""
    run = open_run(task, puzzle, generator, evaluator, client, trace, usage, gate)
    return await run.conduct(Dfs(DfsOptions(**options)), SearchSettings("tot-dfs", depth=depth))


@dataclass(frozen=True)
class Dfs:
    """The paper's DFS on a run's gated step: children in non-increasing score order; a child
    scoring below ``prune_below`` is pruned; an exhausted subtree backtracks to its parent, whose
    state is still held as it was. ``dfs_children`` caps how many children of one node are tried
    (Long's C)."""

    options: DfsOptions = DfsOptions()

    async def __call__(self, run: Run[S], settings: SearchSettings) -> SearchResult[S]:
        step, evaluator = run.step, run.step.require_evaluator()
        given, max_children = self.options.prune_below, self.options.dfs_children
        threshold = evaluator.prune_below if given is None else given
        max_depth = begin(run, settings, self.options, prune_below=threshold)

        async def visit(node: Node[S]) -> tuple[Node[S], str] | None:
            run.reach(node)
            children = await step.expand(node)
            solved = [c for c in children if c.solved]
            if len(solved) > 1:
                # Several solutions at once (crosswords: every word that completes the grid): the
                # evaluator chooses among them, as BFS does, instead of the generator's first.
                await step.score(solved)
                solved = ranked(solved)
            hit = run.first_answer(solved)
            if hit is not None:
                return hit
            open_nodes = [c for c in children if not c.solved]
            await step.score(open_nodes)
            tried = 0
            for child in ranked(open_nodes):
                if quantise(child.score) < threshold:
                    run.cut(child, "pruned", score=child.score)
                    continue
                if child.depth >= max_depth or (max_children is not None and tried >= max_children):
                    run.cut(child, "depth" if child.depth >= max_depth else "children")
                    continue
                tried += 1
                run.keep(child)
                hit = await visit(child)
                if hit is not None:
                    return hit
                run.backtrack(child, node)
            return None

        return await visit_from_root(run, visit, searched_all=False)  # the paper's DFS claims no proof
