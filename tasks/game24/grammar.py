"""The grammar of Game-of-24 steps a state allows: every defined ``a op b = c (left: ...)`` line,
written from the exact arithmetic (``verifiers.arithmetic.legal_steps``), in the spelling the
task's parser and gate read. Exact: each derivation is a step the gate accepts, and every legal
step of the state is derivable (both operand orders of + and *, which the gate also accepts)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from solver.grammar import alternation, grammar, literal
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
