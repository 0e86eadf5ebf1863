"""Exact process labels: the states the gate can reach from a puzzle, each labelled by the task's
exact oracle, and every legal step from each, labelled by what it leaves.

A state's label is whether a solution is still reachable from it (``HasOracle``) and, where the
task can say so exactly (``HasDistance``: planning, where the planner proves an optimal plan), how
many steps the shortest way to a solution takes. A step is *good* when it keeps a solution
reachable and, where distances are known, when it is the first step of a shortest way (the
distance drops by one). Labels never come from a model: the walk calls only the task's
enumeration of legal steps, its gate and its oracle.

``walk`` visits states breadth first from the root, each distinct state once, up to a number of
states; a walk that the limit cut says so (``Walk.cut``), and so does every export built on it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Hashable

from solver.task import Task
from solver.task_capabilities import HasDistance, HasOracle, LegalMoves, LimitedMoves, find, require
from verifiers.verdict import Invalid, Solved

__all__ = ["LabelledState", "LabelledStep", "Undecided", "Walk", "label_state", "walk"]


@dataclass(frozen=True, slots=True)
class LabelledStep:
    """One legal step from a state: its text, the state it leads to, and that state's labels."""

    thought: str
    child: Any
    solved: bool  # the step reaches a solution itself
    solvable: bool  # a solution is reachable from the child (True when ``solved``)
    distance: int | None  # steps from the child to a solution (shortest), where the task knows it
    good: bool  # keeps a solution reachable, and is on a shortest way where distances are known


@dataclass(frozen=True, slots=True)
class LabelledState:
    """A state at ``depth`` steps from the root, its exact labels and every legal step from it."""

    state: Any
    depth: int
    solvable: bool
    distance: int | None
    steps: tuple[LabelledStep, ...]


@dataclass(slots=True)
class Walk:
    """What ``walk`` found from one puzzle: the labelled states in breadth-first order; ``cut``
    when the state limit or the task's own enumeration limit left states out; ``unknown``: states
    whose oracle could not decide (a planner's time limit), left unlabelled and not expanded."""

    states: list[LabelledState]
    cut: bool
    unknown: int


class Undecided(Exception):
    """The oracle could not decide (e.g. the planner's time ran out)."""


def _labels(task: Any, state: Any, solved: bool) -> tuple[bool, int | None]:
    """(solvable, distance) of ``state``; ``Undecided`` when the oracle cannot decide."""
    if solved:
        return True, 0
    exact = require(task, HasOracle, "the label export")
    measure = find(task, HasDistance)
    if measure is not None:
        dist = measure.distance(state)
        if dist is None:
            raise Undecided
        return dist >= 0, (dist if dist >= 0 else None)
    try:
        return bool(exact.oracle(state)), None
    except ValueError as exc:  # an oracle that could not decide in its limits (planning's OracleUnknown)
        raise Undecided from exc


def label_state(task: Task[Any], state: Any, depth: int = 0) -> tuple[LabelledState, list[Any], int]:
    """``state`` with its labels and each legal step's; also the children a walk may go on to
    (neither solved nor undecided) and how many children the oracle could not decide. Every
    step passes the task's gate first: a step the gate refuses is not a step. ``Undecided`` when
    the oracle cannot decide ``state`` itself."""
    moves = require(task, LegalMoves, "the label export")
    solvable, distance = _labels(task, state, False)
    steps: list[LabelledStep] = []
    onward: list[Any] = []
    unknown = 0
    if depth < task.max_depth:
        for thought in moves.legal_thoughts(state):
            verdict = task.check(state, thought)
            if isinstance(verdict, Invalid):
                raise ValueError(f"{task.name}: the gate refused a step its own enumeration gave "
                                 f"({thought.text!r}: {verdict.reason}); please report this as a bug")
            solved = isinstance(verdict, Solved)
            try:
                c_solvable, c_distance = _labels(task, verdict.state, solved)
            except Undecided:
                unknown += 1
                continue
            good = c_solvable and (distance is None or c_distance is None or c_distance == distance - 1)
            steps.append(LabelledStep(thought.text, verdict.state, solved, c_solvable, c_distance, good))
            if not solved:
                onward.append(verdict.state)
    return LabelledState(state, depth, solvable, distance, tuple(steps)), onward, unknown


def walk(task: Task[Any], puzzle: str, *, max_states: int = 10_000,
         seen: set[Hashable] | None = None) -> Walk:
    """Every state reachable from ``puzzle`` by gated steps, breadth first, each distinct state
    once, at most ``max_states`` of them (``cut`` says when the limit, or the task's own
    enumeration limit, left some out). ``seen``: states already labelled (shared across the
    puzzles of one export, so that a state reached from several puzzles is labelled once);
    it is updated. The root is labelled even when ``seen`` holds it."""
    if max_states < 1:
        raise ValueError("max_states must be at least 1")
    seen = set() if seen is None else seen
    limited = find(task, LimitedMoves)
    root = task.root(puzzle)
    queue: deque[tuple[Any, int]] = deque([(root, 0)])
    out: list[LabelledState] = []
    cut = False
    unknown = 0
    first = True
    while queue:
        state, depth = queue.popleft()
        if not first and state in seen:
            continue
        first = False
        if len(out) >= max_states:
            cut = True
            break
        seen.add(state)
        try:
            labelled, onward, undecided = label_state(task, state, depth)
        except Undecided:
            unknown += 1
            continue
        unknown += undecided
        if limited is not None and depth < task.max_depth and limited.enumeration_cut(state) is not None:
            cut = True
        out.append(labelled)
        if depth + 1 < task.max_depth:  # a state at the depth limit has no step to label
            queue.extend((child, depth + 1) for child in onward if child not in seen)
    return Walk(out, cut, unknown)
