"""Best-first search: one global frontier ordered by the evaluator's score.

Every state the gate lets in is scored once and goes onto one frontier (a heap); the best-scored
state anywhere in the tree is expanded next. Ties go to the deeper state (it is nearer an
answer), then to the state that joined the frontier first, so the order never depends on float
noise (scores are quantised as everywhere else, ``solver.search.quantise``) or on timing.

Nothing is pruned: a state leaves the frontier only to be expanded, or as a duplicate of a state
already held at the same or a smaller depth. So on a finite tree the search is complete: with an
exhaustive generator (``enumerate*``) and no depth cut, a run that ends without an answer has
visited every state and proves that none exists (``SearchResult.exhausted``), as ``tot-complete``
does; it differs from ``tot-complete`` only in its order (global, not depth-first).
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any

from solver.budget import BudgetExhausted
from solver.expansion import Expansion, SearchResult
from solver.node import Node
from solver.search_common import DECIMALS, Transpositions, quantise

__all__ = ["search_best_first"]


async def search_best_first(run: Expansion, *, depth: int | None = None, decimals: int = DECIMALS) -> SearchResult:
    """Expand the best-scored state of the whole frontier next (ties: deeper, then earlier)."""
    task, trace, evaluator = run.task, run.trace, run.require_evaluator()
    max_depth = depth or task.max_depth
    run.start("best-first", depth=max_depth, decimals=decimals, generator=run.generator.name,
              evaluator=evaluator.name)
    order = itertools.count()
    held = Transpositions()
    root = run.root()
    held.fresh(root)
    frontier: list[tuple[float, int, int, Node[Any]]] = [(0.0, 0, next(order), root)]
    try:
        while frontier:
            _key, _depth, _n, node = heapq.heappop(frontier)
            if node is not root:
                trace.emit("keep", node=node.id, score=node.score)
            run.reach(node)
            children = await run.expand(node)
            hit = run.first_answer(children)
            if hit is not None:
                return run.result(hit[0], hit[1], None)
            fresh = held.open_children(run, children, max_depth)
            await run.score(fresh)
            for child in fresh:
                heapq.heappush(frontier, (-quantise(child.score, decimals), -child.depth, next(order), child))
    except BudgetExhausted as exc:
        return run.result(None, None, exc.which)
    return run.result(None, None, None, searched_all=True)  # a proof where the step says so
