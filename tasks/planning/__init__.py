"""Classical planning from PDDL: exact action gate, planner oracle, LLM+P and Tree of Thoughts over actions."""

from tasks.planning.task import Planning, PlanState

__all__ = ["PlanState", "Planning"]
