"""Search tree nodes: an immutable state plus the thought and verdict that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Hashable, TypeVar

__all__ = ["Node", "NodeFactory"]

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

    def __init__(self, first: int = 0) -> None:
        self.next_id = first  # the id the next node gets (a checkpoint saves it)

    def make(self, state: S, parent: Node[S] | None, thought: str = "", prior: float | None = None,
             solved: bool = False, note: str = "") -> Node[S]:
        depth = 0 if parent is None else parent.depth + 1
        node = Node(self.next_id, state, parent, depth, thought, prior, solved, note)
        self.next_id += 1
        return node
