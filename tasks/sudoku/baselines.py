"""Long (2023)'s baselines: zero-, one- and few-shot prompting for the whole solution in one
answer, as this task's own baselines (the ``ShotBaselines`` part). The core's ``BaselineRun``
(solver/baselines.py) reads the answer, counts it, traces it and gates it: it counts only
after the exact check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from tasks.sudoku import prompts
from tasks.sudoku.parts import first_board
from tasks.sudoku.state import SudokuState, prompt_rules, read_givens
from verifiers.sudoku import format_board

if TYPE_CHECKING:
    from solver.baselines import BaselineRun

__all__ = ["BASELINES", "BASELINE_SHOTS", "ShotBaselines", "shot_baseline", "solution_prompt"]

BASELINE_SHOTS = {"zero-shot": 0, "one-shot": 1, "few-shot": 3}
BASELINES = tuple(BASELINE_SHOTS)


def solution_prompt(puzzle: str, style: str, chat: bool, boxes: bool = True) -> str:
    """A baseline prompt asking for the whole solution: zero-, one- or few-shot."""
    if style not in BASELINE_SHOTS:
        raise ValueError(f"unknown baseline {style!r}; choose one of {', '.join(BASELINE_SHOTS)}")
    board = read_givens(puzzle, boxes)
    shots = prompts.SOLUTION_EXAMPLES[:BASELINE_SHOTS[style]]
    examples = "".join(f"Board: {b}\nSolution: {s}\n\n" for b, s in shots)
    body = prompts.SOLUTION.format(rules=prompt_rules(len(board), boxes), examples=examples,
                                   board=format_board(board))
    return prompts.CHAT_PREFIX + body if chat else body


def shot_baseline(style: str, boxes: bool = True) -> Callable[[BaselineRun], Awaitable[str | None]]:
    """The ``style`` baseline (zero-shot, one-shot, few-shot): one greedy answer for the whole
    board (``temperature=0``: one answer, so no sampling to average), its first board checked."""
    if style not in BASELINE_SHOTS:
        raise ValueError(f"unknown baseline {style!r}; choose one of {', '.join(BASELINE_SHOTS)}")

    async def run_style(run: BaselineRun) -> str | None:
        prompt = solution_prompt(run.puzzle, style, run.cfg.chat, boxes)
        n = len(read_givens(run.puzzle, boxes))
        texts = await run.ask(prompt, 1, 16 + 3 * n * (n + 2), "solution", temperature=0.0,
                              grammar=run.answer_grammar(False))
        answer, problem = run.read(texts[0] if texts else "")
        return answer if problem is None else None

    return run_style


class ShotBaselines:
    """OwnBaselines, AnswerParser and BaselineStops: Long's zero-, one- and few-shot prompts."""

    baseline_stop = ("\n",)  # the answer is one line of JSON

    def __init__(self, boxes: bool) -> None:
        self.boxes = boxes

    @property
    def own_baselines(self) -> dict[str, Callable[[BaselineRun], Awaitable[str | None]]]:
        return {style: shot_baseline(style, self.boxes) for style in BASELINES}

    def solution_prompt(self, puzzle: str, style: str, chat: bool) -> str:
        """The whole-solution prompt of baseline ``style`` for this rule set."""
        return solution_prompt(puzzle, style, chat, self.boxes)

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The first board in a whole-solution answer (unchecked); None when there is none."""
        board = read_givens(puzzle, self.boxes)
        thoughts = first_board(SudokuState(board, board), text)[:1]
        return thoughts[0].text if thoughts else None
