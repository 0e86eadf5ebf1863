"""The grammar of Game-of-24 steps a state allows: every defined ``a op b = c (left: ...)`` line,
written from the exact arithmetic (``verifiers.arithmetic.legal_steps``), in the spelling the
task's parser and gate read. Exact: each derivation is a step the gate accepts, and every legal
step of the state is derivable (both operand orders of + and *, which the gate also accepts).

The baselines' answer grammar (``answer_grammar``): ``Answer: EXPR = 24`` where EXPR is any
arithmetic expression (``+ - * /``, parentheses) that uses each of the puzzle's four numbers
exactly once, written with one space around each operator and none inside parentheses (the
paper's spelling). A superset of the valid answers: the grammar fixes the numbers and the form,
not the value, so the exact check still decides; every valid answer in that spelling is
derivable (tests/test_answer_grammar.py). The CoT output first has 1-3 step lines of the step
format (numbers free: a superset; the answer parser does not read them)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from solver.grammar import alternation, arithmetic_answer, grammar, literal
from tasks.game24.state import TARGET, parse_puzzle
from verifiers.arithmetic import apply_op, format_number, legal_steps

__all__ = ["Game24Grammar", "step_lines"]


def step_lines(numbers: tuple[Fraction, ...]) -> list[str]:
    """Every legal step line of ``numbers``, canonical spelling (left list sorted)."""
    out: list[str] = []
    for i, j, op, r in legal_steps(numbers):
        pairs = [(i, j), (j, i)] if op in "+*" and numbers[i] != numbers[j] else [(i, j)]
        for x, y in pairs:
            assert apply_op(numbers[x], op, numbers[y]) == r
            rest = [n for k, n in enumerate(numbers) if k not in (x, y)] + [r]
            left = " ".join(format_number(n) for n in sorted(rest))
            out.append(f"{format_number(numbers[x])} {op} {format_number(numbers[y])} = "
                       f"{format_number(r)} (left: {left})")
    return out


class Game24Grammar:
    """``ThoughtGrammar`` of Game of 24 (a part the task composes)."""

    def thought_grammar(self, state: Any) -> str | None:
        """GBNF of one legal step; None when one number is left (no step is possible)."""
        lines = step_lines(tuple(state.numbers))
        if not lines:
            return None
        return grammar({"root": alternation(literal(t) for t in lines)})

    def answer_grammar(self, puzzle: str, cot: bool) -> str | None:
        """GBNF of a baseline's output for ``puzzle`` (see the module's docstring); None for a
        puzzle that does not parse (the baseline then fails on it as it would without)."""
        try:
            nums = parse_puzzle(puzzle)
        except ValueError:
            return None
        return arithmetic_answer(nums, [(1 << len(nums)) - 1], TARGET, cot)
