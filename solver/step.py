"""The gated step: what happens when a proposed thought meets a state.

``GatedStep`` asks the generator for thoughts, checks each exactly (the only place of the core
that calls ``task.check``), lets a refused thought in only in the gate-off ablation, drops states
seen before, scores states through the evaluator, charges the step budget and counts proposals,
refusals and expansions, writing the trace events of each. It keeps no books of the run (the
result, the answers, checkpoints: ``solver.expansion.Run``, which holds one). It performs what a
search asks for (``perform``): ``Expand`` (one search step: generate, gate, deduplicate), ``Propose``
(thoughts not gated, not charged: Long's rounds) and ``Score``; model requests asked together go
to the model together, and expansions are gated in the order asked once all have arrived, so node
ids and the trace do not depend on which request finished first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, Sequence, TypeVar, Union

from solver.budget import Usage
from solver.evaluators import Evaluator
from solver.generators import Generator
from solver.lm.session import Session, gather_all
from solver.node import Node, NodeFactory, SeenStates
from solver.task import Task, Thought
from solver.task_capabilities import LimitedMoves, MissingCapability, Unchecked, find, missing_message, require_parts
from solver.trace import Trace
from verifiers.verdict import Invalid, Solved, Valid, Verdict

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["Ask", "Expand", "GatedStep", "Propose", "Score"]


@dataclass(frozen=True, slots=True)
class Expand(Generic[S]):
    """One search step at ``node``; its outcome is the children (gated, a repeated state among
    them cut). ``pick`` chooses among the generator's thoughts before the gate (the beam's draw);
    ``seen``: then a child whose state it knows is cut too, just after this node's gating."""

    node: Node[S]
    pick: Callable[[list[Thought]], list[Thought]] | None = None
    seen: SeenStates[S] | None = None  # a table the asks of one round share: a state it knows is cut
    level: bool = False  # one of a level's expansions, sent with the others (``gather_all``) even alone


@dataclass(frozen=True, slots=True)
class Propose(Generic[S]):
    """The generator's thoughts at ``node``, not gated and not charged as a step (Long's rounds):
    the ``request``-th at this node, which samples with a fresh seed after the first (identical
    requests are memoised); its outcome is the thoughts."""

    node: Node[S]
    request: int


_SEED_STRIDE = 1000  # fresh seeds per request at the same node, clear of Sample's seed+i


def reseeded(generator: Generator, request: int) -> Generator:
    """The same generator with a fresh sampling seed for the ``request``-th request at a node, so
    that asking again at a node can give something new (identical requests are memoised)."""
    params = getattr(generator, "params", None)
    if request <= 1 or params is None or not dataclasses.is_dataclass(generator):
        return generator
    seed = (getattr(params, "seed", None) or 0) + (request - 1) * _SEED_STRIDE
    return dataclasses.replace(generator, params=dataclasses.replace(params, seed=seed))


@dataclass(frozen=True, slots=True)
class Score(Generic[S]):
    """Score ``nodes`` (each node's ``score`` and ``detail``; the outcome is None); ``probes``:
    probe nodes (``GatedStep.probe``)."""

    nodes: list[Node[S]]
    probes: bool = False


Ask = Union[Expand[S], Propose[S], Score[S]]
"""What a search asks the run to do next (``solver.searches.common.AskTell``)."""


class GatedStep(Generic[S]):
    """Generate -> gate -> deduplicate -> score, for one run: its events go to ``trace``, its
    steps and the evaluator's time to ``usage``, its model requests through ``model`` (the run's
    session; None without a client). ``evaluator`` None: a search that scores nothing (Long's
    controller without the oracle)."""

    def __init__(self, task: Task[S], generator: Generator, evaluator: Evaluator | None, trace: Trace,
                 usage: Usage, model: Session | None, gate: bool = True) -> None:
        if not isinstance(generator, Generator):
            raise TypeError(f"generator {getattr(generator, 'name', type(generator).__name__)!r} must declare "
                            "name, exhaustive and log_likelihoods (see solver.generators.Generator)")
        require_parts(task, generator, evaluator, model=model is not None)  # one line naming what is missing
        self.unchecked = find(task, Unchecked)
        if not gate and self.unchecked is None:
            raise MissingCapability(missing_message(task, Unchecked, "a search without the gate (gate=False)"))
        self.task, self.gate, self.generator, self.evaluator = task, gate, generator, evaluator
        self.trace, self.usage, self.model = trace, usage, model
        self.nodes = NodeFactory()
        self.proposed = self.rejected = self.expanded = 0
        self.checks = 0  # calls of task.check: one per thought met (a probe's verdict is reused)
        # Thoughts probed (``probe``) and not yet gated: their verdicts, by node id and text, with the node.
        self._probed: dict[tuple[int, str], tuple[Verdict[S], str | None, Node[S]]] = {}
        self.limited = find(task, LimitedMoves)
        self.not_tried = 0
        self.limits: list[str] = []  # each limit that cut an enumeration, in the order met

    async def perform(self, asks: Sequence[Ask[S]]) -> list[Any]:
        """Each ask's outcome, in order: several are sent together (``gather_all``), and the
        expansions are gated in the order asked once all have arrived."""
        async def one(ask: Ask[S]) -> Any:
            if isinstance(ask, Expand):
                return await self.generate(ask.node)
            if isinstance(ask, Propose):
                return await self.propose(ask.node, request=ask.request,
                                          generator=reseeded(self.generator, ask.request))
            await (self.score_probes if ask.probes else self.score)(ask.nodes)
            return None

        alone = len(asks) == 1 and not (isinstance(asks[0], Expand) and asks[0].level)
        got = [await one(asks[0])] if alone else await gather_all(*(one(a) for a in asks))
        out = []
        for ask, outcome in zip(asks, got, strict=True):
            if isinstance(ask, Expand):
                outcome = self.gate_all(ask.node, ask.pick(list(outcome)) if ask.pick is not None else outcome)
                if ask.seen is not None:
                    outcome = [c for c in outcome if not self.duplicate(c, ask.seen)]
            out.append(outcome)
        return out

    # ---- proposing ------------------------------------------------------------------------------

    def charge(self) -> None:
        """Charge one search step to the budget (BudgetExhausted when it allows no more)."""
        self.usage.check_step()

    async def expand(self, node: Node[S]) -> list[Node[S]]:
        """Generate, gate and deduplicate the children of ``node``."""
        return self.gate_all(node, await self.generate(node))

    async def generate(self, node: Node[S]) -> list[Thought]:
        """One search step: the generator's thoughts for ``node`` (not yet checked)."""
        self.charge()
        return await self.propose(node)

    async def propose(self, node: Node[S], *, request: int | None = None,
                      generator: Generator | None = None) -> list[Thought]:
        """The generator's thoughts for ``node`` without charging a step (Long's controller
        charges its rounds); ``request`` numbers repeated requests at one node in the trace,
        ``generator`` replaces the run's for this request (a fresh seed)."""
        self.expanded += 1
        if request is None:
            self.trace.emit("expand", node=node.id, depth=node.depth)
        else:
            self.trace.emit("expand", node=node.id, depth=node.depth, request=request)
        gen = generator or self.generator
        thoughts = await gen(self.task, node.state, self.model)
        if self.limited is not None and gen.exhaustive:
            self._note_cut(node)
        return thoughts

    def _note_cut(self, node: Node[S]) -> None:
        """An enumerating generator met a limit at ``node``: count what it left out, say so in
        the trace (``incomplete``), and remember it, so that the run never claims completeness."""
        assert self.limited is not None
        cut = self.limited.enumeration_cut(node.state)
        if cut is None:
            return
        count, limit = cut
        self.not_tried += count
        if limit not in self.limits:
            self.limits.append(limit)
        self.trace.emit("incomplete", node=node.id, not_tried=count, limit=limit)

    # ---- the gate ------------------------------------------------------------------------------

    def _verdict(self, node: Node[S], thought: Thought) -> tuple[Verdict[S], str | None]:
        """The exact check of ``thought`` at ``node`` (the one call of ``task.check`` in the
        core) and, when the gate is off and let a refused thought in, the gate's reason. With the
        gate off (the paper's behaviour, for ablations; the task is Unchecked) a refused thought
        enters as the model claims it; only the final answer check then stands between it and
        the user. A probed thought's verdict is reused, not checked again."""
        cached = self._probed.pop((node.id, thought.text), None)
        if cached is not None:
            return cached[:2]
        self.checks += 1
        return self.verdict_of(node.state, thought)

    def verdict_of(self, state: S, thought: Thought) -> tuple[Verdict[S], str | None]:
        """``task.check`` of ``thought`` at ``state`` (through ``apply_unchecked`` where the gate is
        off and refuses it) and the gate's reason then; a checkpoint rebuilds its states so."""
        verdict = self.task.check(state, thought)
        if isinstance(verdict, Invalid) and not self.gate and self.unchecked is not None:
            loose = self.unchecked.apply_unchecked(state, thought)
            if not isinstance(loose, Invalid):
                return loose, verdict.reason
        return verdict, None

    def _refused(self, node: Node[S], thought: Thought, verdict: Invalid) -> None:
        self.proposed += 1
        self.rejected += 1
        self.trace.emit("proposal", parent=node.id, thought=thought.text, prior=thought.prior)
        self.trace.emit("verdict", parent=node.id, thought=thought.text, verdict="invalid", reason=verdict.reason)

    def gate_one(self, node: Node[S], thought: Thought) -> Node[S] | None:
        """Check one thought proposed for ``node``: None when the gate refuses it, else the new
        child node (not yet deduplicated; see ``duplicate``)."""
        verdict, gate_reason = self._verdict(node, thought)
        if isinstance(verdict, Invalid):
            self._refused(node, thought, verdict)
            return None
        assert isinstance(verdict, (Valid, Solved))
        self.proposed += 1
        child = self.nodes.make(verdict.state, node, thought.text, thought.prior,
                                isinstance(verdict, Solved), verdict.note)
        self.trace.emit("proposal", node=child.id, parent=node.id, depth=child.depth,
                        thought=thought.text, prior=thought.prior)
        if gate_reason is not None:
            self.trace.emit("verdict", node=child.id, verdict="unchecked", solved=child.solved,
                            reason=gate_reason, state=self.task.describe(child.state))
        else:
            self.trace.emit("verdict", node=child.id, verdict="solved" if child.solved else "valid",
                            reason=verdict.note or None, state=self.task.describe(child.state))
        return child

    def gate_all(self, node: Node[S], thoughts: Sequence[Thought]) -> list[Node[S]]:
        """Gate ``thoughts`` proposed for ``node`` and drop repeated states among them.
        Synchronous, so BFS can gate its frontier in order after generating concurrently: node
        ids and the trace then do not depend on which model call finished first (a live run and
        its replay give the same trace)."""
        children: list[Node[S]] = []
        seen: SeenStates[S] = SeenStates()
        for thought in thoughts:
            child = self.gate_one(node, thought)
            if child is not None and not self.duplicate(child, seen):
                children.append(child)
        return children

    def duplicate(self, child: Node[S], seen: SeenStates[S], *, remember: bool = True) -> bool:
        """Whether ``seen`` knows ``child``'s state (then traced as cut); else it is recorded
        there unless ``remember`` is False (the caller records it once it keeps the child)."""
        if seen.known(child):
            self.trace.emit("cut", node=child.id, why="duplicate")
            return True
        if remember:
            seen.record(child)
        return False

    def probe(self, node: Node[S], thought: Thought) -> Node[S] | None:
        """Check ``thought`` at ``node`` so that it can be scored before any round tries it:
        None (recorded as a refused proposal) when the gate refuses it, else a probe node (id -1,
        not part of the tree). The verdict is kept, so ``gate_one`` of the same thought there
        later does not check it again."""
        verdict, gate_reason = self._verdict(node, thought)
        if isinstance(verdict, Invalid):
            self._refused(node, thought, verdict)
            return None
        self._probed[(node.id, thought.text)] = (verdict, gate_reason, node)
        return Node(-1, verdict.state, node, node.depth + 1, thought.text, thought.prior, isinstance(verdict, Solved))

    def probed(self) -> list[tuple[Node[S], str]]:
        """The thoughts probed and not yet gated, each with the node it was probed at (a checkpoint
        keeps them)."""
        return [(node, text) for (_, text), (_, _, node) in self._probed.items()]

    def reprobe(self, node: Node[S], thought: Thought) -> bool:
        """A probed thought's verdict again, as a checkpoint is read (not counted as a check);
        False where the gate refuses it (it was not probed so)."""
        verdict, reason = self.verdict_of(node.state, thought)
        self._probed[(node.id, thought.text)] = (verdict, reason, node)
        return not isinstance(verdict, Invalid)

    # ---- scoring -------------------------------------------------------------------------------

    def require_evaluator(self) -> Evaluator:
        """The run's evaluator; ValueError for a run started without one."""
        if self.evaluator is None:
            raise ValueError("this search was started without an evaluator and cannot score states")
        return self.evaluator

    async def score(self, nodes: list[Node[S]]) -> None:
        """Score ``nodes`` through the evaluator (each node's ``score`` and ``detail``). A
        model-free evaluator (one that declares ``needs.model`` false, such as the exact oracle or
        the planning oracle's planner calls) under a seconds budget scores one node at a time, the
        budget checked before each: no model call checks it there."""
        if not nodes:
            return
        evaluator = self.require_evaluator()
        needs = getattr(evaluator, "needs", None)
        if needs is not None and not needs.model and self.usage.budget.seconds is not None:
            results = []
            for nd in nodes:
                self.usage.check_time()
                results += await evaluator(self.task, [nd], self.model)
        else:
            results = await evaluator(self.task, nodes, self.model)
        for nd, (score, detail) in zip(nodes, results, strict=False):
            nd.score, nd.detail = score, detail
            self.trace.emit("score", node=nd.id, score=score, detail=detail)

    async def score_probes(self, probes: list[Node[S]]) -> None:
        """Score probe nodes (see ``probe``); each event names the parent and thought, and the
        probe's state lets ``tot audit`` judge the scored thought against the exact oracle."""
        if not probes:
            return
        results = await self.require_evaluator()(self.task, probes, self.model)
        for probe, (score, detail) in zip(probes, results, strict=False):
            probe.score, probe.detail = score, detail
            assert probe.parent is not None
            self.trace.emit("score", parent=probe.parent.id, thought=probe.thought, score=score, detail=detail,
                            state=self.task.describe(probe.state))
