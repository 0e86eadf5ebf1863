"""What the searches share, in one module below them all: no search imports another (the import
contract "The searches stand alone" in pyproject.toml says so and lint-imports checks it).

``quantise`` and ``ranked`` are how every search compares scores (rounded to ``DECIMALS`` places,
ties in generation order); ``Transpositions`` is the table of states a search already holds with
the smallest depth each was reached at (best-first and MCTS); ``Steppable`` is a search whose
whole state is one object, so that a run can be stepped, saved between two steps and resumed
(best-first and MCTS)::

    search = Mcts(run, iterations=200)     # the search event and the root, as search_mcts
    for _ in range(50):
        if await search.step():            # one iteration; True once the search is over
            break
    saved = search.checkpoint()            # bytes: the search's state and the run's books
    ...
    run = Expansion(task, puzzle, generator, evaluator, client, Trace(path))   # a new run, same parts
    result = await Mcts.resume(saved, run).to_end()   # the same result and trace as one run

A checkpoint is a pickle: load only checkpoints you wrote yourself.
"""

from __future__ import annotations

import math
import pickle
from typing import Any, Generic, Hashable, Sequence, TypeVar

from solver.expansion import Expansion, SearchResult
from solver.node import Node, SeenStates

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["CHECKPOINT_FORMAT", "DECIMALS", "Steppable", "Transpositions", "quantise", "ranked"]

CHECKPOINT_FORMAT = 1  # bumped when what a checkpoint holds changes; an older one is refused in one line
_S = TypeVar("_S", bound="Steppable[Any]")

DECIMALS = 3  # scores equal to 3 decimal places are ties, broken by the generator's order


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

    def open_children(self, run: Expansion[S], children: list[Node[S]], max_depth: int) -> list[Node[S]]:
        """The children worth a judgement. Left out, each said in the trace but the first: a
        solved state (reaching here, its answer failed the re-check: nothing below it), a
        duplicate (``fresh``), one at the depth limit (``Expansion.cut_at_depth``)."""
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


class Steppable(Generic[S]):
    """A search whose whole state is this object (the run's gated step aside, ``run``): ``step``
    does one unit of the search (an expansion, an iteration) and says whether it is over,
    ``finish`` gives the result, ``checkpoint`` saves the state between two steps and ``resume``
    takes it up on a new run of the same task, puzzle and parts. Subclasses set ``run`` in
    ``__init__`` (after which the search has begun: its ``search`` and ``root`` events are written)."""

    run: Expansion[S]

    async def step(self) -> bool:
        """One unit of the search; True when the search is over (``finish`` then gives its result)."""
        raise NotImplementedError

    def finish(self) -> SearchResult[S]:
        """The result, once ``step`` said the search is over."""
        raise NotImplementedError

    async def to_end(self) -> SearchResult[S]:
        """Step until the search is over; its result."""
        while not await self.step():
            pass
        return self.finish()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("run", None)  # the run is the resumed one's, with its own task, parts, client and trace
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def checkpoint(self) -> bytes:
        """This search's state and its run's books (``Expansion.books``), between two steps, as
        bytes (a pickle, in one piece, so that nodes shared by both stay one object each)."""
        return pickle.dumps({"format": CHECKPOINT_FORMAT, "search": type(self).__qualname__, "state": self,
                             "books": self.run.books()}, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def resume(cls: type[_S], data: bytes, run: Expansion[Any]) -> _S:
        """The search ``checkpoint`` saved, going on in ``run`` (a new Expansion of the same task,
        puzzle, generator, evaluator and kind of client, not yet started; its trace receives the
        events from here on). ValueError in one line for another search's or format's checkpoint."""
        try:
            saved = pickle.loads(data)  # noqa: S301 - the user's own checkpoint, as the docs say
        except Exception as exc:  # noqa: BLE001 - any unreadable checkpoint is one line
            raise ValueError(f"not a checkpoint of a search: {type(exc).__name__}") from None
        if not isinstance(saved, dict) or saved.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"not a checkpoint of format {CHECKPOINT_FORMAT}")
        if saved.get("search") != cls.__qualname__ or not isinstance(saved.get("state"), cls):
            raise ValueError(f"a checkpoint of {saved.get('search')}, not of {cls.__qualname__}")
        search: _S = saved["state"]
        run.restore_books(saved["books"])
        search.run = run
        return search
