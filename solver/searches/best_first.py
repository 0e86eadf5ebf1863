"""Best-first search: one global frontier ordered by the evaluator's score.

Every state the gate lets in is scored once and goes onto one frontier (a heap); the best-scored
state anywhere in the tree is expanded next. Ties go to the deeper state (it is nearer an
answer), then to the state that joined the frontier first, so the order never depends on float
noise (scores are quantised as everywhere else, ``solver.searches.tot.quantise``) or on timing.

Nothing is pruned: a state leaves the frontier only to be expanded, or as a duplicate of a state
already held at the same or a smaller depth. So on a finite tree the search is complete: with an
exhaustive generator (``enumerate*``) and no depth cut, a run that ends without an answer has
visited every state and proves that none exists (``SearchResult.exhausted``), as ``tot-complete``
does; it differs from ``tot-complete`` only in its order (global, not depth-first).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Hashable, TypeVar

from solver.expansion import Run, SearchResult
from solver.node import Node
from solver.search_options import NoOptions
from solver.searches.common import DECIMALS, Steppable, Transpositions, begin, quantise
from solver.settings import SearchSettings

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["BestFirst"]


@dataclass
class BestFirst(Steppable[S]):
    """Best-first search as one object: ``step`` expands the best state of the frontier; the run
    can be saved between two steps and resumed (``solver.searches.common.Steppable``)."""

    options: NoOptions = NoOptions()

    def begin(self, run: Run[S], settings: SearchSettings) -> None:
        super().begin(run, settings)
        run.step.require_evaluator()
        self.max_depth = begin(run, settings, self.options, decimals=DECIMALS)
        self.joined = 0  # frontier entries so far: the last tie-break, in the order states joined
        self.held: Transpositions[S] = Transpositions()
        self.root = run.root()
        self.held.fresh(self.root)
        self.frontier: list[tuple[float, int, int, Node[S]]] = [(0.0, 0, self._joined(), self.root)]
        self.hit: tuple[Node[S], str] | None = None

    def _joined(self) -> int:
        self.joined += 1
        return self.joined - 1

    async def advance(self) -> bool:
        """Expand the best state of the frontier; True when an answer was found, the frontier is
        empty or a budget ran out."""
        if self.done or not self.frontier:
            self.done = True
            return True
        run = self.run
        _key, _depth, _n, node = heapq.heappop(self.frontier)
        if node is not self.root:
            run.keep(node)
        run.reach(node)
        children = await run.step.expand(node)
        self.hit = run.first_answer(children)
        if self.hit is not None:
            self.done = True
            return True
        fresh = self.held.open_children(run, children, self.max_depth)
        await run.step.score(fresh)
        for child in fresh:
            heapq.heappush(self.frontier, (-quantise(child.score), -child.depth, self._joined(), child))
        return False

    def finish(self) -> SearchResult[S]:
        if self.hit is not None:
            return self.run.result(self.hit[0], self.hit[1], None)
        if self.stopped is not None:
            return self.run.result(None, None, self.stopped)
        return self.run.result(None, None, None, searched_all=True)  # a proof where the step says so
