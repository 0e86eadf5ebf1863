"""Hypothesis profiles for the suite, chosen with ``HYPOTHESIS_PROFILE`` (registered and loaded in
tests/conftest.py):

- ``ci`` (default): derandomized (the same examples on every run and machine), no example
  database, no deadline; each property runs the number of examples it names (100 when it names
  none).
- ``thorough``: randomized (a new seed each run), ten times the examples of every property and
  ten times the fuzz texts per task. Slow: for on-demand runs, not CI.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
SCALE = {"ci": 1, "thorough": 10}.get(PROFILE, 1)
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]


def examples(n: int) -> int:
    """A property's example count under the active profile."""
    return n * SCALE


def register() -> None:
    settings.register_profile("ci", derandomize=True, database=None, deadline=None, max_examples=100,
                              suppress_health_check=_QUIET, print_blob=True)
    settings.register_profile("thorough", derandomize=False, database=None, deadline=None,
                              max_examples=examples(100), suppress_health_check=_QUIET, print_blob=True)
    settings.load_profile(PROFILE if PROFILE in ("ci", "thorough") else "ci")
