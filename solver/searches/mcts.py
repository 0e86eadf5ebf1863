"""Monte Carlo tree search over the gated step: UCT selection on the evaluator's values.

One iteration: from the root, descend by UCT to a state not yet expanded: at each node the child
with the highest ``Q + c * sqrt(ln(1 + N(parent)) / (1 + N(child)))``, where Q is the mean reward
with the child's evaluator value counted as one visit's reward (so a child never visited ranks by
its value; ties go to generation order),
expand it through the generator and the exact gate, score its new children with the evaluator,
and back the reward up the path (each node on it: one more visit, the reward added to its sum).

The reward: 1 for a verified answer (the run then ends and returns it: the first verified
answer), 0 for a dead end (no child the gate lets in, or the depth limit), else the value
estimate of the new leaf: the best of its children's evaluator values, scaled to 0..1 by the
lowest and highest scores the run has seen (an evaluator's scale is its own: label sums,
probabilities, log-likelihoods). With ``rollout_depth`` > 0 a rollout replaces the estimate: up
to that many further steps, each through the gate to a child drawn at random (seeded), the
reward being 1 at a verified answer, 0 at a dead end, else the scaled value of the last state.
Rollout states are traced as expansions but are not added to the tree.

A node whose children are all dead ends is a dead end: never selected again. So on a finite tree
MCTS cannot loop on exhausted branches; when the root itself is dead, every state was tried, and
with an exhaustive generator and no depth cut that proves there is no answer.

Trace: each iteration ends with a ``round`` event (its number, the new leaf, the ``path`` of node
ids from the root and the ``reward``); a node is ``keep``-ed when first visited; at the end each
child the tree holds but never visited is ``cut`` with why ``unvisited`` (``tot audit`` counts a
solvable one as lost to the search's judgement).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Generic, Hashable, TypeVar

from solver.expansion import Run, SearchResult
from solver.node import Node
from solver.search_options import Options, option
from solver.searches.common import Steppable, Transpositions, begin, quantise
from solver.settings import SearchSettings

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["Mcts", "MctsExtra", "MctsOptions"]


@dataclass(frozen=True)
class MctsOptions(Options):
    """``mcts``'s own options (``solver.search_options``)."""

    iterations: int = option(200, "iterations, each one expansion", at_least=1)
    # UCT's c; rewards lie in 0..1: sqrt(2) is the textbook bound, 1 a common choice
    exploration: float = option(1.0, "UCT exploration constant c", at_least=0)
    rollout_depth: int = option(0, "random gated steps per rollout; 0 uses the evaluator's value", at_least=0)
    answers: int = option(1, "distinct answers to find before stopping; the first found is the run's answer, all "
                             "are listed", at_least=1)


@dataclass(frozen=True)
class MctsExtra:
    """MCTS's own part of its result (``SearchResult.extra``): node id -> visits when the run ended
    (visited nodes only; not in the ``end`` event: the trace's rounds give them); asked for
    several answers, every distinct accepted answer and whether it is verified, in the order found
    (the first is the result's ``answer``), and why fewer than asked were found, when that is so."""

    visits: dict[int, int]
    answers: list[tuple[str, bool]] | None = None
    answers_note: str | None = None

    def summary(self) -> dict[str, object]:
        """The ``end`` event's ``answers`` and ``answers_note``, when several answers were asked for."""
        out: dict[str, object] = {}
        if self.answers is not None:
            out["answers"] = [{"answer": a, "verified": v} for a, v in self.answers]
            if self.answers_note is not None:
                out["answers_note"] = self.answers_note
        return out


@dataclass(slots=True)
class _Stats(Generic[S]):
    """One tree node's counts: visits, the sum of rewards backed up through it, its children
    once expanded (None before), and whether it is a dead end."""

    visits: int = 0
    total: float = 0.0
    children: list[Node[S]] | None = None
    dead: bool = False


@dataclass(slots=True)
class _Scale:
    """The lowest and highest evaluator scores seen so far, to put values on the reward's 0..1."""

    low: float = math.inf
    high: float = -math.inf

    def add(self, score: float | None) -> None:
        v = quantise(score)
        if math.isfinite(v):
            self.low, self.high = min(self.low, v), max(self.high, v)

    def of(self, score: float | None) -> float:
        v = quantise(score)
        if not math.isfinite(v) or not self.high > self.low:
            return 0.5 if math.isfinite(v) else 0.0
        return (v - self.low) / (self.high - self.low)


@dataclass
class Mcts(Steppable[S]):
    """MCTS as one object: ``step`` runs one iteration; the run can be saved between two
    iterations and resumed (``solver.searches.common.Steppable``)."""

    options: MctsOptions = MctsOptions()

    def begin(self, run: Run[S], settings: SearchSettings) -> None:
        super().begin(run, settings)
        run.step.require_evaluator()
        self.max_depth = begin(run, settings, self.options)
        self.rng = random.Random(settings.seed)
        self.scale = _Scale()
        self.held: Transpositions[S] = Transpositions()
        self.stats: dict[int, _Stats[S]] = {}
        self.root = run.root()
        self.held.fresh(self.root)
        self.stats[self.root.id] = _Stats()
        run.reach(self.root)
        self.round = 0  # iterations begun
        self.found: tuple[Node[S], str] | None = None
        self.seen: dict[str, Node[S]] = {}  # answers > 1: every accepted answer so far -> its state

    def _uct(self, parent: Node[S], child: Node[S]) -> float:
        """The evaluator's value counts as one visit's reward (a prior), so a child never visited
        ranks by its value and children judged hopeless are not all tried before a good one is
        visited again."""
        s = self.stats[child.id]
        mean = (self.scale.of(child.score) + s.total) / (1 + s.visits)
        return mean + self.options.exploration * math.sqrt(math.log(1 + self.stats[parent.id].visits) / (1 + s.visits))

    def _select(self) -> list[Node[S]]:
        path = [self.root]
        while True:
            node = path[-1]
            children = self.stats[node.id].children
            if children is None:
                return path
            live = [c for c in children if not self.stats[c.id].dead]
            # The highest UCT; ties go to the first in generation order.
            best = max(range(len(live)), key=lambda i: (self._uct(node, live[i]), -i))
            path.append(live[best])
            if self.stats[live[best].id].visits == 0:
                return path

    def _mark_dead(self, path: list[Node[S]]) -> None:
        for node in reversed(path):
            s = self.stats[node.id]
            if s.children is not None and all(self.stats[c.id].dead for c in s.children):
                s.dead = True
            else:
                return

    async def _expand(self, node: Node[S]) -> tuple[list[Node[S]], tuple[Node[S], str] | None]:
        """The node's children (gated, new, within the depth limit, scored) or its answer. Asked
        for several answers: every new accepted answer among the children is kept (``seen``),
        the first of them returned, and the other children are still the node's children."""
        run = self.run
        children = await run.step.expand(node)
        if self.options.answers == 1:
            hit = run.first_answer(children)
            if hit is not None:
                return [], hit
        else:
            hit = None
            for child in children:
                if child.solved:
                    answer = run.accept(child)
                    if answer is not None and answer not in self.seen:
                        self.seen[answer] = child
                        hit = hit or (child, answer)
        fresh = self.held.open_children(run, children, self.max_depth)  # a solved child here: a dead end
        await run.step.score(fresh)
        for child in fresh:
            self.scale.add(child.score)
        return fresh, hit

    async def _rollout(self, children: list[Node[S]]) -> tuple[float, tuple[Node[S], str] | None]:
        """Up to ``rollout_depth`` random gated steps from a new leaf whose ``children`` are
        known (the first step picks one of them): (reward, the answer if one was reached)."""
        run, rng = self.run, self.rng
        last = children[rng.randrange(len(children))]
        for _ in range(self.options.rollout_depth - 1):
            if last.depth >= self.max_depth:
                return 0.0, None
            below = await run.step.expand(last)
            hit = run.first_answer(below)
            if hit is not None:
                return 1.0, hit
            open_nodes = [c for c in below if not c.solved]
            if not open_nodes:
                return 0.0, None
            last = open_nodes[rng.randrange(len(open_nodes))]
        if last.score is None:
            await run.step.score([last])
            self.scale.add(last.score)
        return self.scale.of(last.score), None

    def _backup(self, path: list[Node[S]], reward: float, round_no: int) -> None:
        for node in path:
            s = self.stats[node.id]
            s.visits += 1
            s.total += reward
        self.run.new_round(round_no, path[-1], path=[nd.id for nd in path], reward=reward)

    async def advance(self) -> bool:
        """One iteration; True when the search is over (an answer, or ``answers`` of them, the
        iterations run out, a dead root, or a budget)."""
        if self.done or self.round >= self.options.iterations or self.stats[self.root.id].dead:
            self.done = True
            return True
        self.round += 1
        await self._iteration()
        return self.done

    async def _iteration(self) -> None:
        run = self.run
        path = self._select()
        leaf = path[-1]
        if leaf is not self.root:
            run.keep(leaf)
        run.reach(leaf)
        children, self.found = await self._expand(leaf)
        for child in children:
            self.stats[child.id] = _Stats()
        self.stats[leaf.id].children = children
        reward = 0.0  # a dead end: nothing the gate let in, or the depth limit
        if self.found is None and children:
            if self.options.rollout_depth > 0:
                reward, self.found = await self._rollout(children)
            else:
                reward = max(self.scale.of(c.score) for c in children)
        if self.found is not None:  # an answer, found by the expansion or by the rollout
            reward = 1.0
        self._backup(path, reward, self.round)
        if self.found is not None:
            if self.options.answers == 1:
                self.done = True
                return
            # several asked: answers are terminals (_expand keeps its own in ``seen``); the search goes on
            self.seen.setdefault(self.found[1], self.found[0])
            self.found = None
            if len(self.seen) >= self.options.answers:
                self.done = True
                return
        if not children:
            self._mark_dead(path)

    def finish(self) -> SearchResult[S]:
        run, stats, root, seen, stopped = self.run, self.stats, self.root, self.seen, self.stopped
        for s in stats.values():
            if s.children is not None:
                for child in s.children:
                    if stats[child.id].visits == 0 and not stats[child.id].dead:
                        run.cut(child, "unvisited", score=child.score)
        visits = {nid: s.visits for nid, s in stats.items() if s.visits}
        if self.found is not None:
            return run.result(self.found[0], self.found[1], None, extra=MctsExtra(visits))
        searched_all = stopped is None and stats[root.id].dead
        proof = run.proves(searched_all)
        note = None
        if self.options.answers > 1 and len(seen) < self.options.answers:
            note = (f"the {stopped} budget ran out" if stopped is not None
                    else "every state was tried; answers that pass through a state already reached by another "
                         "path are not listed again" if proof
                    else "every state within reach was tried, but the depth limit or an enumeration limit cut some"
                    if stats[root.id].dead else f"the {self.options.iterations} iterations ran out")
        extra = MctsExtra(visits, [(a, run.reports[a].verified) for a in seen] if self.options.answers > 1 else None,
                          note)
        if seen:  # answers > 1: the first found is the run's answer; stopped_by says a budget cut the rest
            first, node = next(iter(seen.items()))
            return run.result(node, first, stopped, extra=extra)
        return run.result(None, None, stopped, searched_all=searched_all, extra=extra)
