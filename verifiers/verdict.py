"""The three-way result of checking one proposed thought against a state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar, Union

__all__ = ["Invalid", "Solved", "Valid", "Verdict", "is_accepted"]

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Invalid:
    """The thought breaks a fact of the task; ``reason`` says which one."""

    reason: str


@dataclass(frozen=True, slots=True)
class Valid(Generic[S]):
    """The thought is legal and leads to ``state``, which is not yet a solution."""

    state: S
    note: str = ""


@dataclass(frozen=True, slots=True)
class Solved(Generic[S]):
    """The thought is legal and ``state`` is a complete, exactly verified solution."""

    state: S
    note: str = ""


Verdict = Union[Invalid, Valid[S], Solved[S]]


def is_accepted(verdict: object) -> bool:
    """True for Valid and Solved verdicts."""
    return isinstance(verdict, (Valid, Solved))
