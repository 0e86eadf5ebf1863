"""Long (2023)'s baselines: zero-, one- and few-shot prompting for the whole solution in one
answer. The answer is gated like everything else: it counts only after the exact check."""

from __future__ import annotations

from solver.budget import BudgetExhausted, Usage
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.lm.session import trace_sink
from solver.search import SearchResult
from solver.trace import Trace
from tasks.sudoku.task import BASELINE_SHOTS, Sudoku

BASELINES = tuple(BASELINE_SHOTS)


async def run_baseline(task: Sudoku, puzzle: str, style: str, client: LMClient, *, seed: int | None = 0,
                       temperature: float = 0.0, chat: bool = False, trace: Trace | None = None,
                       usage: Usage | None = None) -> SearchResult:
    """One model answer for the whole board; the first board in it is checked from the puzzle
    text alone. Greedy by default (``temperature=0``): one answer, so no sampling to average."""
    prompt = task.solution_prompt(puzzle, style, chat)  # ValueError on a bad style or puzzle
    n = len(task.givens(puzzle))
    trace = trace or Trace()
    usage = usage or Usage(model=client.backend.model)
    model = client.session(usage, trace_sink(trace))
    trace.emit("start", task=task.name, puzzle=puzzle, options=task.options(), method=style)
    trace.emit("search", method=style, generator="solution", evaluator=None)
    params = GenParams(n=1, temperature=temperature, max_tokens=16 + 3 * n * (n + 2), seed=seed,
                       stop=("\n",), chat=chat)
    proposed = rejected = 0
    answer: str | None = None
    stopped: str | None = None
    try:
        texts = await model.complete(prompt, params, "solution")
        root = task.root(puzzle)
        for text in texts:
            thoughts = task.parse_proposals(root, text)[:1]
            proposed += 1
            if not thoughts:
                rejected += 1
                trace.emit("proposal", parent=0, thought=text[:200])
                trace.emit("verdict", parent=0, thought=text[:200], verdict="invalid",
                           reason="no board in the answer")
                continue
            board = thoughts[0].text
            trace.emit("proposal", parent=0, thought=board)
            problem = task.verify_answer(puzzle, board)
            if problem is not None:
                rejected += 1
                trace.emit("verdict", parent=0, thought=board, verdict="invalid", reason=problem.reason)
                continue
            trace.emit("verdict", parent=0, thought=board, verdict="solved")
            answer = board
            report = task.report_answer(puzzle, board)
            trace.emit("answer", answer=answer, verified=report.verified, accepted=True, report=report.to_json())
    except BudgetExhausted as exc:
        stopped = exc.which
    final = task.report_answer(puzzle, answer) if answer is not None else None
    res = SearchResult(answer, final is not None and final.verified, stopped, None, proposed, rejected, 0, usage,
                       report=final)
    trace.emit("end", **res.summary())
    return res
