"""The language-model layer: one async interface, several backends, a record/replay cache."""

from solver.lm.base import Backend, Completion, GenParams, LMError
from solver.lm.client import LMClient

__all__ = ["Backend", "Completion", "GenParams", "LMClient", "LMError"]
