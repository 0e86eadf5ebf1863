"""A search run's books, and the one function that assembles a run.

``open_run`` makes every run (``solver.run.solve``, ``run_search``, the testing kit, the searches
called as functions): a ``GatedStep`` (``solver.step``: generate, gate, deduplicate, score) and
the ``Run`` that keeps the books around it: the trace's start and root, what the search decided
(``keep``, ``cut``, ``backtrack``, ``new_round``), the deepest state reached, every answer
re-verified from the puzzle text before it leaves, whether a run that ran out of states proved
anything, and the result. ``Run.begin``, ``cycle`` and ``drive`` run a search that asks and is
told (``solver.searches.common.AskTell``), performing its asks through the gated step;
``Run.conduct`` runs one written as a function. Either way a puzzle given solved is answered at
its root, and a budget that runs out ends the run there, once for every search, with the answer
the search holds, if any. A search is then only the order in which it asks for expansions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generic, Hashable, Literal, Protocol, Sequence, TypeVar

from solver.budget import BudgetExhausted, Usage
from solver.evaluators import Evaluator
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.lm.session import trace_sink
from solver.node import Node
from solver.settings import SearchSettings
from solver.step import Ask, GatedStep
from solver.task import Task
from solver.task_capabilities import AnswerRules, LegalMoves, find
from solver.task_capabilities import task_options as _task_options
from solver.trace import Trace
from verifiers.report import AnswerReport, as_invalid
from verifiers.verdict import Invalid

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
T = TypeVar("T")
__all__ = ["AskTell", "Run", "SearchExtra", "SearchOrder", "SearchResult", "open_run", "rule_failure", "run_usage"]


class SearchExtra(Protocol):
    """A search's own part of its result (MCTS: ``solver.searches.mcts.MctsExtra``), with what
    it adds to the ``end`` event and the result's JSON."""

    def summary(self) -> dict[str, object]: ...


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
    extra: SearchExtra | None = None  # the search's own fields (MCTS's visits and answers), if any

    def summary(self) -> dict[str, object]:
        out: dict[str, object] = {
            "answer": self.answer, "verified": self.verified,
            "report": self.report.to_json() if self.report is not None else None,
            "stopped_by": self.stopped_by,
            "proposed": self.proposed, "rejected": self.rejected, "expanded": self.expanded,
            "exhausted": self.exhausted, "error": self.error, **self.usage.summary()}
        if self.limit is not None:  # only when a limit cut something: the older keys stay as they were
            out.update(not_tried=self.not_tried, limit=self.limit)
        if self.extra is not None:
            out.update(self.extra.summary())
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

def run_usage(client: LMClient | None) -> Usage:
    """Fresh counters, without limits, for a run that was given no ``usage``."""
    _check_client(client)
    return Usage(model=client.backend.model if client is not None else "")


def open_run(task: Task[S], puzzle: str, generator: Generator, evaluator: Evaluator | None,
             client: LMClient | None, trace: Trace | None = None, usage: Usage | None = None,
             gate: bool = True) -> Run[S]:
    """A run of ``task`` on ``puzzle``: its gated step and its books, checked before anything runs
    (the client; the generator's declaration; the task's capabilities, the parts and the model
    they need: one line naming what is missing). Its own model session (None without a client)
    counts this run's usage against its budget and writes its failed model calls into its trace,
    whoever else shares the client. ``evaluator`` None: a search that scores nothing."""
    _check_client(client)
    trace = trace if trace is not None else Trace()
    usage = usage if usage is not None else run_usage(client)
    model = None if client is None else client.session(usage, trace_sink(trace))
    return Run(task, puzzle, GatedStep(task, generator, evaluator, trace, usage, model, gate))


class Run(Generic[S]):
    """One search run's books around its gated step (``step``; see ``open_run``)."""

    def __init__(self, task: Task[S], puzzle: str, step: GatedStep[S]) -> None:
        self.task, self.puzzle, self.step = task, puzzle, step
        self.usage, self.model = step.usage, step.model
        self.generator, self.evaluator = step.generator, step.evaluator
        self.best: Node[S] | None = None
        self.found: tuple[Node[S], str] | None = None  # the answer the search holds, if a budget stops it
        self.reports: dict[str, AnswerReport] = {}
        self._root: tuple[S, bool] | None = None  # the root state and whether it came solved (root_state)
        self.depth_cut = False  # the depth limit cut a state that may still have had legal steps
        self.loaded = False  # whether the search's state came from a checkpoint (solver.searches.checkpoint)

    @property
    def trace(self) -> Trace:
        return self.step.trace

    async def conduct(self, order: SearchOrder[S], settings: SearchSettings,
                      name: str | None = None) -> SearchResult[S]:
        """``order``'s result on this run: a puzzle given already solved is answered at its root
        without it (``solved_at_start``, under ``name``, else the settings' method); a budget that
        runs out ends the run with the answer the search holds (``found``), if any (``stop``)."""
        done = self.solved_at_start(name or settings.method)
        if done is not None:
            return done
        try:
            return await order(self, settings)
        except BudgetExhausted as exc:
            return self.stop(exc.which)

    def begin(self, search: AskTell[S], settings: SearchSettings) -> SearchResult[S] | None:
        """Start an asking search (``solver.searches.common.AskTell``) on this run: its result
        where the puzzle came solved (``solved_at_start``) or a budget stops it at once, else None
        (then ``cycle`` until it gives the result)."""
        done = self.solved_at_start(settings.method)
        if done is not None:
            return done
        try:
            search.start(self, settings)
        except BudgetExhausted as exc:
            return search.finish(self, exc.which)
        return None

    async def cycle(self, search: AskTell[S]) -> SearchResult[S] | None:
        """One round of an asking search: what it asks for, performed through the gated step and
        told to it; its result once it asks for nothing more or a budget runs out, else None.
        Between two cycles the run can be saved (``solver.searches.checkpoint``)."""
        try:
            asks = self._decide(search.ask)
            if not asks:
                return search.finish(self, None)
            outcomes = await self.step.perform(asks)
            self._decide(lambda: search.tell(self, outcomes))
        except BudgetExhausted as exc:
            return search.finish(self, exc.which)
        return None

    def _decide(self, decision: Callable[[], T]) -> T:
        """The search's own decision (``ask``, ``tell``). Where its state came from a checkpoint
        changed with a new digest, its parts need not fit together: an error there is one line."""
        try:
            return decision()
        except (LookupError, TypeError, AttributeError, AssertionError, ValueError, ArithmeticError) as exc:
            if not self.loaded:
                raise
            raise ValueError(f"the checkpoint's search state does not hold together ({type(exc).__name__})") from None

    async def drive(self, search: AskTell[S]) -> SearchResult[S]:
        """Cycle ``search`` (begun) to its result."""
        while True:
            result = await self.cycle(search)
            if result is not None:
                return result

    def stop(self, which: str | None) -> SearchResult[S]:
        """The result with the answer the search holds, if any (``found``), stopped by the budget
        ``which`` (None: the search ended by itself)."""
        node, answer = self.found or (None, None)
        return self.result(node, answer, which)

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
        state, solved = self.root_state()
        node = self.step.nodes.make(state, None, solved=solved)
        self.trace.emit("root", node=node.id, state=self.task.describe(node.state),
                        **({"solved": True} if solved else {}))
        return node

    def root_state(self) -> tuple[S, bool]:
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
        and traced as any answer is, ``end``); else None and the search runs. Every search goes
        through here (``conduct``), a user's own included, so none calls such a puzzle unsolvable."""
        if not self.root_state()[1]:
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

    def cut_at_depth(self, node: Node[S]) -> None:
        """``node`` lies at the search's depth limit and is not expanded: said in the trace (a
        ``cut``, why ``depth``) and remembered where it may lose something (a task that enumerates
        its steps says whether any is left; one that cannot is taken to have some), so that the
        run claims no proof (``proves``)."""
        if not self.depth_cut:
            moves = find(self.task, LegalMoves)
            self.depth_cut = moves is None or bool(moves.legal_thoughts(node.state))
        self.trace.emit("cut", node=node.id, why="depth")

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

    def proves(self, searched_all: bool) -> bool:
        """Whether a search that ``searched_all`` the states it was given, with no answer, has
        proved that none exists: only with an exhaustive generator and no depth cut (an
        enumeration limit's cut is counted in ``result``, which says it)."""
        return searched_all and self.generator.exhaustive and not self.depth_cut

    def result(self, solution: Node[S] | None, answer: str | None, stopped_by: str | None,
               error: str | None = None, searched_all: bool = False,
               extra: SearchExtra | None = None) -> SearchResult[S]:
        """The run's result, traced as its ``end`` event; ``searched_all``: the search ran out of
        states (the run decides whether that is a proof, ``proves``); ``extra``: the search's own
        part of it."""
        report = self.reports.get(answer) if answer is not None else None
        step, limits = self.step, self.step.limits
        # A cut enumeration proves nothing: "no solution exists" only when nothing was cut.
        res = SearchResult(answer, report is not None and report.verified, stopped_by, solution, step.proposed,
                           step.rejected, step.expanded, self.usage, error, solution or self.best, report,
                           answer is None and self.proves(searched_all) and not limits, step.not_tried,
                           "; ".join(limits) if limits else None, extra)
        self.trace.emit("end", **res.summary())
        return res


SearchOrder = Callable[[Run[S], SearchSettings], Awaitable[SearchResult[S]]]
"""A search: ``(run, settings) -> result`` (a built-in search's instance, or a function)."""


class AskTell(Generic[S]):
    """A search as TreeQuest shapes one: its options (the one constructor argument) and its state
    (the fields it declares, typed: a checkpoint saves and reads them, ``solver.searches.
    checkpoint``). ``start`` writes the ``search`` and ``root`` events and sets the state; ``ask``
    names what it wants done next, from its state alone (``solver.step.Expand``, ``Propose``,
    ``Score``; several where it can use them, so that the run sends them to the model together;
    none: it is over); ``tell`` takes their outcomes and moves on, deciding synchronously (no model
    call) until it needs the model again; ``finish`` gives the result (``stopped``: the budget that
    ran out, if one did; by default the answer the run holds, ``Run.found``). The run performs the
    asks through its gated step (``Run.cycle``)."""

    options: Any

    def start(self, run: Run[S], settings: SearchSettings) -> None:
        raise NotImplementedError

    def ask(self) -> Sequence[Ask[S]]:
        raise NotImplementedError

    def tell(self, run: Run[S], outcomes: list[Any]) -> None:
        raise NotImplementedError

    def finish(self, run: Run[S], stopped: str | None) -> SearchResult[S]:
        return run.stop(stopped)

    async def __call__(self, run: Run[S], settings: SearchSettings) -> SearchResult[S]:
        """The whole search on ``run`` (``Run.begin``, then ``Run.cycle`` to the end)."""
        done = run.begin(self, settings)
        return done if done is not None else await run.drive(self)
