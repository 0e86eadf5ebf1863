"""Game of 24 as a Task: states are exact multisets of rationals with the expressions behind them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

from solver.task import Thought
from tasks.game24 import prompts
from tasks.game24.grammar import Game24Grammar
from verifiers.arithmetic import (
    RULES_24,
    Policy,
    can_reach,
    check_step,
    format_number,
    legal_steps,
    parse_number,
    parse_step,
    report_answer,
)
from verifiers.report import AnswerReport, Check, as_invalid
from verifiers.verdict import Invalid, Solved, Valid, Verdict

TARGET = 24
MAX_INPUT = 1000


@dataclass(frozen=True, slots=True)
class State24:
    """The numbers still in play, sorted. Two states with the same numbers are the same state;
    ``exprs`` (one expression of the puzzle's numbers per entry) and ``steps`` are history."""

    numbers: tuple[Fraction, ...]
    exprs: tuple[str, ...] = field(compare=False)
    steps: tuple[str, ...] = field(default=(), compare=False)

    def text(self) -> str:
        return " ".join(format_number(n) for n in self.numbers)


def parse_puzzle(text: str) -> tuple[int, ...]:
    """Four whole numbers separated by spaces or commas; ValueError with a one-line reason."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty puzzle: give four whole numbers, e.g. \"4 9 10 13\"")
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if len(parts) != 4:
        raise ValueError(f"a Game-of-24 puzzle has four numbers; got {len(parts)} in {text.strip()[:40]!r}")
    nums = []
    for p in parts:
        if not re.fullmatch(r"[0-9]{1,4}", p):
            raise ValueError(f"{p[:20]!r} is not a whole number between 0 and {MAX_INPUT}")
        v = int(p)
        if v > MAX_INPUT:
            raise ValueError(f"{v} is larger than {MAX_INPUT}")
        nums.append(v)
    return tuple(nums)


def _wrap(expr: str) -> str:
    return expr if re.fullmatch(r"[0-9]+", expr) else f"({expr})"


# A bullet is not the sign of a negative first operand: "-1 * 1 = -1" keeps its minus.
_LINE_PREFIX = re.compile(r"^\s*(?:[-*\u2022](?![0-9])\s*|\d+[.)]\s+|step\s*\d*\s*:\s*|next step\s*:\s*)",
                          re.IGNORECASE)


class Game24:
    """The Game-of-24 task. ``policy`` is the checker's stance on wrong stated facts."""

    name = "game24"
    max_depth = 3

    def __init__(self, policy: Policy = "reject") -> None:
        self.policy: Policy = policy
        self.parts = (*getattr(self, "parts", ()), Game24Grammar())

    def root(self, puzzle: str) -> State24:
        nums = parse_puzzle(puzzle)
        pairs = sorted((Fraction(n), str(n)) for n in nums)
        return State24(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))

    def depth(self, state: State24) -> int:
        return len(state.steps)

    def check(self, state: State24, thought: Thought) -> Verdict[State24]:
        if len(state.numbers) < 2:
            return Invalid("no step is possible: one number is left")
        step = check_step(state.numbers, thought.text, self.policy)
        if isinstance(step, Invalid):
            return step
        return self._apply(state, step.i, step.j, step.op, step.result, step.note)

    def _apply(self, state: State24, i: int, j: int, op: str, result: Fraction, note: str = "") -> Verdict[State24]:
        a, b = state.numbers[i], state.numbers[j]
        expr = f"{_wrap(state.exprs[i])} {op} {_wrap(state.exprs[j])}"
        canon = f"{format_number(a)} {op} {format_number(b)} = {format_number(result)}"
        items = [(n, e) for k, (n, e) in enumerate(zip(state.numbers, state.exprs, strict=False)) if k not in (i, j)]
        items.append((result, expr))
        items.sort(key=lambda p: p[0])
        left = " ".join(format_number(n) for n, _ in items)
        new = State24(tuple(n for n, _ in items), tuple(e for _, e in items),
                      state.steps + (f"{canon} (left: {left})",))
        if len(new.numbers) == 1 and new.numbers[0] == TARGET:
            return Solved(new, note)
        return Valid(new, note)

    def legal_thoughts(self, state: State24) -> Sequence[Thought]:
        out = []
        for i, j, op, r in legal_steps(state.numbers):
            rest = [n for k, n in enumerate(state.numbers) if k not in (i, j)] + [r]
            left = " ".join(format_number(n) for n in sorted(rest))
            a, b = format_number(state.numbers[i]), format_number(state.numbers[j])
            out.append(Thought(f"{a} {op} {b} = {format_number(r)} (left: {left})"))
        return out

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
        out = []
        for line in text.splitlines()[:40]:
            if line.strip().lower().startswith("input"):
                break
            line = _LINE_PREFIX.sub("", line).strip()
            if "=" in line and len(line) <= 200:
                out.append(Thought(line))
        return out

    def value_prompt(self, state: State24, chat: bool) -> str:
        return prompts.VALUE_FEWSHOT.format(numbers=state.text())

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[State24], chat: bool) -> str:
        choices = "\n".join(f"Choice {k}: {s.text()}" for k, s in enumerate(states, 1))
        return prompts.VOTE_FEWSHOT.format(choices=choices)

    def oracle(self, state: State24) -> bool:
        return can_reach(state.numbers, TARGET)

    def answer(self, state: State24) -> str:
        expr = state.exprs[0]
        return expr[1:-1] if expr.startswith("(") and _balanced(expr[1:-1]) else expr

    def options(self) -> dict[str, Any]:
        """What rebuilds this task (recorded in traces): the gate's policy."""
        return {"policy": self.policy}

    def rules(self, puzzle: str) -> str:
        return RULES_24.format(target=TARGET)

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every exact check of ``answer`` from the puzzle text alone."""
        try:
            nums = parse_puzzle(puzzle)
        except ValueError as exc:
            return AnswerReport(RULES_24.format(target=TARGET),
                                (Check("the puzzle is four whole numbers", False, str(exc)),))
        return report_answer(nums, answer, TARGET)

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        report = self.report_answer(puzzle, answer)
        return as_invalid(report)

    # ---- baselines (solver/tools/baselines.py) and the gate ablation (search with gate=False) ----

    baseline_stop = prompts.BASELINE_STOP

    def io_prompt(self, puzzle: str, chat: bool) -> str:
        body = prompts.IO_FEWSHOT.format(numbers=self.root(puzzle).text())
        return prompts.ANSWER_CHAT_PREFIX + body if chat else body

    def cot_prompt(self, puzzle: str, chat: bool) -> str:
        body = prompts.COT_FEWSHOT.format(numbers=self.root(puzzle).text())
        return prompts.ANSWER_CHAT_PREFIX + body if chat else body

    def refine_prompt(self, puzzle: str, attempt: str, feedback: str, chat: bool) -> str:
        body = prompts.REFINE_FEWSHOT.format(numbers=self.root(puzzle).text(), attempt=_one_line(attempt),
                                             feedback=_one_line(feedback))
        return prompts.ANSWER_CHAT_PREFIX + body if chat else body

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The expression of the first ``Answer:`` line (or, after an IO prompt that ends in
        ``Answer:``, the first line); None when there is none. Unchecked: the caller verifies."""
        lines = [ln.strip() for ln in text.splitlines()]
        found = next((m.group(1) for ln in lines if (m := _ANSWER_LINE.match(ln))), None)
        if found is None:
            first = next((ln for ln in lines if ln), "")
            if not first or "left" in first.lower() or first.lower().startswith(("input", "steps")):
                return None
            found = first
        lhs, eq, rhs = found.strip().partition("=")
        # Keep a wrong stated result, so the check can say so; drop a correct "= 24".
        expr = lhs.strip() if eq and rhs.strip() == str(TARGET) else found.strip()
        return expr[:300] or None

    def chain_thoughts(self, puzzle: str, text: str) -> list[Thought]:
        """The steps of a chain of thought, before its answer line (for failure analysis)."""
        head = []
        for ln in text.splitlines():
            if _ANSWER_LINE.match(ln.strip()):
                break
            head.append(ln)
        return self.parse_proposals(self.root(puzzle), "\n".join(head))

    def apply_unchecked(self, state: State24, thought: Thought) -> Verdict[State24]:
        """The paper's unchecked step: the model's stated left list becomes the next state, true or
        not. Expressions follow the stated operands where they exist, so the final answer check
        still catches any invented number. Invalid only when there is no left list to trust."""
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

        result_expr = f"{_wrap(take(a))} {op} {_wrap(take(b))}"
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

    def describe(self, state: State24) -> str:
        return state.text()

    def restore(self, puzzle: str, description: str) -> State24:
        """The state ``describe`` wrote as e.g. ``4/5 6 10`` (for audits). Equal to the original
        state; its expressions are the bare numbers and its step history is lost."""
        parts = description.split()
        if not 1 <= len(parts) <= 4:
            raise ValueError(f"not a Game-of-24 state: {description[:40]!r}")
        numbers = sorted(parse_number(p) for p in parts)
        return State24(tuple(numbers), tuple(format_number(n) for n in numbers))


_ANSWER_LINE = re.compile(r"^answer\s*:\s*(.*)$", re.IGNORECASE)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def _balanced(expr: str) -> bool:
    depth = 0
    for ch in expr:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0
