"""Breadth-first search with a beam and depth-first search with pruning and backtracking.

Both only see a Task, a generator and an evaluator. Every proposed thought goes through the
task's exact checker before it can be scored or kept, and an answer leaves only after it was
re-verified from the original puzzle text alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from solver.budget import BudgetExhausted, Usage
from solver.capabilities import MissingCapability, Unchecked, find, has, missing_message, require_parts, task_options
from solver.evaluators import Evaluator
from solver.generators import Generator
from solver.lm.client import LMClient
from solver.lm.session import Session, gather_all, trace_sink
from solver.node import Node, NodeFactory
from solver.task import Task, Thought, rule_failure
from solver.trace import Trace
from verifiers.report import AnswerReport
from verifiers.verdict import Invalid, Solved, Valid

__all__ = ["DECIMALS", "SearchResult", "bfs", "dfs", "quantise", "ranked"]

DECIMALS = 3  # scores equal to 3 decimal places are ties, broken by the generator's order


def quantise(score: float | None, decimals: int = DECIMALS) -> float:
    """The score search compares: rounded, so that float noise (another CPU, another BLAS)
    below 10**-decimals cannot reorder states; ties then go to generation order. NaN ranks last."""
    if score is not None and math.isnan(score):
        return -math.inf
    return round(score or 0.0, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def ranked(nodes: Sequence[Node[Any]], decimals: int = DECIMALS) -> list[Node[Any]]:
    """Best first by quantised score; ties keep the given order (generation order)."""
    order = sorted(range(len(nodes)), key=lambda i: (-quantise(nodes[i].score, decimals), i))
    return [nodes[i] for i in order]


@dataclass(slots=True)
class SearchResult:
    answer: str | None
    verified: bool
    stopped_by: str | None = None  # the budget that ended the search, if any
    solution: Node[Any] | None = None
    proposed: int = 0
    rejected: int = 0
    expanded: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    best: Node[Any] | None = None  # the deepest state search reached (first reached on ties)
    report: AnswerReport | None = None  # every check of the answer; verified == report.verified
    # True only when a complete search (solver/complete.py) visited every state of the tree
    # and found no answer, with no budget or depth cut: a proof that none exists.
    exhausted: bool = False

    def summary(self) -> dict[str, object]:
        return {"answer": self.answer, "verified": self.verified,
                "report": self.report.to_json() if self.report is not None else None,
                "stopped_by": self.stopped_by,
                "proposed": self.proposed, "rejected": self.rejected, "expanded": self.expanded,
                "exhausted": self.exhausted, "error": self.error, **self.usage.summary()}


class _Run:
    """Shared machinery of one search: gate, trace and answer re-verification. The run's own
    model session (``model``; None without a client) counts this run's usage against its budget
    and writes this run's failed model calls into its trace, whoever else shares the client."""

    def __init__(self, task: Task[Any], puzzle: str, generator: Generator, evaluator: Evaluator,
                 client: LMClient | None, trace: Trace, usage: Usage, gate: bool = True) -> None:
        _check_client(client)
        require_parts(task, generator, evaluator, model=client)  # one line naming what is missing
        if not gate and not has(task, Unchecked):
            raise MissingCapability(missing_message(task, Unchecked, "a search without the gate (gate=False)"))
        self.task, self.puzzle, self.gate = task, puzzle, gate
        self.generator, self.evaluator = generator, evaluator
        self.trace, self.usage = trace, usage
        self.model: Session | None = None if client is None else client.session(usage, trace_sink(trace))
        self.nodes = NodeFactory()
        self.best: Node[Any] | None = None
        self.reports: dict[str, AnswerReport] = {}
        self.proposed = self.rejected = self.expanded = 0

    def about(self) -> dict[str, Any]:
        """What the ``search`` event records of the run's task and puzzle, so a trace of a search
        called directly (no ``start`` event before it) still says what it searched."""
        return {"task": self.task.name, "puzzle": self.puzzle, "options": task_options(self.task)}

    def root(self) -> Node[Any]:
        node = self.nodes.make(self.task.root(self.puzzle), None)
        self.trace.emit("root", node=node.id, state=self.task.describe(node.state))
        return node

    async def expand(self, node: Node[Any]) -> list[Node[Any]]:
        """Generate, gate and deduplicate the children of ``node``."""
        return self.gate_all(node, await self.generate(node))

    async def generate(self, node: Node[Any]) -> list[Thought]:
        self.usage.check_step()
        self.expanded += 1
        self.trace.emit("expand", node=node.id, depth=node.depth)
        return await self.generator(self.task, node.state, self.model)

    def gate_all(self, node: Node[Any], thoughts: list[Thought]) -> list[Node[Any]]:
        """Gate ``thoughts`` proposed for ``node``. Synchronous, so BFS can gate its frontier in
        order after generating concurrently: node ids and the trace then do not depend on which
        model call finished first (a live run and its replay give the same trace)."""
        children: list[Node[Any]] = []
        seen: set[Any] = set()
        for th in thoughts:
            self.proposed += 1
            verdict = self.task.check(node.state, th)
            gate_reason = None
            unchecked = None if self.gate else find(self.task, Unchecked)
            if isinstance(verdict, Invalid) and unchecked is not None:
                # Gate off (the paper's behaviour; the task is Unchecked, see __init__): trust the
                # model's own account of the next state; only the final answer check stands
                # between it and the user.
                loose = unchecked.apply_unchecked(node.state, th)
                if not isinstance(loose, Invalid):
                    gate_reason, verdict = verdict.reason, loose
            if isinstance(verdict, Invalid):
                self.rejected += 1
                self.trace.emit("proposal", parent=node.id, thought=th.text, prior=th.prior)
                self.trace.emit("verdict", parent=node.id, thought=th.text, verdict="invalid",
                                reason=verdict.reason)
                continue
            assert isinstance(verdict, (Valid, Solved))
            child = self.nodes.make(verdict.state, node, th.text, th.prior,
                                    isinstance(verdict, Solved), verdict.note)
            self.trace.emit("proposal", node=child.id, parent=node.id, depth=child.depth,
                            thought=th.text, prior=th.prior)
            if gate_reason is not None:
                self.trace.emit("verdict", node=child.id, verdict="unchecked", solved=child.solved,
                                reason=gate_reason, state=self.task.describe(child.state))
            else:
                self.trace.emit("verdict", node=child.id, verdict="solved" if child.solved else "valid",
                                reason=verdict.note or None, state=self.task.describe(child.state))
            if child.state in seen:
                self.trace.emit("cut", node=child.id, why="duplicate")
                continue
            seen.add(child.state)
            children.append(child)
        return children

    async def score(self, nodes: list[Node[Any]]) -> None:
        if not nodes:
            return
        results = await self.evaluator(self.task, nodes, self.model)
        for nd, (score, detail) in zip(nodes, results, strict=False):
            nd.score, nd.detail = score, detail
            self.trace.emit("score", node=nd.id, score=score, detail=detail)

    def reach(self, node: Node[Any]) -> None:
        """Remember the deepest node reached (tasks such as crosswords report it when unsolved)."""
        if self.best is None or node.depth > self.best.depth:
            self.best = node

    def first_answer(self, children: list[Node[Any]]) -> tuple[Node[Any], str] | None:
        """The first solved child whose answer the re-check accepts (see ``accept``), if any."""
        for child in children:
            if child.solved:
                answer = self.accept(child)
                if answer is not None:
                    return child, answer
        return None

    def accept(self, node: Node[Any]) -> str | None:
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

    def result(self, solution: Node[Any] | None, answer: str | None, stopped_by: str | None,
               error: str | None = None, exhausted: bool = False) -> SearchResult:
        report = self.reports.get(answer) if answer is not None else None
        res = SearchResult(answer, report is not None and report.verified, stopped_by, solution, self.proposed,
                           self.rejected, self.expanded, self.usage, error, solution or self.best, report,
                           exhausted)
        self.trace.emit("end", **res.summary())
        return res


def _check_client(client: object) -> None:
    """A client is an LMClient (or anything that makes per-run sessions the same way), or None."""
    if client is not None and not callable(getattr(client, "session", None)):
        raise TypeError(f"client must be an LMClient or None, not {type(client).__name__}")


def _run_usage(client: LMClient | None) -> Usage:
    """Fresh counters, without limits, for a run that was given no ``usage``."""
    _check_client(client)
    return Usage(model=client.backend.model if client is not None else "")


async def bfs(task: Task[Any], puzzle: str, generator: Generator, evaluator: Evaluator,
              client: LMClient | None, *, breadth: int = 5, depth: int | None = None,
              early_stop: bool = True, trace: Trace | None = None,
              usage: Usage | None = None, gate: bool = True) -> SearchResult:
    """BFS with beam ``breadth`` for ``depth`` levels (default: the task's maximum).
    ``gate=False`` lets rejected thoughts in through the task's ``apply_unchecked`` (ablation)."""
    trace = trace or Trace()
    usage = usage or _run_usage(client)
    if breadth < 1:
        raise ValueError(f"breadth must be at least 1, not {breadth}")
    run = _Run(task, puzzle, generator, evaluator, client, trace, usage, gate)
    trace.emit("search", **run.about(), method="tot-bfs", breadth=breadth, depth=depth or task.max_depth,
               generator=generator.name, evaluator=evaluator.name)
    frontier = [run.root()]
    run.reach(frontier[0])
    found: tuple[Node[Any], str] | None = None
    try:
        for _level in range(depth or task.max_depth):
            proposals = await gather_all(*(run.generate(nd) for nd in frontier))
            groups = [run.gate_all(nd, ths) for nd, ths in zip(frontier, proposals, strict=True)]
            candidates: list[Node[Any]] = []
            seen: set[Any] = set()
            for group in groups:
                for child in group:
                    if child.state in seen:
                        trace.emit("cut", node=child.id, why="duplicate")
                        continue
                    seen.add(child.state)
                    candidates.append(child)
            solved = [c for c in candidates if c.solved]
            if len(solved) > 1 and found is None:
                # Several verified solutions at once (e.g. passages that all pass the gate): let
                # the evaluator choose among them, as the paper's vote does at the last step.
                await run.score(solved)
                solved = ranked(solved)
            for child in solved:
                if found is None:
                    answer = run.accept(child)
                    if answer is not None:
                        found = (child, answer)
            if found is not None and early_stop:
                break
            open_nodes = [c for c in candidates if not c.solved]
            if not open_nodes:
                break
            await run.score(open_nodes)
            # Quantised scores, stable order: ties keep generation order, and the trace says a
            # tie decided it.
            order = ranked(open_nodes)
            frontier = order[:breadth]
            for nd in frontier[:1]:
                run.reach(nd)
            cutoff = quantise(frontier[-1].score) if frontier else None
            for nd in frontier:
                trace.emit("keep", node=nd.id, score=nd.score)
            for nd in order[breadth:]:
                trace.emit("cut", node=nd.id, why="beam", score=nd.score, tie=quantise(nd.score) == cutoff)
    except BudgetExhausted as exc:
        return run.result(found[0] if found else None, found[1] if found else None, exc.which)
    return run.result(found[0] if found else None, found[1] if found else None, None)


async def dfs(task: Task[Any], puzzle: str, generator: Generator, evaluator: Evaluator,
              client: LMClient | None, *, depth: int | None = None, prune_below: float | None = None,
              max_children: int | None = None, trace: Trace | None = None,
              usage: Usage | None = None, gate: bool = True) -> SearchResult:
    """DFS: children in non-increasing score order; a child scoring below ``prune_below`` is
    pruned; an exhausted subtree backtracks to its parent, whose state is still held as it was.
    ``max_children`` caps how many children of one node are tried (Long's C)."""
    trace = trace or Trace()
    usage = usage or _run_usage(client)
    run = _Run(task, puzzle, generator, evaluator, client, trace, usage, gate)  # checks the task first
    threshold = evaluator.prune_below if prune_below is None else prune_below
    max_depth = depth or task.max_depth
    trace.emit("search", **run.about(), method="tot-dfs", depth=max_depth, prune_below=threshold,
               generator=generator.name, evaluator=evaluator.name)

    async def visit(node: Node[Any]) -> tuple[Node[Any], str] | None:
        run.reach(node)
        children = await run.expand(node)
        hit = run.first_answer(children)
        if hit is not None:
            return hit
        open_nodes = [c for c in children if not c.solved]
        await run.score(open_nodes)
        tried = 0
        for child in ranked(open_nodes):
            if quantise(child.score) < threshold:
                trace.emit("cut", node=child.id, why="pruned", score=child.score)
                continue
            if child.depth >= max_depth or (max_children is not None and tried >= max_children):
                trace.emit("cut", node=child.id, why="depth" if child.depth >= max_depth else "children")
                continue
            tried += 1
            trace.emit("keep", node=child.id, score=child.score)
            hit = await visit(child)
            if hit is not None:
                return hit
            trace.emit("backtrack", node=child.id, to=node.id, state=task.describe(node.state))
        return None

    try:
        hit = await visit(run.root())
    except BudgetExhausted as exc:
        return run.result(None, None, exc.which)
    return run.result(hit[0] if hit else None, hit[1] if hit else None, None)
