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
run it belongs to (task, puzzle, generator, evaluator), the usage and the model's answers so far
(and its failed requests). Resuming replays those steps against the saved answers and asks the
model nothing; a checkpoint that does not replay to what it saved is refused in one line.
"""

from __future__ import annotations

import inspect
import json
import math
import types
import typing
from typing import Any, Awaitable, Callable, Generic, Hashable, Sequence, TypeVar

from solver.budget import BudgetExhausted
from solver.expansion import BUDGETS, Expansion, SearchResult
from solver.lm.session import NotSaved
from solver.node import Node, SeenStates
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["CHECKPOINT_FORMAT", "DECIMALS", "Steppable", "Transpositions", "quantise", "ranked"]

CHECKPOINT_FORMAT = 2  # bumped when what a checkpoint holds changes; an older one is refused in one line
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
    stopped: str | None  # the budget that stopped the search (BudgetExhausted.which), if one did

    def _begin(self, run: Expansion[S], **options: Any) -> None:
        self.run, self.options, self.steps_taken, self.stopped = run, options, 0, None

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
        taken, the budget that stopped it (if one did), the run it belongs to (``Expansion.identity``)
        and the run's books (usage, time, the model's answers: ``Expansion.books``)."""
        return json.dumps({"format": CHECKPOINT_FORMAT, "search": type(self).__qualname__, "options": self.options,
                           "steps": self.steps_taken, "stopped": self.stopped, "run": self.run.identity(),
                           "books": self.run.books()}, ensure_ascii=False).encode()

    @classmethod
    async def resume(cls: type[_S], data: bytes, run: Expansion[Any]) -> _S:
        """The search ``checkpoint`` saved, going on in ``run`` (a new Expansion of the same task,
        puzzle, generator, evaluator and kind of client, not yet started; its trace receives the
        events from here on). The saved steps are replayed first, against the model's saved
        answers (no model call; no event: the first part's trace has them), which rebuilds the
        states held, the node ids and the counters exactly. ValueError in one line for a checkpoint
        of another search, format or run (task, puzzle, generator, evaluator), a malformed one, or
        one that does not replay to what it saved (its steps need a model answer it does not hold,
        take more steps or calls than it saved, or count otherwise: it was altered)."""
        try:
            saved = json.loads(data[:MAX_CHECKPOINT])
        except (ValueError, RecursionError, UnicodeDecodeError):
            raise ValueError("not a checkpoint of a search (not JSON, or larger than "
                             f"{MAX_CHECKPOINT // 2**20} MiB)") from None
        if not isinstance(saved, dict) or saved.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"not a checkpoint of format {CHECKPOINT_FORMAT}")
        if saved.get("search") != cls.__qualname__:
            name = saved.get("search")
            shown = name if isinstance(name, str) and name.isidentifier() and len(name) <= 80 else _said(name)
            raise ValueError(f"a checkpoint of {shown}, not of {cls.__qualname__}")
        options, steps, books, stopped = (saved.get(k) for k in ("options", "steps", "books", "stopped"))
        if not isinstance(options, dict) or type(steps) is not int or not 0 <= steps < _MAX_INT or \
                not isinstance(books, dict) or stopped not in (None, *BUDGETS):
            raise ValueError("a malformed checkpoint (options, steps, stopped or books)")
        ours = run.identity()
        theirs = saved.get("run")
        if not isinstance(theirs, dict) or set(theirs) != set(ours):
            raise ValueError("a malformed checkpoint (the run it belongs to)")
        for what, value in ours.items():
            if theirs[what] != value:
                raise ValueError(f"the checkpoint is of another run: its {what} is {_said(theirs[what])}, "
                                 f"this run's {_said(value)}")
        _check_options(cls, options)
        real = run.trace
        run.trace = Trace()  # the replay's events are the first part's, already written
        try:
            run.start_replay(books, stopped)
            try:
                search = cls(run, **options)  # type: ignore[call-arg]
            except (TypeError, ValueError) as exc:
                raise ValueError(f"the checkpoint's options do not fit {cls.__qualname__}: {_line(exc)}") from None
            for _ in range(steps):
                if await search.step():
                    break
            run.restore_books(books)
        except NotSaved as exc:
            raise ValueError(f"the checkpoint does not replay on this run: {exc} (it is of another run, or "
                             "it was altered)") from None
        finally:
            run.end_replay()
            run.trace = real
        search.steps_taken = steps
        return search


_MAX_INT = 2**63  # a saved whole number at or beyond this is not one a run uses


def _said(value: object) -> str:
    """A value read from a checkpoint, quoted on one line and cut short."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _line(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return lines[0] if lines else type(exc).__name__


def _fits(value: object, hint: Any) -> bool:
    """Whether a JSON value read from a checkpoint is of an option's declared type (int, float,
    bool, str, None and unions of them; a whole number within 2**63; a float finite, where an int
    may stand for it). Other types are left to the search's own checks."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return type(value) is int and -_MAX_INT < value < _MAX_INT
    if hint is float:
        # inf and NaN fail the bounds; a bool is not a number here
        return isinstance(value, (int, float)) and type(value) is not bool and -_MAX_INT < value < _MAX_INT
    if hint is str:
        return isinstance(value, str)
    return True


def _check_options(cls: type[Steppable[Any]], options: dict[str, Any]) -> None:
    """ValueError in one line for a saved option the search does not take or whose value is not
    of its declared type (so the search never meets a string depth or a float beyond range)."""
    params = inspect.signature(cls.__init__).parameters
    try:
        hints = typing.get_type_hints(cls.__init__)
    except (NameError, TypeError):  # annotations that cannot be resolved here: the search checks its own
        hints = {}
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    anything = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for name, value in options.items():
        param = params.get(name)
        if name in ("self", "run") or (not anything and (param is None or param.kind not in named)):
            raise ValueError(f"the checkpoint's options do not fit {cls.__qualname__}: it takes no option "
                             f"{_said(name)}")
        if name in hints and not _fits(value, hints[name]):
            raise ValueError(f"the checkpoint's options do not fit {cls.__qualname__}: {name} is {_said(value)}")


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
