"""The gated step: what happens when a proposed thought meets a state.

``GatedStep`` asks the generator for thoughts, checks each exactly (the only place of the core
that calls ``task.check``), lets a refused thought in only in the gate-off ablation, drops states
seen before, scores states through the evaluator, charges the step budget and counts proposals,
refusals and expansions, writing the trace events of each. It keeps no books of the run (the
result, the answers, checkpoints: ``solver.expansion.Run``, which holds one).
"""

from __future__ import annotations

from typing import Callable, Generic, Hashable, Sequence, TypeVar

from solver.budget import Usage
from solver.evaluators import Evaluator
from solver.generators import Generator
from solver.lm.session import Session
from solver.node import Node, NodeFactory, SeenStates
from solver.task import Task, Thought
from solver.task_capabilities import LimitedMoves, MissingCapability, Unchecked, find, missing_message, require_parts
from solver.trace import Trace
from verifiers.verdict import Invalid, Solved, Valid, Verdict

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["GatedStep"]


class GatedStep(Generic[S]):
    """Generate -> gate -> deduplicate -> score, for one run: its events go to ``trace``, its
    steps and the evaluator's time to ``usage``, its model requests through ``model`` (the run's
    session; None without a client). ``evaluator`` None: a search that scores nothing (Long's
    controller without the oracle). ``guard``, where set, is asked before each step is charged
    (a checkpoint's replay bounds its steps so)."""

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
        self._probed: dict[tuple[int, str], tuple[Verdict[S], str | None]] = {}
        self.limited = find(task, LimitedMoves)
        self.not_tried = 0
        self.limits: list[str] = []  # each limit that cut an enumeration, in the order met
        self.guard: Callable[[], None] | None = None

    # ---- proposing ------------------------------------------------------------------------------

    def charge(self) -> None:
        """Charge one search step to the budget (BudgetExhausted when it allows no more)."""
        if self.guard is not None:
            self.guard()
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
            return cached
        self.checks += 1
        verdict = self.task.check(node.state, thought)
        if isinstance(verdict, Invalid) and not self.gate and self.unchecked is not None:
            loose = self.unchecked.apply_unchecked(node.state, thought)
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
        self._probed[(node.id, thought.text)] = (verdict, gate_reason)
        return Node(-1, verdict.state, node, node.depth + 1, thought.text, thought.prior)

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
