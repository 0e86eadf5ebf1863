"""What the searches share, in one module below them all: no search imports another (the import
contract "The searches stand alone" in pyproject.toml says so and lint-imports checks it).

``quantise`` and ``ranked`` are how every search compares scores (rounded to ``DECIMALS`` places,
ties in generation order); ``Transpositions`` is the table of states a search already holds with
the smallest depth each was reached at (best-first and MCTS).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from solver.expansion import Expansion
from solver.node import Node

__all__ = ["DECIMALS", "Transpositions", "quantise", "ranked"]

DECIMALS = 3  # scores equal to 3 decimal places are ties, broken by the generator's order


def quantise(score: float | None, decimals: int = DECIMALS) -> float:
    """The score search compares: rounded, so that float noise (another CPU, another BLAS)
    below 10**-decimals cannot reorder states; ties then go to generation order. NaN ranks last."""
    if score is not None and math.isnan(score):
        return -math.inf
    return round(score or 0.0, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def ranked(nodes: Sequence[Node[Any]], decimals: int = DECIMALS) -> list[Node[Any]]:
    """Best first by quantised score; ties keep the given order (generation order)."""
    order = sorted(range(len(nodes)), key=lambda i: (-quantise(nodes[i].score, decimals), i))
    return [nodes[i] for i in order]


class Transpositions:
    """The states a search already holds, with the smallest depth each was reached at: a state
    reached again no shallower adds nothing (its subtree is searched, or being searched, with at
    least as much depth left)."""

    def __init__(self) -> None:
        self.depth: dict[Any, int] = {}

    def fresh(self, node: Node[Any]) -> bool:
        """Whether ``node``'s state is new here (or now reached shallower); it is then held."""
        known = self.depth.get(node.state)
        if known is not None and known <= node.depth:
            return False
        self.depth[node.state] = node.depth
        return True

    def open_children(self, run: Expansion, children: list[Node[Any]], max_depth: int) -> list[Node[Any]]:
        """The children worth a judgement. Left out, each said in the trace but the first: a
        solved state (reaching here, its answer failed the re-check: nothing below it), a
        duplicate (``fresh``), one at the depth limit (``Expansion.cut_at_depth``)."""
        out: list[Node[Any]] = []
        for child in children:
            if child.solved:
                continue
            if not self.fresh(child):
                run.trace.emit("cut", node=child.id, why="duplicate")
            elif child.depth >= max_depth:
                run.cut_at_depth(child)
            else:
                out.append(child)
        return out
