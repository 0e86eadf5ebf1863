"""Game-of-24 states and the puzzle's parser, shared by the task and its parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from verifiers.arithmetic import MAX_PUZZLE_NUMBER, format_number, parse_puzzle, wrap
from verifiers.verdict import Solved, Valid, Verdict

TARGET = 24
MAX_INPUT = MAX_PUZZLE_NUMBER
__all__ = ["MAX_INPUT", "TARGET", "State24", "apply_step", "parse_puzzle", "root_state", "wrap"]


@dataclass(frozen=True, slots=True)
class State24:
    """The numbers still in play, sorted. Two states with the same numbers are the same state;
    ``exprs`` (one expression of the puzzle's numbers per entry) and ``steps`` are history."""

    numbers: tuple[Fraction, ...]
    exprs: tuple[str, ...] = field(compare=False)
    steps: tuple[str, ...] = field(default=(), compare=False)

    def text(self) -> str:
        return " ".join(format_number(n) for n in self.numbers)


def root_state(puzzle: str) -> State24:
    """The puzzle's numbers, sorted, each its own expression."""
    pairs = sorted((Fraction(n), str(n)) for n in parse_puzzle(puzzle))
    return State24(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))


def apply_step(state: State24, i: int, j: int, op: str, result: Fraction, note: str = "") -> Verdict[State24]:
    """The state after combining numbers ``i`` and ``j`` with ``op`` into ``result`` (checked)."""
    a, b = state.numbers[i], state.numbers[j]
    expr = f"{wrap(state.exprs[i])} {op} {wrap(state.exprs[j])}"
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
