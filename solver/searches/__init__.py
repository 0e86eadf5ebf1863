"""The searches, each an order of expansion over one run's gated step, in a package of their own.

``registry`` holds them by name (``tot solve --method``), their declared options and the one entry
point, ``run_search``; each search is a module of its own (``tot``: the paper's BFS and DFS,
``complete``, ``controller``: Long's, ``best_first``, ``mcts``, ``beam``) that imports no other
(an import contract in pyproject.toml); what they share is ``common``.
"""

from solver.searches.registry import (
    COMMON_OPTIONS,
    ENTRY_POINTS,
    SEARCHES,
    DeclaredOption,
    Search,
    SearchFn,
    declared_options,
    get_search,
    register_search,
    run_search,
    search_names,
)

__all__ = ["COMMON_OPTIONS", "ENTRY_POINTS", "SEARCHES", "DeclaredOption", "Search", "SearchFn", "declared_options",
           "get_search", "register_search", "run_search", "search_names"]
