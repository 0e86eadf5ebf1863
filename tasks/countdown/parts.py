"""The model-facing parts of the Countdown task: the search prompts and their parsers, the short
training prompts, the grammar of legal steps, and restore from a trace (for ``tot audit``)."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Sequence

from solver.grammar import alternation, arithmetic_answer, expression_rules, grammar, literal
from solver.task import Thought
from tasks.countdown import prompts
from tasks.countdown.state import CountdownState, parse_puzzle
from verifiers import countdown as cd
from verifiers.arithmetic import format_number, parse_number

__all__ = ["AnswerGrammarPart", "LegalStepGrammar", "RestoreNumbers", "SearchPrompts", "ShortPrompts",
           "expression_rules", "parse_proposals", "step_lines"]

# A bullet is not the sign of a negative first operand: "-1 * 1 = -1" keeps its minus.
_LINE_PREFIX = re.compile(r"^\s*(?:[-*\u2022](?![0-9])\s*|\d+[.)]\s+|step\s*\d*\s*:\s*|next step\s*:\s*)",
                          re.IGNORECASE)
_LABEL = re.compile(r"\b(sure|likely|impossible)\b")
_MAX_LINES, _MAX_LINE = 40, 200


def parse_proposals(text: str) -> list[Thought]:
    """Candidate steps in model text, one a line, list markers dropped; reading stops at the next
    few-shot block (a line starting ``Input`` or ``Target``). Unchecked: the gate checks each."""
    out = []
    for line in text.splitlines()[:_MAX_LINES]:
        if line.strip().lower().startswith(("input", "target")):
            break
        line = _LINE_PREFIX.sub("", line).strip()
        if "=" in line and len(line) <= _MAX_LINE:
            out.append(Thought(line))
    return out


class SearchPrompts:
    """ProposePrompts, SamplePrompts, ChoicePrompt, ValuePrompts and VotePrompt under ``rules``."""

    def __init__(self, rules: cd.Rules) -> None:
        self.rules: cd.Rules = rules
        self.rule_line = prompts.RULE_LINES[rules]

    def _chat(self, body: str, chat: bool) -> str:
        return prompts.CHAT_PREFIX.format(rules=self.rule_line) + body if chat else body

    def propose_prompt(self, state: Any, chat: bool) -> str:
        body = prompts.PROPOSE_FEWSHOT.format(rules=self.rule_line, numbers=state.text(), target=state.target)
        return self._chat(body, chat)

    def sample_prompt(self, state: Any, chat: bool) -> str:
        body = prompts.SAMPLE_FEWSHOT.format(rules=self.rule_line, numbers=state.text(), target=state.target)
        return self._chat(body, chat)

    def choice_prompt(self, state: Any, thoughts: Sequence[Thought], chat: bool) -> str:
        options = "\n".join(f"{k}. {t.text}" for k, t in enumerate(thoughts, 1))
        return prompts.CHOICE_FEWSHOT.format(numbers=state.text(), target=state.target, options=options)

    def parse_proposals(self, state: Any, text: str) -> list[Thought]:
        return parse_proposals(text)

    def value_prompt(self, state: Any, chat: bool) -> str:
        return prompts.VALUE_FEWSHOT.format(rules=self.rule_line, numbers=state.text(), target=state.target)

    def parse_value(self, text: str) -> str | None:
        m = _LABEL.search(text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[Any], chat: bool) -> str:
        choices = "\n".join(f"Choice {k}: {s.text()}" for k, s in enumerate(states, 1))
        target = states[0].target if states else ""
        return prompts.VOTE_FEWSHOT.format(rules=self.rule_line, target=target, choices=choices)


class ShortPrompts:
    """TrainingPrompts: the zero-shot prompts of ``tot export countdown`` (labels `` sure`` /
    `` impossible``, steps in the gate's form)."""

    def train_value_prompt(self, state: Any) -> str:
        return prompts.TRAIN_VALUE.format(numbers=state.text(), target=state.target)

    def train_step_prompt(self, state: Any) -> str:
        return prompts.TRAIN_STEP.format(numbers=state.text(), target=state.target)


def step_lines(numbers: tuple[Fraction, ...], rules: cd.Rules) -> list[str]:
    """Every legal step line of ``numbers`` under ``rules``, left list sorted; ``+`` and ``*``
    in both operand orders (the gate accepts both)."""
    out: list[str] = []
    for i, j, op, r in cd.legal_steps(numbers, rules):
        out.append(cd.step_text(numbers, i, j, op, r))
        if op in "+*" and numbers[i] != numbers[j]:
            out.append(cd.step_text(numbers, j, i, op, r))
    return out


class LegalStepGrammar:
    """ThoughtGrammar: exactly the legal steps of a state under ``rules``, as GBNF."""

    def __init__(self, rules: cd.Rules) -> None:
        self.rules: cd.Rules = rules

    def thought_grammar(self, state: Any) -> str | None:
        """GBNF of one legal step; None when no step is legal (one number left, or none under
        television rules) or the state is solved."""
        if cd.is_solved(state.numbers, state.target, self.rules):
            return None
        lines = step_lines(tuple(state.numbers), self.rules)
        return grammar({"root": alternation(literal(t) for t in lines)}) if lines else None


class AnswerGrammarPart:
    """AnswerGrammar: a baseline's output, ``Answer: EXPR = TARGET`` (after CoT's step lines), EXPR
    any expression over exactly the puzzle's numbers (``once``) or over any non-empty subset of them
    (television rules; two or more), each at most once. A superset of the valid answers: the grammar fixes the
    numbers and the form, not the value, so the exact check still decides."""

    def __init__(self, rules: cd.Rules) -> None:
        self.rules: cd.Rules = rules

    def answer_grammar(self, puzzle: str, cot: bool) -> str | None:
        try:
            nums, target = parse_puzzle(puzzle)
        except ValueError:
            return None
        full = (1 << len(nums)) - 1
        # television rules: two numbers or more (a lone number is a puzzle solved before it starts)
        masks = [full] if self.rules == "once" else [m for m in range(1, full + 1) if m & (m - 1)]
        return arithmetic_answer(nums, masks, target, cot)


class RestoreNumbers:
    """Restorable: the state ``describe`` wrote (its numbers, e.g. ``4/5 6 10``) under the
    puzzle's target, for audits. Equal to the original state; expressions are the bare numbers."""

    def restore(self, puzzle: str, description: str) -> CountdownState:
        _, target = parse_puzzle(puzzle)
        parts = description.split()
        if not 1 <= len(parts) <= cd.MAX_NUMBERS:
            raise ValueError(f"not a Countdown state: {description[:40]!r}")
        numbers = sorted(parse_number(p) for p in parts)
        return CountdownState(tuple(numbers), target, tuple(format_number(n) for n in numbers))
