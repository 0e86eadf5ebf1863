"""What the searches share, in one module below them all: no search imports another (the import
contract "The searches stand alone" in pyproject.toml says so and lint-imports checks it).

``begin`` writes a search's ``search`` event (its options as they are) and gives its depth limit;
``quantise`` and ``ranked`` are how every search compares scores (rounded to ``DECIMALS`` places,
ties in generation order); ``Transpositions`` is the table of states a search already holds with
the smallest depth each was reached at (best-first and MCTS); ``Steppable`` is a search whose
whole state is one object, so that a run can be stepped, saved between two steps and resumed
(best-first and MCTS)::

    search = Mcts(MctsOptions(iterations=200))
    search.begin(run, SearchSettings("mcts"))  # the search event and the root
    for _ in range(50):
        if await search.step():            # one iteration; True once the search is over
            break
    saved = search.checkpoint()            # bytes (JSON): options, steps, usage, the model's answers
    ...
    run = open_run(task, puzzle, generator, evaluator, client, Trace(path))   # a new run, same parts
    result = await (await Mcts.resume(saved, run)).to_end()   # the same result and trace as one run

A checkpoint is JSON (no pickle: nothing in it runs): the search's options, the steps taken, the
run it belongs to (task, puzzle, generator, evaluator), the usage and the model's answers so far
(and its failed requests). Resuming replays those steps against the saved answers and asks the
model nothing; a checkpoint that does not replay to what it saved is refused in one line.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Awaitable, Callable, Generic, Hashable, Sequence, TypeVar

from solver.budget import BudgetExhausted
from solver.expansion import BUDGETS, Run, SearchResult
from solver.lm.session import NotSaved
from solver.node import Node, SeenStates
from solver.search_options import build_options, option_specs, options_of
from solver.settings import SearchSettings
from solver.trace import Trace

S = TypeVar("S", bound=Hashable)  # the task's state type, carried through the run
__all__ = ["CHECKPOINT_FORMAT", "DECIMALS", "Steppable", "Transpositions", "begin", "quantise", "ranked"]

CHECKPOINT_FORMAT = 3  # bumped when what a checkpoint holds changes; an older one is refused in one line
MAX_CHECKPOINT = 256 * 2**20  # bytes read of a checkpoint: the model's answers of a long run fit
_S = TypeVar("_S", bound="Steppable[Any]")

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


class Steppable(Generic[S]):
    """A search whose whole state is this object (the run's gated step aside, ``run``), made from
    its options: ``begin`` starts it on a run (its ``search`` and ``root`` events), ``step`` does one
    unit of the search (an expansion, an iteration) and says whether it is over, ``finish`` gives
    the result, ``checkpoint`` saves the run between two steps and ``resume`` takes it up on a new
    run of the same task, puzzle and parts. A subclass is a dataclass whose one field is
    ``options``; it extends ``begin`` and writes ``advance`` and ``finish``."""

    options: Any
    run: Run[S]
    settings: SearchSettings
    steps_taken: int
    stopped: str | None  # the budget that stopped the search (BudgetExhausted.which), if one did
    done: bool  # whether the search is over

    def begin(self, run: Run[S], settings: SearchSettings) -> None:
        """Start the search on ``run`` under ``settings`` (its depth limit and seed)."""
        self.run, self.settings, self.steps_taken, self.stopped, self.done = run, settings, 0, None, False

    async def __call__(self, run: Run[S], settings: SearchSettings) -> SearchResult[S]:
        """The whole search on ``run``: begun, stepped to its end, its result."""
        self.begin(run, settings)
        return await self.to_end()

    async def advance(self) -> bool:
        """One unit of the search; True when the search is over."""
        raise NotImplementedError

    async def step(self) -> bool:
        """One unit of the search; True when the search is over (``finish`` then gives its result;
        a budget that ran out is ``stopped``)."""
        self.steps_taken += 1
        try:
            return await self.advance()
        except BudgetExhausted as exc:
            self.stopped, self.done = exc.which, True
            return True

    def finish(self) -> SearchResult[S]:
        """The result, once ``step`` said the search is over."""
        raise NotImplementedError

    async def to_end(self) -> SearchResult[S]:
        """Step until the search is over; its result."""
        while not await self.step():
            pass
        return self.finish()

    def checkpoint(self) -> bytes:
        """The run so far, between two steps, as JSON: the search's name and options (with the
        depth limit and seed it was begun with), the steps taken, the budget that stopped it (if one
        did), the run it belongs to (``Run.identity``) and the run's books (usage, time, the
        model's answers: ``Run.books``)."""
        options = {**dataclasses.asdict(self.options), "depth": self.settings.depth, "seed": self.settings.seed}
        return json.dumps({"format": CHECKPOINT_FORMAT, "search": type(self).__qualname__, "options": options,
                           "steps": self.steps_taken, "stopped": self.stopped, "run": self.run.identity(),
                           "books": self.run.books()}, ensure_ascii=False).encode()

    @classmethod
    async def resume(cls: type[_S], data: bytes, run: Run[Any]) -> _S:
        """The search ``checkpoint`` saved, going on in ``run`` (a new run, ``open_run``, of the same task,
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
        own, settings = _options(cls, options)
        real = run.trace
        run.trace = Trace()  # the replay's events are the first part's, already written
        try:
            run.start_replay(books, stopped)
            search = cls(own)  # type: ignore[call-arg]
            search.begin(run, settings)
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


def _options(cls: type[Steppable[Any]], saved: dict[str, Any]) -> tuple[Any, SearchSettings]:
    """The search's options and settings a checkpoint saved; ValueError in one line for one the
    search does not take or whose value is not of its declared type or within its bounds."""
    declared = options_of(cls)
    depth, seed = saved.get("depth"), saved.get("seed", 0)
    try:
        unknown = sorted(set(saved) - {s.name for s in option_specs(declared)} - {"depth", "seed"})
        if unknown:
            raise ValueError(f"it takes no option {_said(unknown[0])}")
        for name, value in (("depth", depth), ("seed", seed)):
            if not (type(value) is int and -_MAX_INT < value < _MAX_INT or name == "depth" and value is None):
                raise ValueError(f"{name} is {_said(value)}")
        return build_options(declared, saved), SearchSettings(depth=depth, seed=seed)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"the checkpoint's options do not fit {cls.__qualname__}: {_line(exc)}") from None


async def visit_from_root(run: Run[S], visit: Callable[[Node[S]], Awaitable[tuple[Node[S], str] | None]], *,
                          searched_all: bool) -> SearchResult[S]:
    """A depth-first search's result: ``visit`` from the root, then the answer it found or, when
    it found none, a search that ran out of states (``searched_all``: it tried every state it may,
    so the run may call that a proof)."""
    hit = await visit(run.root())
    return run.result(None, None, None, searched_all=searched_all) if hit is None else run.result(*hit, None)
