"""The language-model layer: one async interface, several backends, a record/replay cache.

An ``LMClient`` is shared by every run that uses one model; each run reaches the model through
its own ``Session`` (``client.session(usage, on_event)``), which holds that run's usage, budget,
failed-call events and memo.
"""

from solver.lm.base import Backend, Completion, GenParams, LMError
from solver.lm.client import LMClient
from solver.lm.session import Session

__all__ = ["Backend", "Completion", "GenParams", "LMClient", "LMError", "Session"]
