"""The Game-of-24 baselines part (``solver.baselines``): the paper's IO, CoT and refine
prompts, the answer parser, the stop strings and the steps of a chain of thought."""

from __future__ import annotations

from solver.task import Thought
from tasks.game24 import prompts
from tasks.game24.parts import parse_proposals
from tasks.game24.state import TARGET, root_state
from verifiers.arithmetic import before_answer_line, stated_answer

__all__ = ["Baselines"]


class Baselines:
    """BaselinePrompts, RefinePrompt, AnswerParser, BaselineStops and ChainSteps."""

    baseline_stop = prompts.BASELINE_STOP

    def io_prompt(self, puzzle: str, chat: bool) -> str:
        body = prompts.IO_FEWSHOT.format(numbers=root_state(puzzle).text())
        return prompts.ANSWER_CHAT_PREFIX + body if chat else body

    def cot_prompt(self, puzzle: str, chat: bool) -> str:
        body = prompts.COT_FEWSHOT.format(numbers=root_state(puzzle).text())
        return prompts.ANSWER_CHAT_PREFIX + body if chat else body

    def refine_prompt(self, puzzle: str, attempt: str, feedback: str, chat: bool) -> str:
        body = prompts.REFINE_FEWSHOT.format(numbers=root_state(puzzle).text(), attempt=_one_line(attempt),
                                             feedback=_one_line(feedback))
        return prompts.ANSWER_CHAT_PREFIX + body if chat else body

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The answer of ``text`` as every reader of this project finds it
        (``verifiers.arithmetic.read_expression``: the last marked answer, ``Answer:`` line or tag,
        else the last line of arithmetic that is not a step; after an IO prompt that ends in
        ``Answer:``, that is the first line); None when there is none. A stated ``= 24`` is
        dropped, a wrong stated result kept so that the check can say so. Unchecked: the caller
        verifies."""
        return stated_answer(text, TARGET)

    def chain_thoughts(self, puzzle: str, text: str) -> list[Thought]:
        """The steps of a chain of thought, before its answer line (for failure analysis)."""
        root_state(puzzle)  # a malformed puzzle fails here, as the search's root would
        return parse_proposals(before_answer_line(text))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]
