"""The gated step: everything that happens when a proposed thought meets a state.

Every search, built in (``solver.searches``; ``tot list`` names them) or registered by a user, runs
through one ``Expansion``: it asks the generator for thoughts, checks each exactly (the only
place of the core that calls ``task.check``), lets a refused thought in only in the gate-off
ablation, drops states seen before, scores states through the evaluator, charges usage and the
step budget, counts proposals, refusals and expansions, writes the trace events of all of it, and
re-verifies an answer from the puzzle text before it leaves. A search is then only the order in
which it asks for expansions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Generic, Hashable, Literal, Sequence, TypeVar

from solver.budget import Budget, BudgetExhausted, Usage
from solver.evaluators import Evaluator
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.lm.session import NotSaved, Session, trace_sink
from solver.node import Node, NodeFactory, SeenStates
from solver.task import Task, Thought
from solver.task_capabilities import (
    AnswerRules,
    LegalMoves,
    LimitedMoves,
    MissingCapability,
    Unchecked,
    find,
    missing_message,
    require_parts,
)
from solver.task_capabilities import task_options as _task_options
from solver.trace import Trace
from verifiers.report import AnswerReport, as_invalid
from verifiers.verdict import Invalid, Solved, Valid, Verdict

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["Expansion", "SearchResult", "rule_failure", "run_usage"]


@dataclass(slots=True)
class SearchResult(Generic[S]):
    answer: str | None
    verified: bool
    stopped_by: str | None = None  # the budget that ended the search, if any
    solution: Node[S] | None = None
    proposed: int = 0
    rejected: int = 0
    expanded: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    best: Node[S] | None = None  # the deepest state search reached (first reached on ties)
    report: AnswerReport | None = None  # every check of the answer; verified == report.verified
    # True only when a complete search (solver/searches/complete.py) visited every state of the tree
    # and found no answer, with no budget or depth cut: a proof that none exists.
    exhausted: bool = False
    # Legal thoughts an enumeration limit left out (LimitedMoves), summed over the expansions it
    # cut, and the limits that cut them ("; "-joined): the search was not complete.
    not_tried: int = 0
    limit: str | None = None
    # MCTS (solver/searches/mcts.py): node id -> visits when the run ended (visited nodes only); None for
    # searches that count no visits. Not in the ``end`` event: the trace's rounds give them.
    visits: dict[int, int] | None = None
    # Every distinct accepted answer and whether it is verified, in the order found, when the
    # search was asked for several (MCTS ``answers`` > 1; the first is ``answer``); None otherwise.
    answers: list[tuple[str, bool]] | None = None
    answers_note: str | None = None  # why fewer answers than asked were found, when that is the case

    def summary(self) -> dict[str, object]:
        out: dict[str, object] = {
            "answer": self.answer, "verified": self.verified,
            "report": self.report.to_json() if self.report is not None else None,
            "stopped_by": self.stopped_by,
            "proposed": self.proposed, "rejected": self.rejected, "expanded": self.expanded,
            "exhausted": self.exhausted, "error": self.error, **self.usage.summary()}
        if self.limit is not None:  # only when a limit cut something: the older keys stay as they were
            out.update(not_tried=self.not_tried, limit=self.limit)
        if self.answers is not None:  # only when several were asked for
            out["answers"] = [{"answer": a, "verified": v} for a, v in self.answers]
            if self.answers_note is not None:
                out["answers_note"] = self.answers_note
        return out


def rule_failure(task: Any, puzzle: str, answer: str) -> Invalid | None:
    """The puzzle's exact rules applied to ``answer``, without any answer key: Invalid(first
    failed check) or None. A task's ``AnswerRules`` part decides where it has one (crosswords,
    whose report also compares with an answer key); otherwise the answer report does (a report
    that cannot be made is Invalid with its reason). Search refuses a solved state's answer when
    this fails; baselines and ``tot verify --trace`` judge answers with it too."""
    rules = find(task, AnswerRules)
    if rules is not None:
        return rules.verify_answer(puzzle, answer)
    try:
        return as_invalid(task.report_answer(puzzle, answer))
    except ValueError as exc:
        return Invalid(str(exc))


def _check_client(client: object) -> None:
    """A client is an LMClient (or anything that makes per-run sessions the same way), or None."""
    if client is not None and not callable(getattr(client, "session", None)):
        raise TypeError(f"client must be an LMClient or None, not {type(client).__name__}")


CutReason = Literal["beam", "pruned", "depth", "children", "duplicate", "no new proposal", "unvisited"]
"""Why a search left a state (the ``cut`` event's ``why``; docs/trace-format.md)."""

# The usage counts a checkpoint keeps (Expansion.books), and those its replay counts again exactly
# (the rest are the model's own: tokens, cache hits), which must then agree with the saved ones.
_COUNTS = ("calls", "backend_calls", "cache_hits", "failed_calls", "score_calls", "failed_scores", "replayed_tokens",
           "prompt_tokens", "completion_tokens", "reasoning_tokens", "steps")
_REPLAYED = ("calls", "failed_calls", "score_calls", "failed_scores", "steps")
_MAX_COUNT = 2**63  # a saved count at or above this is not one a run made
BUDGETS = ("calls", "tokens", "steps", "seconds")  # BudgetExhausted.which


def _saved_usage(books: dict[str, Any]) -> tuple[dict[str, int], float]:
    """The usage counts and seconds a checkpoint's ``books`` saved (ValueError in one line where
    they are not counts a run makes: whole numbers from 0, seconds finite from 0)."""
    usage, elapsed = books.get("usage"), books.get("elapsed")
    if not isinstance(usage, dict) or set(usage) != set(_COUNTS) or \
            not all(type(v) is int and 0 <= v < _MAX_COUNT for v in usage.values()):
        raise ValueError("the checkpoint's usage is malformed (each count a whole number from 0)")
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) or \
            not 0 <= elapsed < _MAX_COUNT:  # NaN fails this too
        raise ValueError("the checkpoint's usage is malformed (elapsed: seconds, a finite number from 0)")
    return dict(usage), float(elapsed)


def run_usage(client: LMClient | None) -> Usage:
    """Fresh counters, without limits, for a run that was given no ``usage``."""
    _check_client(client)
    return Usage(model=client.backend.model if client is not None else "")


class Expansion(Generic[S]):
    """One search run's gated step. The run's own model session (``model``; None without a
    client) counts this run's usage against its budget and writes this run's failed model calls
    into its trace, whoever else shares the client. ``evaluator`` None: a search that scores
    nothing (Long's controller without the oracle)."""

    def __init__(self, task: Task[S], puzzle: str, generator: Generator, evaluator: Evaluator | None,
                 client: LMClient | None, trace: Trace | None = None, usage: Usage | None = None,
                 gate: bool = True) -> None:
        _check_client(client)
        if not isinstance(generator, Generator):
            raise TypeError(f"generator {getattr(generator, 'name', type(generator).__name__)!r} must declare "
                            "name, exhaustive and log_likelihoods (see solver.generators.Generator)")
        require_parts(task, generator, evaluator, model=client)  # one line naming what is missing
        self.unchecked = find(task, Unchecked)
        if not gate and self.unchecked is None:
            raise MissingCapability(missing_message(task, Unchecked, "a search without the gate (gate=False)"))
        self.task, self.puzzle, self.gate = task, puzzle, gate
        self.generator, self.evaluator = generator, evaluator
        self.trace = trace if trace is not None else Trace()
        self.usage = usage if usage is not None else run_usage(client)
        self.model: Session | None = None if client is None else client.session(self.usage, trace_sink(self.trace))
        self.nodes = NodeFactory()
        self.best: Node[S] | None = None
        self.reports: dict[str, AnswerReport] = {}
        self._root: tuple[S, bool] | None = None  # the root state and whether it came solved (_root_state)
        self.proposed = self.rejected = self.expanded = 0
        self.checks = 0  # calls of task.check: one per thought met (a probe's verdict is reused)
        self._probed: dict[tuple[int, str], tuple[Verdict[S], str | None]] = {}
        self.limited = find(task, LimitedMoves)
        self.depth_cut = False  # the depth limit cut a state that may still have had legal steps
        self.not_tried = 0
        self.limits: list[str] = []  # each limit that cut an enumeration, in the order met
        # During a checkpoint's replay (start_replay): the run's budget, its counts before, the
        # saved counts, and the budget that stopped the saved run.
        self._replay: tuple[Budget, dict[str, int], dict[str, int], str | None] | None = None

    # ---- the run's start ------------------------------------------------------------------------

    def start(self, method: str, **fields: object) -> None:
        """The ``search`` event: the task, the puzzle and its options (so a trace of a search
        called directly, with no ``start`` event before it, still says what it searched), then
        the search's own ``fields``."""
        self.trace.emit("search", task=self.task.name, puzzle=self.puzzle, options=_task_options(self.task),
                        method=method, **fields)

    def root(self) -> Node[S]:
        """The root node, ``solved`` when the puzzle came solved (see ``solved_at_start``), as
        its ``root`` event says (``solved: true``)."""
        state, solved = self._root_state()
        node = self.nodes.make(state, None, solved=solved)
        self.trace.emit("root", node=node.id, state=self.task.describe(node.state),
                        **({"solved": True} if solved else {}))
        return node

    def _root_state(self) -> tuple[S, bool]:
        """The root state, parsed once a run, and whether its answer passes the puzzle's rules."""
        if self._root is None:
            state = self.task.root(self.puzzle)
            try:  # the protocol defines answer() for solved states only; on others it may refuse
                answer = self.task.answer(state)
            except Exception:  # noqa: BLE001 - any refusal means: not a solved state
                solved = False
            else:
                solved = isinstance(answer, str) and rule_failure(self.task, self.puzzle, answer) is None
            self._root = (state, solved)
        return self._root

    def solved_at_start(self, method: str) -> SearchResult[S] | None:
        """A puzzle given already solved (a full Sudoku, a planning problem whose goal holds at
        the start): its root's answer passes the puzzle's exact rules (``rule_failure``). Then
        the run is that answer, with no step (``search`` and ``root`` events, the answer re-checked
        and traced as any answer is, ``end``); else None and the search runs. Every registered
        search goes through here (``solver.searches.Search``), a user's own included, so none
        calls such a puzzle unsolvable."""
        if not self._root_state()[1]:
            return None
        self.start(method)
        root = self.root()
        return self.result(root, self.accept(root), None)  # accept re-checks the same rules: it passes

    # ---- checkpoints ----------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must be resumed on: the task (and its options), the puzzle, the
        generator and the evaluator."""
        return {"task": self.task.name, "puzzle": self.puzzle, "options": _task_options(self.task),
                "generator": self.generator.name, "evaluator": self.evaluator.name if self.evaluator else None}

    def books(self) -> dict[str, Any]:
        """What a checkpoint keeps of the run beside the search's steps (``solver.searches.common.
        Steppable``), as JSON: the usage counts, the seconds spent so far and the model session's
        memo (every answer the model gave this run, and its failed requests). The rest (node ids,
        counters, the states held) is rebuilt by replaying the steps against that memo."""
        return {"usage": {name: getattr(self.usage, name) for name in _COUNTS}, "elapsed": self.usage.seconds,
                "memo": self.model.memo_state() if self.model is not None else None}

    def start_replay(self, books: dict[str, Any], stopped: str | None) -> None:
        """Before a replay of saved steps: the books checked (ValueError in one line where they are
        malformed or the kind of client differs) and the model's saved answers taken, so that the
        replayed steps ask the model nothing; the run's budget is lifted until ``end_replay`` (the
        saved run's own budget stops are replayed: ``stopped``, the budget that stopped it, if
        one did)."""
        usage = _saved_usage(books)[0]
        memo = books.get("memo")
        if (memo is None) != (self.model is None):
            raise ValueError("the checkpoint was saved with" + (" no" if memo is None else "") +
                             " model client; resume it the same way")
        if self.model is not None:
            self.model.restore_memo(memo)
        self._replay = (self.usage.budget, {name: getattr(self.usage, name) for name in _REPLAYED}, usage, stopped)
        self.usage.budget = Budget()
        if self.model is not None:
            self.model.start_replay(usage["calls"], stopped)

    def end_replay(self) -> None:
        """After a replay (or its failure): the run's budget back; no more replayed answers."""
        if self._replay is not None:
            self.usage.budget = self._replay[0]
        if self.model is not None:
            self.model.end_replay()

    def restore_books(self, books: dict[str, Any]) -> None:
        """After a replay: the usage counts and the time spent as they were saved (the replay's own
        memo hits do not count). ValueError in one line where the replay did not count what the
        saved run counted (the steps or the memo were altered)."""
        assert self._replay is not None, "restore_books after start_replay"
        _, before, usage, _ = self._replay
        elapsed = _saved_usage(books)[1]
        for name in _REPLAYED:
            replayed = getattr(self.usage, name) - before[name]
            if replayed != usage[name]:
                raise ValueError(f"the checkpoint's steps replay to {replayed} {name.replace('_', ' ')}, not the "
                                 f"{usage[name]} it saved: it was altered")
        for name in _COUNTS:  # in place: the model session counts on this object
            setattr(self.usage, name, usage[name])
        self.usage.started = time.monotonic() - elapsed
        self._replay = None

    # ---- proposing ------------------------------------------------------------------------------

    def step(self) -> None:
        """Charge one search step to the budget (BudgetExhausted when it allows no more). In a
        checkpoint's replay, a step beyond the saved run's stops where its budget stopped it, and
        is refused (NotSaved) where nothing stopped it."""
        if self._replay is not None:
            _, before, usage, stopped = self._replay
            if self.usage.steps - before["steps"] >= usage["steps"]:
                if stopped is not None:
                    raise BudgetExhausted(stopped)
                raise NotSaved("its steps take more search steps than the saved run took")
        self.usage.check_step()

    async def expand(self, node: Node[S]) -> list[Node[S]]:
        """Generate, gate and deduplicate the children of ``node``."""
        return self.gate_all(node, await self.generate(node))

    async def generate(self, node: Node[S]) -> list[Thought]:
        """One search step: the generator's thoughts for ``node`` (not yet checked)."""
        self.step()
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
            self.cut(child, "duplicate")
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

    # ---- what the search decided, in the trace ---------------------------------------------------

    def keep(self, node: Node[S], **extra: object) -> None:
        """The search goes on from ``node`` (a ``keep`` event with its score; ``extra`` fields,
        such as the beam's ``log_weight``, after it; ``score=`` overrides the node's)."""
        self.trace.emit("keep", node=node.id, **{"score": node.score, **extra})

    def cut(self, node: Node[S], why: CutReason, **extra: object) -> None:
        """The search leaves ``node`` (a ``cut`` event saying why)."""
        self.trace.emit("cut", node=node.id, why=why, **extra)

    def cut_thought(self, parent: Node[S], thought: str, why: CutReason, score: float | None) -> None:
        """A thought judged and left before it became a node (Long's controller ranks proposals
        before trying them)."""
        self.trace.emit("cut", parent=parent.id, thought=thought, why=why, score=score)

    def backtrack(self, node: Node[S], to: Node[S], **extra: object) -> None:
        """The search returns from ``node`` to ``to``, whose state is held as it was."""
        self.trace.emit("backtrack", node=node.id, to=to.id, state=self.task.describe(to.state), **extra)

    def new_round(self, number: int, node: Node[S], **extra: object) -> None:
        """A round of a search that works in rounds (Long's controller, MCTS's iterations, the
        beam's runs) begins, or ends with ``extra`` (MCTS: the path and its reward), at ``node``."""
        self.trace.emit("round", round=number, node=node.id, depth=node.depth, **extra)

    # ---- answers -------------------------------------------------------------------------------

    def reach(self, node: Node[S]) -> None:
        """Remember the deepest node reached (tasks such as crosswords report it when unsolved)."""
        if self.best is None or node.depth > self.best.depth:
            self.best = node

    def first_answer(self, children: list[Node[S]]) -> tuple[Node[S], str] | None:
        """The first solved child whose answer the re-check accepts (see ``accept``), if any."""
        for child in children:
            if child.solved:
                answer = self.accept(child)
                if answer is not None:
                    return child, answer
        return None

    def accept(self, node: Node[S]) -> str | None:
        """Re-check a solved node's answer from the puzzle text alone. An answer that breaks a rule
        is refused (None; search goes on). Otherwise it is returned, and its report says whether it
        is verified (a crossword without an answer key is returned, never verified)."""
        answer = self.task.answer(node.state)
        report = self.task.report_answer(self.puzzle, answer)
        problem = rule_failure(self.task, self.puzzle, answer)
        if problem is not None:
            self.trace.emit("answer", node=node.id, answer=answer, verified=False, accepted=False,
                            reason=problem.reason, report=report.to_json())
            return None
        self.reports[answer] = report
        self.trace.emit("answer", node=node.id, answer=answer, verified=report.verified, accepted=True,
                        reason=report.reason, report=report.to_json())
        return answer

    def cut_at_depth(self, node: Node[S]) -> None:
        """``node`` lies at the search's depth limit and is not expanded: said in the trace (a
        ``cut``, why ``depth``) and remembered where it may lose something (a task that enumerates
        its steps says whether any is left; one that cannot is taken to have some), so that the
        run claims no proof (``proves``)."""
        if not self.depth_cut:
            moves = find(self.task, LegalMoves)
            self.depth_cut = moves is None or bool(moves.legal_thoughts(node.state))
        self.trace.emit("cut", node=node.id, why="depth")

    def proves(self, searched_all: bool) -> bool:
        """Whether a search that ``searched_all`` the states it was given, with no answer, has
        proved that none exists: only with an exhaustive generator and no depth cut (an
        enumeration limit's cut is counted in ``result``, which says it)."""
        return searched_all and self.generator.exhaustive and not self.depth_cut

    def result(self, solution: Node[S] | None, answer: str | None, stopped_by: str | None,
               error: str | None = None, searched_all: bool = False,
               visits: dict[int, int] | None = None, answers: list[str] | None = None,
               answers_note: str | None = None) -> SearchResult[S]:
        """The run's result, traced as its ``end`` event; ``searched_all``: the search ran out of
        states (the step decides whether that is a proof, ``proves``); ``answers``: every accepted
        answer, when the search was asked for several (each one passed ``accept``)."""
        report = self.reports.get(answer) if answer is not None else None
        # A cut enumeration proves nothing: "no solution exists" only when nothing was cut.
        res = SearchResult(answer, report is not None and report.verified, stopped_by, solution, self.proposed,
                           self.rejected, self.expanded, self.usage, error, solution or self.best, report,
                           answer is None and self.proves(searched_all) and not self.limits, self.not_tried,
                           "; ".join(self.limits) if self.limits else None, visits,
                           None if answers is None else [(a, self.reports[a].verified) for a in answers],
                           answers_note)
        self.trace.emit("end", **res.summary())
        return res
