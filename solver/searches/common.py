"""What the searches share, in one module below them all: no search imports another (the import
contract "The searches stand alone" in pyproject.toml says so and lint-imports checks it).

``begin`` writes a search's ``search`` event (its options as they are) and gives its depth limit;
``quantise`` and ``ranked`` are how every search compares scores (rounded to ``DECIMALS`` places,
ties in generation order); ``Transpositions`` is the table of states a search already holds with
the smallest depth each was reached at (best-first and MCTS); ``AskTell`` (``solver.expansion``'s,
re-exported) is what every built-in search is: options and an explicit state that asks for
expansions and scorings and is told their outcomes (TreeQuest's shape), so that a run can be
stopped between two rounds, saved as JSON and resumed (``solver.searches.checkpoint``)::

    search = Mcts(MctsOptions(iterations=200))
    run.begin(search, SearchSettings("mcts"))  # the search event and the root
    for _ in range(50):
        await run.cycle(search)                 # one round: asks performed, outcomes told
    saved = save(run, search)                   # bytes (JSON)
    ...
    run = open_run(task, puzzle, generator, evaluator, client, Trace(path))   # a new run, same parts
    result = await run.drive(load(saved, run, Mcts))   # the same result and trace as one run
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Generic, Hashable, Sequence, TypeVar

from solver.expansion import AskTell, Run
from solver.node import Node, SeenStates
from solver.settings import SearchSettings

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["AskTell", "DECIMALS", "Frame", "next_child", "Transpositions", "begin", "quantise", "ranked"]

DECIMALS = 3  # scores equal to 3 decimal places are ties, broken by the generator's order


def begin(run: Run[S], settings: SearchSettings, options: Any, **facts: object) -> int:
    """A built-in search's ``search`` event: the method, generator, evaluator, depth limit and
    seed, its own ``options`` as they are (``search_options``), then ``facts`` it reports (the
    threshold it used, ...); returns the depth limit (the settings', else the task's)."""
    depth = settings.depth or run.task.max_depth
    run.start(settings.method, generator=run.generator.name, evaluator=run.evaluator.name if run.evaluator else None,
              depth=depth, seed=settings.seed, search_options=dataclasses.asdict(options), **facts)
    return depth


def quantise(score: float | None, decimals: int = DECIMALS) -> float:
    """The score search compares: rounded, so that float noise (another CPU, another BLAS)
    below 10**-decimals cannot reorder states; ties then go to generation order. NaN ranks last."""
    if score is not None and math.isnan(score):
        return -math.inf
    return round(score or 0.0, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def ranked(nodes: Sequence[Node[S]], decimals: int = DECIMALS) -> list[Node[S]]:
    """Best first by quantised score; ties keep the given order (generation order)."""
    order = sorted(range(len(nodes)), key=lambda i: (-quantise(nodes[i].score, decimals), i))
    return [nodes[i] for i in order]


class Transpositions(SeenStates[S]):
    """The states a search holds (best-first, MCTS): ``SeenStates`` with the step that opens a
    node's children against it."""

    def open_children(self, run: Run[S], children: list[Node[S]], max_depth: int) -> list[Node[S]]:
        """The children worth a judgement. Left out, each said in the trace but the first: a
        solved state (reaching here, its answer failed the re-check: nothing below it), a
        duplicate (``fresh``), one at the depth limit (``Run.cut_at_depth``)."""
        out: list[Node[S]] = []
        for child in children:
            if child.solved:
                continue
            if not self.fresh(child):
                run.cut(child, "duplicate")
            elif child.depth >= max_depth:
                run.cut_at_depth(child)
            else:
                out.append(child)
        return out


@dataclass
class Frame(Generic[S]):
    """A node of a depth-first search's path: its children still to try, in order (``deferred``:
    those of them scored below the threshold), and the one being searched below it."""

    node: Node[S]
    queue: list[Node[S]]
    deferred: list[Node[S]] = field(default_factory=list)
    current: Node[S] | None = None
    tried: int = 0


def next_child(stack: list[Frame[S]], run: Run[S], explored: SeenStates[S] | None = None
               ) -> tuple[Frame[S], Node[S]] | None:
    """The next child a depth-first path offers, backtracking from each child searched to the end
    (recorded in ``explored``, where given) and from each frame with none left; None: the path is
    empty, the search is over."""
    while stack:
        frame = stack[-1]
        if frame.current is not None:
            if explored is not None:
                explored.record(frame.current)
            run.backtrack(frame.current, frame.node)
            frame.current = None
        if frame.queue:
            return frame, frame.queue.pop(0)
        stack.pop()
    return None
