"""Planning the embedded scorer's passes: which tokens llama.cpp evaluates, in which sequences, and
which rows of logits it returns (solver/lm/local.py runs the plan; this module calls no model).

A scoring item is a prompt with one continuation, as tokens (``full``), and ``start``, the first
token of the continuation: its score is the sum, for each position p from ``start - 1`` to
``len(full) - 2``, of the log-probability of ``full[p + 1]`` in the row of logits at p. The row
after the last token is never read, so the last token is never evaluated.

Items evaluated in one pass form a tree of tokens: a prefix several items share (the few-shot
prompt, a prompt scored with several labels, two steps that begin alike) is one path of nodes,
evaluated once. Each leaf of the tree is a llama.cpp sequence, and a node's KV cell belongs to
every sequence below it, so each item attends to exactly its own tokens, as it would alone. What
the context already holds (sequence 0, from earlier passes) is reused up to the longest prefix
every item shares with it; the prefix every item shares (the trunk) stays in sequence 0 after
the pass, for the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

__all__ = ["Tree", "build_tree", "plan_passes"]


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@dataclass(slots=True)
class Tree:
    """The nodes of one pass. Node i holds ``token[i]`` at position ``pos[i]``; ``seqs[i]`` are the
    sequences its cell belongs to; ``reads[i]`` the next tokens whose log-probability is read in its
    row (absent: no row). ``paths[k]`` are item k's nodes, position by position from 0."""

    cached: int = 0  # positions already in sequence 0 and reused
    trunk: int = 0  # positions every item shares (cached included)
    sequences: int = 1  # sequence ids used: 0 .. sequences - 1
    token: list[int] = field(default_factory=list)
    pos: list[int] = field(default_factory=list)
    seqs: list[list[int]] = field(default_factory=list)
    reads: dict[int, list[int]] = field(default_factory=dict)
    owner: list[int] = field(default_factory=list)  # the first item that holds the node
    paths: list[list[int]] = field(default_factory=list)
    wanted: list[list[tuple[int, int]]] = field(default_factory=list)

    def chunks(self, n_batch: int, max_rows: int, least: int = 1) -> list[list[int]]:
        """The nodes to evaluate (position ``cached`` on), in order of position, cut into batches of
        at most ``n_batch`` tokens and ``max_rows`` rows of logits (a row is 4 bytes a word of the
        vocabulary: 1 MiB for Gemma 3), the last one made at least ``least`` tokens long by taking
        the end of the one before where that keeps ``least`` (its rows may then pass ``max_rows`` by
        at most ``least``): every batch has ``least`` tokens or more when there are that many and
        ``n_batch`` and ``max_rows`` are at least twice ``least``."""
        todo = sorted((i for i in range(len(self.token)) if self.pos[i] >= self.cached), key=lambda i: (self.pos[i], i))
        out: list[list[int]] = []
        rows = 0
        for i in todo:
            row = i in self.reads
            if not out or len(out[-1]) >= n_batch or rows + row > max_rows:
                out.append([])
                rows = 0
            out[-1].append(i)
            rows += row
        if len(out) > 1 and len(out[-1]) < least:
            take = min(least - len(out[-1]), max(0, len(out[-2]) - least), n_batch - len(out[-1]))
            out[-1][:0] = out[-2][len(out[-2]) - take :]
            del out[-2][len(out[-2]) - take :]
        return out

    def path_reads(self, k: int) -> list[tuple[int, int]]:
        """(node, next token) of each log-probability item k sums."""
        return self.wanted[k]

    def counted(self) -> list[int]:
        """Tokens evaluated for each item: each node from ``cached`` on, counted for its owner."""
        n = [0] * len(self.paths)
        for i, p in enumerate(self.pos):
            if p >= self.cached:
                n[self.owner[i]] += 1
        return n

    def trunk_tokens(self) -> list[int]:
        """The tokens sequence 0 holds after the pass beyond ``cached``: the shared prefix."""
        if not self.paths:
            return []
        return [self.token[i] for i in self.paths[0][self.cached : self.trunk]]


def build_tree(items: Sequence[tuple[Sequence[int], int]], cache: Sequence[int], least: int = 1) -> Tree:
    """The tree of ``items`` ((full, start), each with at least one token to read:
    ``1 <= start < len(full)``) over a context whose sequence 0 holds ``cache``; of what the cache
    holds, as much is evaluated again as makes at least ``least`` tokens to evaluate, where the
    items have that many."""
    t = Tree()
    index: dict[tuple[int, int], int] = {}  # (parent node or -1, token): node
    for k, (full, start) in enumerate(items):
        if not 1 <= start < len(full):
            raise ValueError(f"item {k}: start {start} leaves nothing to read in {len(full)} tokens")
        parent, path = -1, []
        for p, token in enumerate(full[:-1]):
            node = index.get((parent, token))
            if node is None:
                node = index[parent, token] = len(t.token)
                t.token.append(token)
                t.pos.append(p)
                t.owner.append(k)
                t.seqs.append([])
            path.append(node)
            parent = node
        t.paths.append(path)
        t.wanted.append([(path[p], full[p + 1]) for p in range(start - 1, len(full) - 1)])
        for node, nxt in t.wanted[-1]:
            got = t.reads.setdefault(node, [])
            if nxt not in got:
                got.append(nxt)
    if not t.paths:
        return t
    first = items[0][0][:-1]
    t.trunk = min(_shared(first, full[:-1]) for full, _ in items)
    # Reused: what sequence 0 holds of the trunk, short of the first row an item reads (a row is
    # not kept between passes, so its position is evaluated again).
    t.cached = min([_shared(cache, first[: t.trunk])] + [start - 1 for _, start in items])
    todo = sum(p >= t.cached for p in t.pos)
    t.cached = max(0, t.cached - max(0, least - todo))  # the trunk: one node a position below it
    leaves = [path[-1] for path in t.paths]
    ends = sorted(set(leaves) - {n for path in t.paths for n in path[:-1]}, key=leaves.index)
    if len(ends) == 1:
        for path in t.paths:
            for node in path:
                t.seqs[node] = [0]
        return t
    t.sequences = len(ends) + 1
    seq_of = {end: s for s, end in enumerate(ends, start=1)}
    for path in t.paths:
        s = seq_of.get(path[-1])
        if s is None:  # this item's tokens are a prefix of another's: it lies in that one's sequence
            continue
        for node in path:
            if s not in t.seqs[node]:
                t.seqs[node].append(s)
    for node in t.paths[0][: t.trunk]:
        t.seqs[node].insert(0, 0)
    return t


def plan_passes(items: Sequence[tuple[Sequence[int], int]], window: int, max_sequences: int) -> list[list[int]]:
    """Indexes of ``items`` ((full, start)) cut, in order, into passes whose tree fits the context:
    at most ``window`` cells (distinct prefixes) and at most ``max_sequences - 1`` leaves (sequence
    0 is the trunk's; an item counts as a leaf unless its tokens are a prefix already there). An
    item alone must fit ``window`` (``len(full) <= window``)."""
    passes: list[list[int]] = []
    index: dict[tuple[int, int], int] = {}  # (parent or -1, token): node of the pass being filled
    leaves: set[int] = set()  # nodes that end a path and have no child: one sequence each
    for k, (full, _) in enumerate(items):
        parent, depth = -1, 0
        while depth < len(full) - 1 and (parent, full[depth]) in index:
            parent = index[parent, full[depth]]
            depth += 1
        new = len(full) - 1 - depth
        grown = len(leaves - {parent}) + 1 if new else len(leaves)  # a path extended, or one more
        if not passes or len(index) + new > window or grown > max_sequences - 1:
            passes.append([])
            index, leaves, parent, depth, new = {}, set(), -1, 0, len(full) - 1
        if new:
            for token in full[depth:-1]:
                node = index[parent, token] = len(index)
                leaves.discard(parent)
                parent = node
            leaves.add(parent)
        passes[-1].append(k)
    return passes
