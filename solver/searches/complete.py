"""Complete depth-first search: the default where a task's tree is finite.

The task's exact enumeration (``legal_thoughts``) and the gate make the tree; the evaluator only
*orders* the children of a node (best first) and never drops one: a child scored below the
evaluator's ``prune_below`` is deferred (tried after its better-scored siblings), not cut.
Backtracking therefore visits every state the tree holds before it gives up, so a search that
ends without an answer and without a budget or depth cut has *proved* that none exists
(``SearchResult.exhausted``). A state explored once is not explored again (transposition table).
One exception, asked for by ``prune_proven`` (``--prune-proven``; Countdown's default): with an
exact evaluator (the oracle), a child it scores below the threshold is proved to have no answer
and is cut; the proof of "no answer" then rests on that evaluator, and the trace says so
(``proven_cuts``). With any other evaluator the option cuts nothing.

Results do not depend on float noise: scores are quantised to ``decimals`` places and ties go
to the generator's order (for ``enumerate``: the checker's enumeration order).
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
__all__ = ["Complete", "CompleteOptions", "ProvenCuts"]


@dataclass(frozen=True)
class CompleteOptions(Options):
    """``tot-complete``'s own options (``solver.search_options``)."""

    prune_proven: bool = option(False, "cut the states an exact evaluator (the oracle) proves have no answer instead "
                                       "of deferring them (the proof is then the evaluator's); with another "
                                       "evaluator nothing is cut")


@dataclass(frozen=True)
class ProvenCuts:
    """``tot-complete``'s own part of a result where an exact evaluator's proofs cut states: how
    many (the ``end`` event's ``proven_cuts``)."""

    count: int

    def summary(self) -> dict[str, object]:
        return {"proven_cuts": self.count}


@dataclass
class Complete(AskTell[S]):
    """The complete DFS as a state that asks (``decimals`` is for tests of float noise):
    the path is a stack of frames."""

    options: CompleteOptions = CompleteOptions()
    decimals: int = DECIMALS
    threshold: float = field(init=False)
    proven: bool = field(init=False)  # whether an exact evaluator's proofs cut states (``prune_proven``)
    cut_proven: int = field(init=False)  # states so cut
    max_depth: int = field(init=False)
    explored: SeenStates[S] = field(init=False)  # the states fully explored, each at its smallest depth
    stack: list[Frame[S]] = field(init=False)
    opening: Node[S] | None = field(init=False)  # the node being expanded
    fresh: list[Node[S]] = field(init=False)  # its children not explored before
    scoring: bool = field(init=False)  # whether they are being scored
    hit: tuple[Node[S], str] | None = field(init=False)

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        evaluator = run.step.require_evaluator()
        # Only an exact evaluator's low score is a proof; with any other, nothing is cut.
        self.proven = self.options.prune_proven and getattr(evaluator, "exact", False) is True
        self.threshold, self.cut_proven = evaluator.prune_below, 0
        self.max_depth = begin(run, settings, self.options, defer_below=self.threshold, decimals=self.decimals,
                               **({"proven_cuts": True} if self.proven else {}))
        self.explored, self.stack, self.fresh, self.scoring, self.hit = SeenStates(), [], [], False, None
        self.opening = run.root()
        run.reach(self.opening)

    def ask(self) -> list[Ask[S]]:
        if self.scoring:
            # Children at the depth limit are never expanded, so their order does not matter.
            return [Score([c for c in self.fresh if c.depth < self.max_depth])]
        return [Expand(self.opening)] if self.opening is not None else []

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        if not self.scoring:
            children = outcomes[0]
            self.hit = run.first_answer(children)
            if self.hit is not None:
                self.opening = None
                return
            self.fresh = []
            for child in children:
                if child.solved:
                    continue
                if self.explored.known(child):
                    run.cut(child, "duplicate")  # explored before, with no answer
                else:
                    self.fresh.append(child)
            # A single child needs no ordering: it costs no model call.
            self.scoring = sum(c.depth < self.max_depth for c in self.fresh) > 1
            if self.scoring:
                return
        assert self.opening is not None
        order = ranked(self.fresh, self.decimals)
        good = [c for c in order if quantise(c.score, self.decimals) >= self.threshold]
        deferred = [c for c in order if c not in good]  # below the threshold, or NaN: last, never dropped
        if self.proven:  # an exact evaluator proved these have no answer below them
            for child in [c for c in deferred if c.score is not None]:
                deferred.remove(child)
                run.cut(child, "pruned", score=child.score)
                self.cut_proven += 1
        self.stack.append(Frame(self.opening, good + deferred, deferred))
        self.fresh, self.scoring = [], False
        self._next(run)

    def _next(self, run: Run[S]) -> None:
        """Back up the path to the next child worth a visit, which is expanded next (none: over)."""
        self.opening = None
        while (got := next_child(self.stack, run, self.explored)) is not None:
            frame, child = got
            if self.explored.known(child):
                run.cut(child, "duplicate")
            elif child.depth >= self.max_depth:
                run.cut_at_depth(child)  # the step remembers whether this loses anything
            else:
                run.keep(child, deferred=child in frame.deferred or None)
                frame.current = self.opening = child
                run.reach(child)
                return

    def finish(self, run: Run[S], stopped: str | None) -> SearchResult[S]:
        extra = ProvenCuts(self.cut_proven) if self.proven else None
        if self.hit is not None:
            return run.result(*self.hit, None, extra=extra)
        # Ran out of states: a proof where the step says so (and, with proven cuts, the evaluator's).
        return run.result(None, None, stopped, searched_all=stopped is None, extra=extra)
