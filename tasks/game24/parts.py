"""The optional parts of the Game-of-24 task, each a small object the task composes: its legal
steps, the search prompts and their parsers, the exact oracle, restore from a trace, the paper's
unchecked mode and the options that rebuild the task (``solver.task_capabilities`` names each)."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Sequence

from solver.task import Thought
from tasks.game24 import prompts
from tasks.game24.state import TARGET, State24, wrap
from verifiers.arithmetic import Policy, can_reach, format_number, legal_steps, parse_number, parse_step
from verifiers.verdict import Invalid, Solved, Valid, Verdict

__all__ = ["GateOptions", "LegalSteps", "Reach24", "RestoreNumbers", "SearchPrompts", "ShortPrompts", "TrustedSteps",
           "parse_proposals"]

# A bullet is not the sign of a negative first operand: "-1 * 1 = -1" keeps its minus.
_LINE_PREFIX = re.compile(r"^\s*(?:[-*\u2022](?![0-9])\s*|\d+[.)]\s+|step\s*\d*\s*:\s*|next step\s*:\s*)",
                          re.IGNORECASE)


class LegalSteps:
    """LegalMoves: every step the checker accepts, written as the model is asked to write it."""

    def legal_thoughts(self, state: State24) -> Sequence[Thought]:
        out = []
        for i, j, op, r in legal_steps(state.numbers):
            rest = [n for k, n in enumerate(state.numbers) if k not in (i, j)] + [r]
            left = " ".join(format_number(n) for n in sorted(rest))
            a, b = format_number(state.numbers[i]), format_number(state.numbers[j])
            out.append(Thought(f"{a} {op} {b} = {format_number(r)} (left: {left})"))
        return out


def parse_proposals(text: str) -> list[Thought]:
    """Candidate steps in model text, one per line, list markers dropped (unchecked)."""
    out = []
    for line in text.splitlines()[:40]:
        if line.strip().lower().startswith("input"):
            break
        line = _LINE_PREFIX.sub("", line).strip()
        if "=" in line and len(line) <= 200:
            out.append(Thought(line))
    return out


class SearchPrompts:
    """ProposePrompts, SamplePrompts, ChoicePrompt, ValuePrompts and VotePrompt: the paper's
    few-shot prompts and their parsers."""

    def propose_prompt(self, state: State24, chat: bool) -> str:
        body = prompts.PROPOSE_FEWSHOT.format(numbers=state.text())
        return prompts.CHAT_PREFIX + body if chat else body

    def choice_prompt(self, state: State24, thoughts: Sequence[Thought], chat: bool) -> str:
        options = "\n".join(f"{k}. {t.text}" for k, t in enumerate(thoughts, 1))
        return prompts.CHOICE_FEWSHOT.format(numbers=state.text(), options=options)

    def sample_prompt(self, state: State24, chat: bool) -> str:
        body = prompts.SAMPLE_FEWSHOT.format(numbers=state.text())
        return prompts.CHAT_PREFIX + body if chat else body

    def parse_proposals(self, state: State24, text: str) -> list[Thought]:
        return parse_proposals(text)

    def value_prompt(self, state: State24, chat: bool) -> str:
        return prompts.VALUE_FEWSHOT.format(numbers=state.text())

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[State24], chat: bool) -> str:
        choices = "\n".join(f"Choice {k}: {s.text()}" for k, s in enumerate(states, 1))
        return prompts.VOTE_FEWSHOT.format(choices=choices)


class ShortPrompts:
    """TrainingPrompts: the zero-shot prompts of ``tot export game24`` and of the adapters trained
    on its data (``tot train game24``); labels ` sure`/` impossible`, steps in the gate's form."""

    def train_value_prompt(self, state: State24) -> str:
        return prompts.TRAIN_VALUE.format(numbers=state.text())

    def train_step_prompt(self, state: State24) -> str:
        return prompts.TRAIN_STEP.format(numbers=state.text())


class Reach24:
    """HasOracle: can the numbers still make 24 (exact search over fractions)."""

    def oracle(self, state: State24) -> bool:
        return can_reach(state.numbers, TARGET)


class RestoreNumbers:
    """Restorable: the state ``describe`` wrote as e.g. ``4/5 6 10`` (for audits). Equal to the
    original state; its expressions are the bare numbers and its step history is lost."""

    def restore(self, puzzle: str, description: str) -> State24:
        parts = description.split()
        if not 1 <= len(parts) <= 4:
            raise ValueError(f"not a Game-of-24 state: {description[:40]!r}")
        numbers = sorted(parse_number(p) for p in parts)
        return State24(tuple(numbers), tuple(format_number(n) for n in numbers))


class TrustedSteps:
    """Unchecked: the paper's unchecked step, for the no-gate ablation."""

    def apply_unchecked(self, state: State24, thought: Thought) -> Verdict[State24]:
        """The model's stated left list becomes the next state, true or not. Expressions follow
        the stated operands where they exist, so the final answer check still catches any
        invented number. Invalid only when there is no left list to trust."""
        try:
            a, op, b, c, left = parse_step(thought.text)
        except ValueError as exc:
            return Invalid(str(exc))
        if not left:
            return Invalid("no '(left: ...)' list to trust")
        pool = list(zip(state.numbers, state.exprs, strict=False))

        def take(x: Fraction) -> str:
            for k, (n, e) in enumerate(pool):
                if n == x:
                    del pool[k]
                    return e
            return format_number(x)

        result_expr = f"{wrap(take(a))} {op} {wrap(take(b))}"
        items: list[tuple[Fraction, str]] = []
        for x in left:
            if x == c and result_expr:
                items.append((x, result_expr))
                result_expr = ""
            else:
                items.append((x, take(x)))
        items.sort(key=lambda p: p[0])
        new = State24(tuple(n for n, _ in items), tuple(e for _, e in items),
                      state.steps + (thought.text.strip(),))
        if len(new.numbers) == 1 and new.numbers[0] == TARGET:
            return Solved(new, "unchecked")
        return Valid(new, "unchecked")


class GateOptions:
    """HasOptions: what rebuilds the task (recorded in traces): the gate's policy."""

    def __init__(self, policy: Policy) -> None:
        self.policy: Policy = policy

    def options(self) -> dict[str, Any]:
        return {"policy": self.policy}
