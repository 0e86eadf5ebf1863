"""Countdown as a Task: states are the numbers left (exact rationals, sorted) with the expression
behind each, under one of the two rule variants of ``verifiers.countdown``.

A puzzle's text names its numbers and its target: ``"25 50 75 100 3 6 -> 952"``. The rule variant
is the task's option (``Countdown(rules=...)``), recorded in traces."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from solver.task import Thought
from tasks.countdown.baselines import Baselines
from tasks.countdown.parts import AnswerGrammarPart, LegalStepGrammar, RestoreNumbers, SearchPrompts, ShortPrompts
from tasks.countdown.state import CountdownState, parse_puzzle, puzzle_text, wrap
from verifiers import countdown as cd
from verifiers.arithmetic import Policy, unbracket
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Solved, Valid, Verdict

__all__ = ["Countdown", "CountdownState", "parse_puzzle", "puzzle_text"]


class LegalSteps:
    """LegalMoves: every step the gate accepts under the task's rules, in the gate's form."""

    def __init__(self, rules: cd.Rules) -> None:
        self.rules: cd.Rules = rules

    def legal_thoughts(self, state: CountdownState) -> Sequence[Thought]:
        if cd.is_solved(state.numbers, state.target, self.rules):
            return []
        return [Thought(t) for t in cd.legal_step_texts(state.numbers, self.rules)]


class Oracle:
    """HasOracle and HasDistance: the exact oracle of ``verifiers.countdown``."""

    def __init__(self, rules: cd.Rules) -> None:
        self.rules: cd.Rules = rules

    def oracle(self, state: CountdownState) -> bool:
        return cd.solvable(state.numbers, state.target, self.rules)

    def distance(self, state: CountdownState) -> int | None:
        d = cd.distance(state.numbers, state.target, self.rules)
        return -1 if d is None else d


class Options:
    """HasOptions: the rule variant and the gate's policy."""

    def __init__(self, rules: cd.Rules, policy: Policy) -> None:
        self.rules, self.policy = rules, policy

    def options(self) -> dict[str, Any]:
        return {"rules": self.rules, "policy": self.policy}


class Countdown:
    """The Countdown task under ``rules`` ("once", the default, or "television")."""

    name = "countdown"
    max_depth = cd.MAX_NUMBERS - 1

    def __init__(self, rules: cd.Rules = "once", policy: Policy = "reject") -> None:
        if rules not in cd.RULES:
            raise ValueError(f"unknown Countdown rules {rules!r}: choose one of {', '.join(cd.RULES)}")
        self.rules: cd.Rules = rules
        self.policy: Policy = policy
        self.parts = (LegalSteps(rules), Oracle(rules), Options(rules, policy), SearchPrompts(rules), ShortPrompts(),
                      LegalStepGrammar(rules), RestoreNumbers(), Baselines(rules),
                      AnswerGrammarPart(rules))

    def root(self, puzzle: str) -> CountdownState:
        numbers, target = parse_puzzle(puzzle)
        pairs = sorted((Fraction(n), str(n)) for n in numbers)
        return CountdownState(tuple(n for n, _ in pairs), target, tuple(e for _, e in pairs))

    def check(self, state: CountdownState, thought: Thought) -> Verdict[CountdownState]:
        if len(state.numbers) < 2:
            return Invalid("no step is possible: one number is left")
        step = cd.check_step(state.numbers, thought.text, self.rules, self.policy)
        if isinstance(step, Invalid):
            return step
        expr = f"{wrap(state.exprs[step.i])} {step.op} {wrap(state.exprs[step.j])}"
        items = [(n, e) for k, (n, e) in enumerate(zip(state.numbers, state.exprs, strict=True))
                 if k not in (step.i, step.j)]
        items.append((step.result, expr))
        items.sort(key=lambda p: p[0])
        text = cd.step_text(state.numbers, step.i, step.j, step.op, step.result)
        new = CountdownState(tuple(n for n, _ in items), state.target, tuple(e for _, e in items),
                             state.steps + (text,))
        return (Solved if cd.is_solved(new.numbers, new.target, self.rules) else Valid)(new, step.note)

    def answer(self, state: CountdownState) -> str:
        """The expression behind the target (under ``once`` the one number left)."""
        k = state.numbers.index(Fraction(state.target)) if Fraction(state.target) in state.numbers else 0
        expr = state.exprs[k]
        return unbracket(expr)

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every exact check of ``answer`` from the puzzle text alone, under the task's rules."""
        try:
            numbers, target = parse_puzzle(puzzle)
        except ValueError as exc:
            return AnswerReport(f"Countdown ({self.rules})",
                                (Check("the puzzle is its numbers and a target", False, str(exc)),))
        return cd.report_answer(numbers, answer, target, self.rules)

    def describe(self, state: CountdownState) -> str:
        return state.text()

