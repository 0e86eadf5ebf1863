"""The Game-of-24 baselines part (``solver.baselines``): the paper's IO, CoT and refine
prompts, the answer parser, the stop strings and the steps of a chain of thought."""

from __future__ import annotations

import re

from solver.task import Thought
from tasks.game24 import prompts
from tasks.game24.parts import parse_proposals
from tasks.game24.state import TARGET, root_state
from verifiers.arithmetic import read_expression

__all__ = ["Baselines"]

_ANSWER_LINE = re.compile(r"^answer\s*:\s*(.*)$", re.IGNORECASE)


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
        found = read_expression(text)
        if found is None:
            return None
        lhs, eq, rhs = found.partition("=")
        expr = lhs.strip() if eq and rhs.strip() == str(TARGET) else found
        return expr[:300] or None

    def chain_thoughts(self, puzzle: str, text: str) -> list[Thought]:
        """The steps of a chain of thought, before its answer line (for failure analysis)."""
        root_state(puzzle)  # a malformed puzzle fails here, as the search's root would
        head = []
        for ln in text.splitlines():
            if _ANSWER_LINE.match(ln.strip()):
                break
            head.append(ln)
        return parse_proposals("\n".join(head))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]
