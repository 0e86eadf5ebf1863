"""A kit for property-testing search on your own task.

``check_search_invariants(task, puzzles)`` runs hypothesis over scripted models (legal, illegal
and garbage thoughts, failing calls), search settings and budgets, and checks on every run that
states are never mutated, nothing the gate refused is scored, kept or answered, backtracking
returns exactly to held states, BFS keeps at most b per level, budgets are never exceeded, a
returned answer always re-verifies, the same seed and recorded answers give the same trace, and
(where the task has an exact oracle and legal-move enumeration) that a complete search finds a
solution iff one exists. Before any run it checks the task's composition (``check_parts``): every
part found for a capability really implements it. See docs/testing.md.
"""

from solver.settings import SearchSettings
from solver.testing.invariants import InvariantBroken, Outcome, check_outcome
from solver.testing.parts import PartBroken, check_parts
from solver.testing.recording import RecordingTask
from solver.testing.runner import (
    IFF_METHODS,
    check_complete_iff,
    check_replay,
    check_search_invariants,
    run_and_check,
    run_case,
    run_case_async,
)
from solver.testing.scripted import Script, ScriptedModel
from solver.testing.strategies import Case, budgets, cases, scripts, search_settings, settings_of

__all__ = [
    "IFF_METHODS",
    "Case",
    "InvariantBroken",
    "Outcome",
    "PartBroken",
    "RecordingTask",
    "Script",
    "ScriptedModel",
    "SearchSettings",
    "budgets",
    "cases",
    "check_complete_iff",
    "check_outcome",
    "check_parts",
    "check_replay",
    "check_search_invariants",
    "run_and_check",
    "run_case",
    "run_case_async",
    "scripts",
    "search_settings",
    "settings_of",
]
