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
from dataclasses import dataclass, field
from typing import Any, Generic, Hashable, TypeVar

from solver.expansion import Run, SearchResult
from solver.node import Node
from solver.search_options import Options, option
from solver.searches.common import AskTell, Transpositions, begin, quantise
from solver.settings import SearchSettings
from solver.step import Ask, Expand, Score

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
class Mcts(AskTell[S]):
    """MCTS as a state that asks: each iteration asks to expand its leaf, to score the leaf's new
    children and, with rollouts, for each rollout step (``solver.searches.common.AskTell``)."""

    options: MctsOptions = MctsOptions()
    max_depth: int = field(init=False)
    rng: random.Random = field(init=False)
    scale: _Scale = field(init=False)
    held: Transpositions[S] = field(init=False)
    stats: dict[int, _Stats[S]] = field(init=False)
    root: Node[S] = field(init=False)
    round: int = field(init=False)  # iterations begun
    found: tuple[Node[S], str] | None = field(init=False)
    seen: dict[str, Node[S]] = field(init=False)  # answers > 1: every accepted answer so far -> its state
    done: bool = field(init=False)
    # The iteration under way: what it asks for (expand, score, roll, rollscore), its path from the
    # root, the leaf's new children, the answer its expansion found, the rollout's state and steps left.
    stage: str = field(init=False)
    path: list[Node[S]] = field(init=False)
    children: list[Node[S]] = field(init=False)
    hit: tuple[Node[S], str] | None = field(init=False)
    last: Node[S] | None = field(init=False)
    roll_left: int = field(init=False)

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        run.step.require_evaluator()
        self.max_depth = begin(run, settings, self.options)
        self.rng, self.scale, self.held = random.Random(settings.seed), _Scale(), Transpositions()
        self.root = run.root()
        self.held.fresh(self.root)
        self.stats = {self.root.id: _Stats()}
        run.reach(self.root)
        self.round, self.found, self.seen, self.done = 0, None, {}, False
        self.path, self.children, self.hit, self.last, self.roll_left = [], [], None, None, 0
        self._iterate(run)

    def _iterate(self, run: Run[S]) -> None:
        """The next iteration: down the tree by UCT to a leaf, which is asked to be expanded (none:
        the search is over: an answer, or ``answers`` of them, the iterations ran out, a dead root)."""
        if self.done or self.round >= self.options.iterations or self.stats[self.root.id].dead:
            self.done = True
            return
        self.round += 1
        self.path = self._select()
        leaf = self.path[-1]
        if leaf is not self.root:
            run.keep(leaf)
        run.reach(leaf)
        self.stage = "expand"

    def ask(self) -> list[Ask[S]]:
        if self.done:
            return []
        if self.stage == "expand":
            return [Expand(self.path[-1])]
        if self.stage == "roll":
            assert self.last is not None
            return [Expand(self.last)]
        return [Score(self.children if self.stage == "score" else [self.last])]  # type: ignore[list-item]

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        if self.stage == "expand":
            self._expanded(run, outcomes[0])
        elif self.stage == "score":
            for child in self.children:
                self.scale.add(child.score)
            self._valued(run)
        elif self.stage == "roll":
            self._rolled(run, outcomes[0])
        else:
            assert self.last is not None
            self.scale.add(self.last.score)
            self._backup(run, self.scale.of(self.last.score))

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

    def _expanded(self, run: Run[S], children: list[Node[S]]) -> None:
        """The leaf's children (gated, new, within the depth limit), to be scored, or its answer.
        Asked for several answers: every new accepted answer among the children is kept (``seen``),
        the first of them is the iteration's, and the other children are still the leaf's."""
        self.children, self.hit = [], None
        if self.options.answers == 1:
            self.hit = run.first_answer(children)
            if self.hit is not None:
                self._valued(run)
                return
        else:
            for child in children:
                if child.solved:
                    answer = run.accept(child)
                    if answer is not None and answer not in self.seen:
                        self.seen[answer] = child
                        self.hit = self.hit or (child, answer)
        self.children = self.held.open_children(run, children, self.max_depth)  # a solved child here: a dead end
        if self.children:
            self.stage = "score"
        else:
            self._valued(run)

    def _valued(self, run: Run[S]) -> None:
        """The leaf's children join the tree; the reward is theirs, or a rollout's."""
        for child in self.children:
            self.stats[child.id] = _Stats()
        self.stats[self.path[-1].id].children = self.children
        self.found = self.hit
        if self.found is None and self.children:
            if self.options.rollout_depth > 0:
                # Up to ``rollout_depth`` random gated steps from the leaf, the first to one of its children.
                self.last = self.children[self.rng.randrange(len(self.children))]
                self.roll_left = self.options.rollout_depth - 1
                self._roll(run)
                return
            self._backup(run, max(self.scale.of(c.score) for c in self.children))
            return
        self._backup(run, 0.0)  # a dead end (nothing the gate let in, or the depth limit), or an answer

    def _roll(self, run: Run[S]) -> None:
        assert self.last is not None
        if self.roll_left > 0:
            if self.last.depth >= self.max_depth:
                self._backup(run, 0.0)
            else:
                self.stage = "roll"
        elif self.last.score is None:
            self.stage = "rollscore"
        else:
            self._backup(run, self.scale.of(self.last.score))

    def _rolled(self, run: Run[S], below: list[Node[S]]) -> None:
        self.found = run.first_answer(below)
        open_nodes = [c for c in below if not c.solved]
        if self.found is not None or not open_nodes:
            self._backup(run, 0.0)
            return
        self.last = open_nodes[self.rng.randrange(len(open_nodes))]
        self.roll_left -= 1
        self._roll(run)

    def _backup(self, run: Run[S], reward: float) -> None:
        """The iteration's reward (1 at an answer, found by the expansion or by the rollout) backed
        up its path; then the next iteration."""
        path = self.path
        reward = 1.0 if self.found is not None else reward
        for node in path:
            s = self.stats[node.id]
            s.visits += 1
            s.total += reward
        run.new_round(self.round, path[-1], path=[nd.id for nd in path], reward=reward)
        if self.found is not None:
            if self.options.answers == 1:
                self.done = True
                return
            # several asked: answers are terminals (_expanded keeps its own in ``seen``); the search goes on
            self.seen.setdefault(self.found[1], self.found[0])
            self.found = None
            if len(self.seen) >= self.options.answers:
                self.done = True
                return
        if not self.children:
            self._mark_dead(path)
        self._iterate(run)

    def finish(self, run: Run[S], stopped: str | None) -> SearchResult[S]:
        stats, root, seen = self.stats, self.root, self.seen
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
