"""The grammar of planning steps a state allows: the ground actions applicable in it (every
schema over the problem's objects whose preconditions hold), written as the task writes an action,
``(unstack b2 b3)``. Exact: each derivation is an action the gate applies, and every applicable
action is derivable."""

from __future__ import annotations

from typing import Any

from solver.grammar import alternation, grammar, literal
from verifiers.planner import applicable_actions

__all__ = ["PlanningGrammar"]


class PlanningGrammar:
    """``ThoughtGrammar`` of planning over actions (a part the task composes)."""

    def thought_grammar(self, state: Any) -> str | None:
        """GBNF of one applicable action; None in a dead end (no action applies)."""
        actions = applicable_actions(state.problem, state.atoms)
        if not actions:
            return None
        return grammar({"root": alternation(literal(a.text()) for a in actions)})
