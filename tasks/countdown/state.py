"""Countdown states and the puzzle's parser, shared by the task and its parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

from verifiers import countdown as cd
from verifiers.arithmetic import format_number, wrap

__all__ = ["CountdownState", "parse_puzzle", "puzzle_text", "wrap"]


def parse_puzzle(text: str) -> tuple[tuple[int, ...], int]:
    """``"25 50 75 100 3 6 -> 952"``: (numbers, target); ValueError with a one-line reason."""
    if not isinstance(text, str) or "->" not in text:
        raise ValueError('a Countdown puzzle is its numbers and its target, e.g. "25 50 75 100 3 6 -> 952"')
    numbers, _, target = text.partition("->")
    return cd.parse_numbers(numbers), cd.parse_target(target)


def puzzle_text(numbers: Sequence[int], target: int) -> str:
    return f"{' '.join(str(n) for n in numbers)} -> {target}"


@dataclass(frozen=True, slots=True)
class CountdownState:
    """The numbers left, sorted, and the target. ``exprs`` (one expression of the puzzle's numbers
    per entry) and ``steps`` are history, not identity."""

    numbers: tuple[Fraction, ...]
    target: int
    exprs: tuple[str, ...] = field(compare=False)
    steps: tuple[str, ...] = field(default=(), compare=False)

    def text(self) -> str:
        return " ".join(format_number(n) for n in self.numbers)

