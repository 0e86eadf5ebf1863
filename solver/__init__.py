"""Verified Tree-of-Thoughts search: the public API.

A task (``Task``: parse a puzzle, the exact gate, the answer and its report) plus optional
capabilities (``solver.task_capabilities``); a generator and an evaluator (built in, by name, or your
own); a search (any registered one by name, ``run_search``; each built-in one is a class made
from its options dataclass, e.g. ``solver.searches.tot.Bfs(BfsOptions(breadth=2))``, and
``search_names()`` lists every one, built in or registered; ``bfs``, ``dfs`` and ``complete_dfs`` are
``run_search`` of the paper's BFS and DFS and the complete search, ``long_search`` runs Long's
controller with any evaluator to rank its proposals); a model
through a shared ``LMClient`` (or none); a run of your own (``open_run``: its gated step and its
books, ``Run``, on which a search runs); the result (``SearchResult``) and its trace (``Trace``, ``read_trace``).
``docs/api.md`` walks through it. This package knows no task: tasks live in ``tasks``.

Every name below is public and stays; a name that is not exported here or in a module's
``__all__`` is internal. The command line and the analysis tools are in ``solver.tools``;
``solver.testing`` property-tests a task of your own.
"""

from solver.budget import Budget, BudgetExhausted, Usage
from solver.evaluators import EVALUATORS, Evaluator, make_evaluator, register_evaluator
from solver.expansion import Run, open_run, rule_failure
from solver.generators import GENERATORS, Generator, make_generator, register_generator
from solver.lm import Backend, Completion, GenParams, LMClient, LMError, Session
from solver.node import Node
from solver.run import make_client, solve
from solver.search_options import Options, option
from solver.searches import Search, get_search, register_search, run_search, search_names
from solver.searches.controller import long_search
from solver.searches.registry import bfs, complete_dfs, dfs
from solver.searches.tot import SearchResult
from solver.settings import ModelSettings, SearchSettings, Settings
from solver.task import Task, Thought, ValueScale
from solver.task_capabilities import (
    AnswerRules,
    ChoicePrompt,
    HasOptions,
    HasOracle,
    LegalMoves,
    MissingCapability,
    Needs,
    ProposePrompts,
    Restorable,
    SamplePrompts,
    Unchecked,
    ValuePrompts,
    VotePrompt,
)
from solver.trace import Trace
from solver.trace_reader import read_trace

__all__ = [
    # tasks
    "Task", "Thought", "ValueScale", "Node",
    "LegalMoves", "ProposePrompts", "SamplePrompts", "ValuePrompts", "VotePrompt", "ChoicePrompt",
    "HasOracle", "Restorable", "Unchecked", "HasOptions", "AnswerRules", "MissingCapability", "Needs",
    # generators and evaluators
    "Generator", "Evaluator", "make_generator", "make_evaluator", "GENERATORS", "EVALUATORS",
    "register_generator", "register_evaluator",
    # searches and their results
    "bfs", "dfs", "complete_dfs", "long_search", "open_run", "Run", "rule_failure", "SearchResult",
    "Search", "register_search", "get_search", "search_names", "run_search", "option", "Options",
    "Budget", "BudgetExhausted", "Usage",
    # models
    "LMClient", "Session", "Backend", "Completion", "GenParams", "LMError",
    # settings as the CLI uses them
    "Settings", "SearchSettings", "ModelSettings", "make_client", "solve",
    # traces
    "Trace", "read_trace",
]
