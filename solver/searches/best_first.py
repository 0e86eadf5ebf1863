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
from dataclasses import dataclass, field
from typing import Any, Hashable, TypeVar

from solver.expansion import Run, SearchResult
from solver.node import Node
from solver.search_options import NoOptions
from solver.searches.common import DECIMALS, AskTell, Transpositions, begin, quantise
from solver.settings import SearchSettings
from solver.step import Ask, Expand, Score

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["BestFirst"]


@dataclass
class BestFirst(AskTell[S]):
    """Best-first search: asks to expand the best state of the frontier, then to score its new
    children (``solver.searches.common.AskTell``)."""

    options: NoOptions = NoOptions()
    max_depth: int = field(init=False)
    joined: int = field(init=False)  # frontier entries so far: the last tie-break, in the order states joined
    held: Transpositions[S] = field(init=False)
    frontier: list[tuple[float, int, int, Node[S]]] = field(init=False)
    opening: Node[S] | None = field(init=False)  # the state being expanded
    scoring: list[Node[S]] = field(init=False)  # its new children, to be scored
    hit: tuple[Node[S], str] | None = field(init=False)

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        run.step.require_evaluator()
        self.max_depth = begin(run, settings, self.options, decimals=DECIMALS)
        self.joined, self.held, self.scoring, self.hit = 1, Transpositions(), [], None
        root = run.root()
        self.held.fresh(root)
        self.frontier = [(0.0, 0, 0, root)]
        self._pop(run)

    def _pop(self, run: Run[S]) -> None:
        """The best state of the frontier is expanded next (none left: the search is over)."""
        self.opening = None
        if self.frontier:
            _key, _depth, _n, node = heapq.heappop(self.frontier)
            if node.id != 0:
                run.keep(node)
            run.reach(node)
            self.opening = node

    def ask(self) -> list[Ask[S]]:
        if self.scoring:
            return [Score(self.scoring)]
        return [Expand(self.opening)] if self.opening is not None and self.hit is None else []

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        if not self.scoring:
            self.hit = run.first_answer(outcomes[0])
            if self.hit is not None:
                return
            assert self.opening is not None
            self.scoring = self.held.open_children(run, outcomes[0], self.max_depth)
            if self.scoring:
                return
        for child in self.scoring:
            heapq.heappush(self.frontier, (-quantise(child.score), -child.depth, self.joined, child))
            self.joined += 1
        self.scoring = []
        self._pop(run)

    def finish(self, run: Run[S], stopped: str | None) -> SearchResult[S]:
        if self.hit is not None:
            return run.result(self.hit[0], self.hit[1], None)
        return run.result(None, None, stopped, searched_all=stopped is None)  # a proof where the step says so
