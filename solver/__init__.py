"""Verified Tree-of-Thoughts search: core types, LM layer, generators, evaluators, search, CLI.

This package knows no task: tasks plug in through the Task protocol (``solver.task``).
"""
