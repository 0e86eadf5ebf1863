"""Ground truth for traces: one definition shared by ``tot audit``, ``tot show`` and replays.

- A state is **solvable** when the task's exact oracle says a solution is still reachable from it
  (crosswords: every filled letter agrees with the answer board; Game of 24 and Sudoku: a
  solution exists). A state reached through a step the exact gate refused (``invalid``, or
  ``unchecked`` with the gate off), or below such a step, has no truth: it is ``invalid``.
- A **false prune** is a solvable state that a judgement removed from the search: cut because it
  scored below the pruning threshold (``pruned``), lost to the beam (``beam``), or, in MCTS, a
  child the tree held but UCT never chose to visit before the run ended (``unvisited``). Cuts by depth
  or child limits and duplicates are structural, not judgements, and are not false prunes.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from solver.task_capabilities import HasOracle, Restorable, find, missing_message

JUDGED_CUTS = frozenset({"pruned", "beam", "unvisited"})  # fates decided by the evaluator's judgement
STRUCTURAL_CUTS = frozenset({"depth", "children"})

Oracle = Callable[[str, str], bool]  # (puzzle, state description) -> solvable


def is_false_prune(solvable: bool | None, fate: str) -> bool:
    """True for a solvable state removed by a judgement (the one definition of a false prune)."""
    return solvable is True and fate in JUDGED_CUTS


def default_task(plugin: Any) -> Any:
    """The task a plugin makes with every ``tot solve TASK`` option at its default."""
    parser = argparse.ArgumentParser(add_help=False)
    plugin.add_solve_args(parser)
    # argparse keeps no public list of its options; _actions is stable across Python versions.
    defaults = {a.dest: a.default for a in parser._actions if a.dest != argparse.SUPPRESS}
    return plugin.make_task(argparse.Namespace(**defaults))


def task_for_run(plugin: Any, options: dict[str, Any]) -> Any:
    """The task a run used: rebuilt from the options its header recorded when the plugin can
    (``task_from_options``, e.g. Sudoku's rule set), else the task with default options."""
    build = getattr(plugin, "task_from_options", None)
    if options and callable(build):
        return build(options)
    return default_task(plugin)


def make_oracle(task: Any) -> Oracle | str:
    """A memoised (puzzle, description) -> solvable judge, or the reason there is none."""
    restorer: Restorable[Any] | None = find(task, Restorable)
    exact = find(task, HasOracle)
    if restorer is None:
        return missing_message(task, Restorable, "the audit")
    if exact is None:
        return missing_message(task, HasOracle, "the audit")
    memo: dict[tuple[str, str], bool] = {}
    restore, oracle = restorer.restore, exact.oracle

    def judge(puzzle: str, description: str) -> bool:
        key = (puzzle, description)
        if key not in memo:
            memo[key] = bool(oracle(restore(puzzle, description)))
        return memo[key]

    return judge


def state_truth(verdict: str | None, state: str | None, parent_truth: str | None,
                judge: Oracle, puzzle: str) -> str:
    """solvable | unsolvable | invalid | unknown for one node, given its parent's truth."""
    if verdict in ("invalid", "unchecked"):
        return "invalid"
    if parent_truth == "invalid" and verdict != "solved":
        return "invalid"
    if state is None:
        # A solved state without its text (e.g. an imported answer): it passed the exact answer check.
        return "solvable" if verdict == "solved" else "unknown"
    try:
        return "solvable" if judge(puzzle, state) else "unsolvable"
    except ValueError:
        return "unknown"
