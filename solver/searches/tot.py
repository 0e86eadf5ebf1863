"""Breadth-first search with a beam and depth-first search with pruning and backtracking.

Both only see a Task, a generator and an evaluator. Every proposed thought goes through the
task's exact checker before it can be scored or kept, and an answer leaves only after it was
re-verified from the original puzzle text alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, TypeVar

from solver.expansion import Run, SearchResult
from solver.node import Node, SeenStates
from solver.search_options import Options, option
from solver.searches.common import DECIMALS, AskTell, Frame, begin, next_child, quantise, ranked
from solver.settings import SearchSettings
from solver.step import Ask, Expand, Score

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["DECIMALS", "Bfs", "BfsOptions", "Dfs", "DfsOptions", "SearchResult", "quantise", "ranked"]


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


@dataclass
class Bfs(AskTell[S]):
    """The paper's BFS as a state that asks: a level's expansions together, then the level's
    scoring; the best ``breadth`` states of each level (by quantised score, ties in generation
    order) go on to the next."""

    options: BfsOptions = BfsOptions()
    max_depth: int = field(init=False)
    level: int = field(init=False)  # levels expanded
    frontier: list[Node[S]] = field(init=False)
    candidates: list[Node[S]] = field(init=False)  # the level's new states
    scoring: list[Node[S]] = field(init=False)  # those being scored: solved ones to choose among, or open ones
    choosing: bool = field(init=False)  # whether ``scoring`` holds solved states
    done: bool = field(init=False)

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        self.max_depth = begin(run, settings, self.options)
        self.level, self.candidates, self.scoring, self.choosing = 0, [], [], False
        self.frontier = [run.root()]
        run.reach(self.frontier[0])
        self.done = self.max_depth <= 0

    def ask(self) -> list[Ask[S]]:
        if self.done:
            return []
        return [Score(self.scoring)] if self.scoring else [Expand(nd, level=True) for nd in self.frontier]

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        if self.choosing:  # several verified solutions at once, scored: the best first
            self._chosen(run, ranked(self.scoring))
        elif self.scoring:
            self._next_level(run)
        else:
            seen: SeenStates[S] = SeenStates()  # this level's states
            self.candidates = [c for group in outcomes for c in group if not run.step.duplicate(c, seen)]
            solved = [c for c in self.candidates if c.solved]
            if len(solved) > 1 and run.found is None:
                # Several verified solutions at once (e.g. passages that all pass the gate): let
                # the evaluator choose among them, as the paper's vote does at the last step.
                self.scoring, self.choosing = solved, True
            else:
                self._chosen(run, solved)

    def _chosen(self, run: Run[S], solved: list[Node[S]]) -> None:
        self.scoring, self.choosing = [], False
        if run.found is None:
            run.found = run.first_answer(solved)  # kept if a budget stops the search later
        self.scoring = [c for c in self.candidates if not c.solved]
        self.done = not self.scoring or (run.found is not None and self.options.early_stop)

    def _next_level(self, run: Run[S]) -> None:
        # Quantised scores, stable order: ties keep generation order, and the trace says a tie decided it.
        order, breadth = ranked(self.scoring), self.options.breadth
        self.frontier, self.scoring = order[:breadth], []
        for nd in self.frontier[:1]:
            run.reach(nd)
        cutoff = quantise(self.frontier[-1].score) if self.frontier else None
        for nd in self.frontier:
            run.keep(nd)
        for nd in order[breadth:]:
            run.cut(nd, "beam", score=nd.score, tie=quantise(nd.score) == cutoff)
        self.level += 1
        self.done = self.level >= self.max_depth


@dataclass
class Dfs(AskTell[S]):
    """The paper's DFS as a state that asks: children in non-increasing score order; a child
    scoring below ``prune_below`` is pruned; an exhausted subtree backtracks to its parent, whose
    state is still held as it was. ``dfs_children`` caps how many children of one node are tried
    (Long's C)."""

    options: DfsOptions = DfsOptions()
    threshold: float = field(init=False)
    max_depth: int = field(init=False)
    stack: list[Frame[S]] = field(init=False)
    opening: Node[S] | None = field(init=False)  # the node being expanded
    children: list[Node[S]] = field(init=False)  # its children, while they are scored
    scoring: list[Node[S]] = field(init=False)  # those being scored: solved ones to choose among, or open ones

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        given = self.options.prune_below
        self.threshold = run.step.require_evaluator().prune_below if given is None else given
        self.max_depth = begin(run, settings, self.options, prune_below=self.threshold)
        self.stack, self.children, self.scoring = [], [], []
        self.opening = run.root()
        run.reach(self.opening)

    def ask(self) -> list[Ask[S]]:
        if self.opening is None:
            return []
        return [Score(self.scoring)] if self.scoring else [Expand(self.opening)]

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        if not self.scoring:
            self.children = outcomes[0]
            solved = [c for c in self.children if c.solved]
            if len(solved) > 1:
                # Several solutions at once (crosswords: every word that completes the grid): the
                # evaluator chooses among them, as BFS does, instead of the generator's first.
                self.scoring = solved
                return
            self._chosen(run, solved)
        elif self.scoring[0].solved:
            self._chosen(run, ranked(self.scoring))
        else:
            self._push(run)

    def _chosen(self, run: Run[S], solved: list[Node[S]]) -> None:
        run.found = run.first_answer(solved)
        self.scoring = [c for c in self.children if not c.solved] if run.found is None else []
        if run.found is not None:
            self.opening = None
        elif not self.scoring:
            self._push(run)

    def _push(self, run: Run[S]) -> None:
        assert self.opening is not None
        self.stack.append(Frame(self.opening, ranked(self.scoring)))
        self.children, self.scoring = [], []
        self.opening = None
        while (got := next_child(self.stack, run)) is not None:
            frame, child = got
            cap = self.options.dfs_children
            if quantise(child.score) < self.threshold:
                run.cut(child, "pruned", score=child.score)
            elif child.depth >= self.max_depth or (cap is not None and frame.tried >= cap):
                run.cut(child, "depth" if child.depth >= self.max_depth else "children")
            else:
                frame.tried += 1
                run.keep(child)
                frame.current = self.opening = child
                run.reach(child)
                return
