"""Long (2023)'s baselines: zero-, one- and few-shot prompting for the whole solution in one
answer, as this task's own baselines (``Sudoku.own_baselines``). The core's ``BaselineRun``
(solver/baselines.py) reads the answer, counts it, traces it and gates it: it counts only
after the exact check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from tasks.sudoku.prompts import BASELINE_SHOTS

if TYPE_CHECKING:
    from solver.baselines import BaselineRun

BASELINES = tuple(BASELINE_SHOTS)


def shot_baseline(style: str) -> Callable[[BaselineRun], Awaitable[str | None]]:
    """The ``style`` baseline (zero-shot, one-shot, few-shot): one greedy answer for the whole
    board (``temperature=0``: one answer, so no sampling to average), its first board checked."""
    if style not in BASELINE_SHOTS:
        raise ValueError(f"unknown baseline {style!r}; choose one of {', '.join(BASELINE_SHOTS)}")

    async def run_style(run: BaselineRun) -> str | None:
        prompt = run.task.solution_prompt(run.puzzle, style, run.cfg.chat)
        n = len(run.task.givens(run.puzzle))
        texts = await run.ask(prompt, 1, 16 + 3 * n * (n + 2), "solution", temperature=0.0)
        answer, problem = run.read(texts[0] if texts else "")
        return answer if problem is None else None

    return run_style
