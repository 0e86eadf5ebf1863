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
    saved = search.checkpoint()            # bytes (JSON): options, steps, usage, the model's answers
    ...
    run = Expansion(task, puzzle, generator, evaluator, client, Trace(path))   # a new run, same parts
    result = await (await Mcts.resume(saved, run)).to_end()   # the same result and trace as one run

A checkpoint is JSON (no pickle: nothing in it runs): the search's options, the steps taken, the
usage and the model's answers so far. Resuming replays those steps against the saved answers.
"""

from __future__ import annotations

import json
import math
from typing import Any, Awaitable, Callable, Generic, Hashable, Sequence, TypeVar

from solver.budget import BudgetExhausted
from solver.expansion import Expansion, SearchResult
from solver.node import Node, SeenStates
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["CHECKPOINT_FORMAT", "DECIMALS", "Steppable", "Transpositions", "quantise", "ranked"]

CHECKPOINT_FORMAT = 1  # bumped when what a checkpoint holds changes; an older one is refused in one line
MAX_CHECKPOINT = 256 * 2**20  # bytes read of a checkpoint: the model's answers of a long run fit
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
    ``finish`` gives the result, ``checkpoint`` saves the run between two steps and ``resume``
    takes it up on a new run of the same task, puzzle and parts. A subclass calls ``_begin`` first
    in ``__init__`` (with its options, as JSON values) and writes ``advance``; once ``__init__``
    returns, the search has begun (its ``search`` and ``root`` events are written)."""

    run: Expansion[S]
    options: dict[str, Any]
    steps_taken: int

    def _begin(self, run: Expansion[S], **options: Any) -> None:
        self.run, self.options, self.steps_taken = run, options, 0

    async def advance(self) -> bool:
        """One unit of the search; True when the search is over."""
        raise NotImplementedError

    async def step(self) -> bool:
        """One unit of the search; True when the search is over (``finish`` then gives its result)."""
        self.steps_taken += 1
        return await self.advance()

    def finish(self) -> SearchResult[S]:
        """The result, once ``step`` said the search is over."""
        raise NotImplementedError

    async def to_end(self) -> SearchResult[S]:
        """Step until the search is over; its result."""
        while not await self.step():
            pass
        return self.finish()

    def checkpoint(self) -> bytes:
        """The run so far, between two steps, as JSON: the search's name and options, the steps
        taken, and the run's books (usage, time, the model's answers: ``Expansion.books``)."""
        return json.dumps({"format": CHECKPOINT_FORMAT, "search": type(self).__qualname__, "options": self.options,
                           "steps": self.steps_taken, "books": self.run.books()}, ensure_ascii=False).encode()

    @classmethod
    async def resume(cls: type[_S], data: bytes, run: Expansion[Any]) -> _S:
        """The search ``checkpoint`` saved, going on in ``run`` (a new Expansion of the same task,
        puzzle, generator, evaluator and kind of client, not yet started; its trace receives the
        events from here on). The saved steps are replayed first, against the model's saved
        answers (no model call; no event: the first part's trace has them), which rebuilds the
        states held, the node ids and the counters exactly. ValueError in one line for a checkpoint
        of another search or format, or a malformed one."""
        try:
            saved = json.loads(data[:MAX_CHECKPOINT])
        except (ValueError, RecursionError, UnicodeDecodeError):
            raise ValueError("not a checkpoint of a search (not JSON, or larger than "
                             f"{MAX_CHECKPOINT // 2**20} MiB)") from None
        if not isinstance(saved, dict) or saved.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"not a checkpoint of format {CHECKPOINT_FORMAT}")
        if saved.get("search") != cls.__qualname__:
            raise ValueError(f"a checkpoint of {saved.get('search')}, not of {cls.__qualname__}")
        options, steps, books = saved.get("options"), saved.get("steps"), saved.get("books")
        if not isinstance(options, dict) or not isinstance(steps, int) or steps < 0 or not isinstance(books, dict):
            raise ValueError("a malformed checkpoint (options, steps or books)")
        real = run.trace
        run.trace = Trace()  # the replay's events are the first part's, already written
        try:
            run.take_memo(books)
            try:
                search = cls(run, **options)  # type: ignore[call-arg]
            except TypeError as exc:
                raise ValueError(f"the checkpoint's options do not fit {cls.__qualname__}: {exc}") from None
            for _ in range(steps):
                if await search.step():
                    break
        finally:
            run.trace = real
        run.restore_books(books)
        return search


async def visit_from_root(run: Expansion[S], visit: Callable[[Node[S]], Awaitable[tuple[Node[S], str] | None]], *,
                          searched_all: bool) -> SearchResult[S]:
    """A depth-first search's result: ``visit`` from the root, then the answer it found, the
    budget that ran out, or, when it found none, a search that ran out of states
    (``searched_all``: it tried every state it may, so the step may call that a proof)."""
    try:
        hit = await visit(run.root())
    except BudgetExhausted as exc:
        return run.result(None, None, exc.which)
    if hit is None:
        return run.result(None, None, None, searched_all=searched_all)
    return run.result(hit[0], hit[1], None)
