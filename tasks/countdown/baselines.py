"""The Countdown baselines part (``solver.baselines``): IO, CoT and refine prompts under the task's
rules, the answer parser, the stop strings and the steps of a chain of thought."""

from __future__ import annotations

from solver.task import Thought
from tasks.countdown import prompts
from tasks.countdown.parts import parse_proposals
from tasks.countdown.state import parse_puzzle
from verifiers import countdown as cd
from verifiers.arithmetic import before_answer_line, stated_answer

__all__ = ["Baselines"]


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


class Baselines:
    """BaselinePrompts, RefinePrompt, AnswerParser, BaselineStops and ChainSteps under ``rules``."""

    baseline_stop = prompts.BASELINE_STOP

    def __init__(self, rules: cd.Rules) -> None:
        self.rule_line = prompts.RULE_LINES[rules]

    def _fill(self, template: str, puzzle: str, chat: bool, **more: str) -> str:
        numbers, target = parse_puzzle(puzzle)
        body = template.format(rules=self.rule_line, numbers=" ".join(map(str, numbers)), target=target, **more)
        return prompts.ANSWER_CHAT_PREFIX.format(rules=self.rule_line) + body if chat else body

    def io_prompt(self, puzzle: str, chat: bool) -> str:
        return self._fill(prompts.IO_FEWSHOT, puzzle, chat)

    def cot_prompt(self, puzzle: str, chat: bool) -> str:
        return self._fill(prompts.COT_FEWSHOT, puzzle, chat)

    def refine_prompt(self, puzzle: str, attempt: str, feedback: str, chat: bool) -> str:
        return self._fill(prompts.REFINE_FEWSHOT, puzzle, chat, attempt=_one_line(attempt),
                          feedback=_one_line(feedback))

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The answer of ``text`` as the rewards and ``tot verify countdown`` read it
        (``verifiers.arithmetic.read_expression``); a stated result equal to the target is dropped,
        any other kept so that the check refuses it. Unchecked: the caller verifies."""
        return stated_answer(text, parse_puzzle(puzzle)[1])

    def chain_thoughts(self, puzzle: str, text: str) -> list[Thought]:
        """The steps of a chain of thought, before its answer line (for failure analysis)."""
        parse_puzzle(puzzle)  # a malformed puzzle fails here, as the search's root would
        return parse_proposals(before_answer_line(text))
