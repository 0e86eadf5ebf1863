"""Exact checkers and oracles. Nothing in this package ever calls a language model.

The package exports the verdict vocabulary every checker speaks: a step's verdict (``Valid``,
``Solved`` or ``Invalid``) and an answer's report (``AnswerReport``, a list of named ``Check``s).
The task-specific checkers live in their own modules (``verifiers.arithmetic``, ``verifiers.sudoku``,
``verifiers.crossword``, ``verifiers.writing``, ``verifiers.planning``), each with its ``__all__``.
"""

from verifiers.report import AnswerReport, Check, as_invalid
from verifiers.verdict import Invalid, Solved, Valid, Verdict, is_accepted

__all__ = ["AnswerReport", "Check", "Invalid", "Solved", "Valid", "Verdict", "as_invalid", "is_accepted"]
