"""Long (2023)'s memory and rule-based controller, as a task-agnostic search.

One round checks one proposal for the current node. The exact gate keeps invalid proposals out
of the tree, so "backtrack to the parent of an invalid board" means staying at the node that
proposed it (as Long's own code does: it rolls back one step from the invalid board). After
``max_children`` (Long's C) proposals at a node without a solution, the controller returns to
that node's parent, whose state the memory still holds unchanged; the root has no parent, so the
controller keeps asking there. It stops at a verified solution or after ``max_rounds`` (K).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Hashable, TypeVar

from solver.budget import Usage
from solver.evaluators import Evaluator
from solver.expansion import Run, SearchResult, open_run
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.node import Node, SeenStates
from solver.search_options import Options, option
from solver.searches.common import AskTell, begin
from solver.settings import SearchSettings
from solver.step import Ask, Propose, Score
from solver.task import Task, Thought
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["Long", "LongOptions", "Memory", "long_search"]


@dataclass(frozen=True)
class LongOptions(Options):
    """``long``'s own options (``solver.search_options``)."""

    max_children: int = option(5, "children per node (C)", at_least=1)  # Long's C
    max_rounds: int = option(100, "rounds (K)", at_least=1)  # Long's K


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


async def long_search(task: Task[S], puzzle: str, generator: Generator, client: LMClient | None, *,
                      depth: int | None = None, evaluator: Evaluator | None = None, trace: Trace | None = None,
                      usage: Usage | None = None, **options: Any) -> SearchResult[S]:
    """Long's controller, ``options`` those of ``LongOptions`` (``max_children``, ``max_rounds``).
    With ``evaluator`` (e.g. the exact oracle, for an upper bound), the proposals of a node are
    tried in non-increasing score order and those scoring below its ``prune_below`` are dropped;
    without one (Long), in the generator's order."""
    long = Long[S](LongOptions(**options))
    run = open_run(task, puzzle, generator, evaluator, client, trace, usage)
    return await run.conduct(long, SearchSettings("long", depth=depth))


@dataclass
class Long(AskTell[S]):
    """Long's controller as a state that asks: a round asks for proposals where the current node
    has none waiting, and for the run's evaluator's scores of them (None: Long's own, no ranking),
    which order and prune them before the rounds try them."""

    options: LongOptions = LongOptions()
    max_depth: int = field(init=False)
    mem: Memory[S] = field(init=False)
    round: int = field(init=False)
    asking: bool = field(init=False)  # whether the current node's proposals are asked for
    probes: list[Node[S]] = field(init=False)  # proposals being scored before the rounds try them
    hit: tuple[Node[S], str] | None = field(init=False)

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        self.max_depth = begin(run, settings, self.options)
        root = run.root()
        self.mem = Memory(root, root)
        self.mem.visited.record(root)
        run.reach(root)
        self.round, self.asking, self.probes, self.hit = 0, False, [], None
        self._rounds(run)

    def ask(self) -> list[Ask[S]]:
        if self.probes:
            return [Score(self.probes, probes=True)]
        if not self.asking:
            return []
        node = self.mem.current
        return [Propose(node, self.mem.requests[node.id])]

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        node, mem = self.mem.current, self.mem
        if self.probes:
            keep = []
            for k, probe in enumerate(self.probes):
                score = probe.score if probe.score is not None else 0.0
                if score >= run.evaluator.prune_below:  # type: ignore[union-attr]
                    keep.append((score, k, probe))
                else:
                    run.cut_thought(node, probe.thought, "pruned", probe.score)
            keep.sort(key=lambda x: (-x[0], x[1]))
            mem.pending[node.id].extend(Thought(probe.thought, probe.prior) for _s, _k, probe in keep)
            self.probes = []
        else:
            self.asking = False
            offered = mem.offered.setdefault(node.id, set())
            fresh = []
            for th in outcomes[0]:
                if th.text not in offered:
                    offered.add(th.text)
                    fresh.append(th)
            if run.evaluator is None:
                mem.pending[node.id].extend(fresh)
            else:
                self.probes = [p for p in (run.step.probe(node, th) for th in fresh) if p is not None]
                if self.probes:
                    return
        self._try(run)
        self._rounds(run)

    def _rounds(self, run: Run[S]) -> None:
        """Rounds until one needs the model (its node has no proposal waiting) or the search is over."""
        mem = self.mem
        while self.hit is None and self.round < self.options.max_rounds:
            run.step.charge()
            self.round += 1
            run.new_round(self.round, mem.current)
            if not mem.pending.setdefault(mem.current.id, []):
                mem.requests[mem.current.id] = mem.requests.get(mem.current.id, 0) + 1
                self.asking = True
                return
            self._try(run)

    def _try(self, run: Run[S]) -> None:
        """The round tries the current node's next proposal, then backtracks where it must."""
        mem, node = self.mem, self.mem.current
        queue = mem.pending[node.id]
        thought = queue.pop(0) if queue else None
        mem.tried[node.id] = mem.tried.get(node.id, 0) + 1
        if thought is None:
            run.cut(node, "no new proposal")
        else:
            self.hit = _step(run, mem, node, thought, self.max_depth)
            if self.hit is not None:
                return
        while mem.current is not mem.root and mem.exhausted(mem.current, self.options.max_children):
            child = mem.current
            parent = child.parent
            assert parent is not None
            run.backtrack(child, parent, why=f"{mem.tried[child.id]} children tried")
            mem.current = parent

    def finish(self, run: Run[S], stopped: str | None) -> SearchResult[S]:
        if self.hit is not None:
            return run.result(self.hit[0], self.hit[1], None)
        return run.stop(stopped) if stopped is not None else run.result(None, None, "rounds")


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
