"""Search tree nodes: an immutable state plus the thought and verdict that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Hashable, TypeVar

__all__ = ["Node", "NodeFactory", "SeenStates"]

S = TypeVar("S", bound=Hashable)


@dataclass(eq=False, slots=True)
class Node(Generic[S]):
    """A node of the search tree. ``state`` is frozen; search only ever adds new nodes."""

    id: int
    state: S
    parent: Node[S] | None
    depth: int
    thought: str = ""
    prior: float | None = None
    solved: bool = False
    note: str = ""
    score: float | None = None
    detail: Any = None

    def path(self) -> list[Node[S]]:
        node: Node[S] | None = self
        out = []
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]


class NodeFactory:
    """Hands out node ids that are unique and deterministic within one run."""

    def __init__(self) -> None:
        self.made = 0  # the next node's id (a checkpoint keeps it)

    def make(self, state: S, parent: Node[S] | None, thought: str = "", prior: float | None = None,
             solved: bool = False, note: str = "") -> Node[S]:
        depth = 0 if parent is None else parent.depth + 1
        self.made += 1
        return Node(self.made - 1, state, parent, depth, thought, prior, solved, note)


class SeenStates(Generic[S]):
    """The one table of states a search has seen, each with the smallest depth it was seen at.
    A state seen again no shallower is known: its subtree is searched, or was, or is being
    searched, with at least as much depth left. Every search's memory of states is one of these:
    a level's (BFS, the beam: every state at one depth), the states held (best-first, MCTS), the
    states explored to the end (the complete search) and, with ``any_depth``, the states Long's
    controller has been at (seen once is seen, at whatever depth)."""

    def __init__(self, *, any_depth: bool = False) -> None:
        self.held: dict[S, Node[S]] = {}  # each state -> the shallowest node seen with it
        self.any_depth = any_depth

    def known(self, node: Node[S]) -> bool:
        """Whether ``node``'s state was seen at its depth or shallower (at any depth: ``any_depth``)."""
        seen = self.held.get(node.state)
        return seen is not None and (self.any_depth or seen.depth <= node.depth)

    def record(self, node: Node[S]) -> None:
        """Remember ``node``'s state at its depth (kept at the smallest depth seen)."""
        seen = self.held.get(node.state)
        if seen is None or node.depth < seen.depth:
            self.held[node.state] = node

    def fresh(self, node: Node[S]) -> bool:
        """Whether ``node``'s state is new here (or now seen shallower); it is then recorded."""
        if self.known(node):
            return False
        self.record(node)
        return True
