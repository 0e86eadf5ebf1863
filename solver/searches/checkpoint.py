"""A run saved between two rounds of an asking search (``common.AskTell``), and taken up again.

``save(run, search)`` gives JSON bytes: the search's class and options, the run it belongs to
(``Run.identity``), a table of the nodes the search and the run hold (each as its parent, thought,
prior, solved flag, score and detail: no task state), the search's state fields, and the run's
books (node ids, counts, usage and seconds, the answers accepted, the model's answers so far: the memo).
``load(data, run, cls)`` takes it up on a new run of the same task, puzzle, generator, evaluator
and kind of client, which then goes on (``Run.drive``) to the trace and result of one run.
Nothing is replayed and the model is asked nothing: each node's state is rebuilt by the task's
exact checker from its parent's state and its thought (a thought that does not pass there, or not
as saved, refuses the checkpoint), and each field is read by its declared type (a node is its
index in the table). Nothing in a checkpoint runs when read (no pickle); anything malformed is a
``ValueError`` in one line before the run goes on, and so is a checkpoint changed since it was
saved (its sha256 digest). What a checkpoint says the search did (the states it explored, its
frontier, its visit counts) is taken as it says: an answer is still verified from the puzzle
text, but a proof of no solution from a resumed run rests on the checkpoint, which the digest
guards against accidental change, not against a forger who writes a new digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import time
import types
from typing import Any, Generic, Hashable, Sequence, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from solver.expansion import Run, rule_failure
from solver.node import Node, SeenStates
from solver.search_options import build_options, option_specs, options_of
from solver.task import Thought
from verifiers.verdict import Invalid, Solved

S = TypeVar("S", bound=Hashable)
T = TypeVar("T")
__all__ = ["FORMAT", "load", "save"]

FORMAT = 4  # bumped when what a checkpoint holds changes; another is refused in one line
MAX_BYTES = 256 * 2**20  # bytes read of a checkpoint: the model's answers of a long run fit
_MAX_INT = 2**63  # a saved whole number at or beyond this is not one a run uses
# The usage counts a checkpoint keeps (the rest of ``Usage`` is the run's own: its budget, its start).
_COUNTS = ("calls", "backend_calls", "cache_hits", "failed_calls", "score_calls", "failed_scores", "replayed_tokens",
           "prompt_tokens", "completion_tokens", "reasoning_tokens", "steps")


@dataclasses.dataclass
class _Books(Generic[S]):
    """What a checkpoint keeps of the run around the search: the gated step's counters, the
    deepest node, the answer held, the answers accepted, the thoughts probed, the usage."""

    made: int
    proposed: int
    rejected: int
    expanded: int
    checks: int
    not_tried: int
    limits: list[str]
    best: Node[S] | None
    found: tuple[Node[S], str] | None
    accepted: list[str]
    depth_cut: bool
    probed: list[tuple[Node[S], str]]
    usage: dict[str, int]
    elapsed: float


class _Bad(Exception):
    """A malformed part of a checkpoint (its message says which)."""


def _state_fields(cls: type) -> list[str]:
    """A search's state: its dataclass fields other than ``options``."""
    return [f.name for f in dataclasses.fields(cls) if f.name != "options"]


def save(run: Run[Any], search: Any) -> bytes:
    """``search`` (begun on ``run``, between two cycles) and ``run``'s books, as JSON bytes."""
    writer = _Writer()
    state = {name: writer.value(getattr(search, name)) for name in _state_fields(type(search))}
    step = run.step
    books = _Books(step.nodes.made, step.proposed, step.rejected, step.expanded, step.checks, step.not_tried,
                   list(step.limits), run.best, run.found, list(run.reports), run.depth_cut,
                   step.probed(),
                   {name: getattr(run.usage, name) for name in _COUNTS}, run.usage.seconds)
    saved_books = writer.value(books)
    body = {"format": FORMAT, "search": type(search).__qualname__, "options": dataclasses.asdict(search.options),
            "run": run.identity(), "nodes": writer.table, "state": state, "books": saved_books,
            "memo": run.model.memo_state() if run.model is not None else None}
    return json.dumps({**body, "digest": _digest(body)}, ensure_ascii=False).encode()


def _digest(body: dict[str, Any]) -> str:
    """The sha256 of a checkpoint's content: a checkpoint changed since it was saved is refused."""
    return hashlib.sha256(json.dumps(body, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def load(data: bytes, run: Run[S], cls: type[T]) -> T:
    """The search ``save`` saved, going on in ``run`` (a new run, ``open_run``, of the same task,
    puzzle, generator, evaluator and kind of client, not begun; its trace receives the events from
    here on). ValueError in one line for a checkpoint of another search, format or run, or a
    malformed one."""
    try:
        saved = json.loads(data[:MAX_BYTES])
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise ValueError(f"not a checkpoint of a search (not JSON, or larger than {MAX_BYTES // 2**20} MiB)") from None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        raise ValueError(f"not a checkpoint of format {FORMAT}")
    if saved.pop("digest", None) != _digest(saved):
        raise ValueError("the checkpoint was changed since it was saved (its digest does not match)")
    if saved.get("search") != cls.__qualname__:
        raise ValueError(f"a checkpoint of {_said(saved.get('search'))}, not of {cls.__qualname__}")
    ours, theirs = run.identity(), saved.get("run")
    if not isinstance(theirs, dict) or set(theirs) != set(ours):
        raise ValueError("a malformed checkpoint (the run it belongs to)")
    for what, value in ours.items():
        if theirs[what] != value:
            raise ValueError(f"the checkpoint is of another run: its {what} is {_said(theirs[what])}, "
                             f"this run's {_said(value)}")
    search = cls(_options(cls, saved.get("options")))  # type: ignore[call-arg]
    try:
        reader = _Reader(run, saved.get("nodes"))
        hints, state = get_type_hints(cls), saved.get("state")
        names = _state_fields(cls)
        if not isinstance(state, dict) or set(state) != set(names):
            raise _Bad("the search's state")
        for name in names:
            setattr(search, name, reader.read(hints[name], state[name], name))
        books = reader.read(_Books[Any], saved.get("books"), "the run's books")
        _restore(run, books, saved.get("memo"), reader.nodes)
        run.loaded = True
    except (_Bad, RecursionError) as exc:
        raise ValueError(f"a malformed checkpoint ({exc or 'nested too deep'})") from None
    return search


def _restore(run: Run[Any], books: _Books[Any], memo: object, nodes: list[Node[Any]]) -> None:
    """The run's books as saved (``_Bad`` where they are not books a run keeps)."""
    step = run.step
    if books.made <= max((n.id for n in nodes), default=-1):
        raise _Bad("the run's books: node ids (one at or above the next id)")
    if set(books.usage) != set(_COUNTS) or not all(0 <= v for v in books.usage.values()):
        raise _Bad("the run's books: usage (each count a whole number from 0)")
    if not 0 <= books.elapsed < _MAX_INT:  # NaN fails this too
        raise _Bad("the run's books: elapsed (seconds, a finite number from 0)")
    counts = (books.proposed, books.rejected, books.expanded, books.checks, books.not_tried)
    if min(counts) < 0:
        raise _Bad("the run's books: counts")
    step.nodes.made, step.limits = books.made, list(books.limits)
    step.proposed, step.rejected, step.expanded, step.checks, step.not_tried = counts
    for node, text in books.probed:
        if not step.reprobe(node, Thought(text)):
            raise _Bad("the run's books: a probed thought the gate refuses")
    if books.found is not None and books.found[1] not in books.accepted:
        raise _Bad("the run's books: the answer held was not accepted")
    if any(rule_failure(run.task, run.puzzle, a) is not None for a in books.accepted):
        raise _Bad("the run's books: an answer accepted that breaks the puzzle's rules")
    run.reports = {a: run.task.report_answer(run.puzzle, a) for a in books.accepted}
    run.best, run.found, run.depth_cut = books.best, books.found, books.depth_cut
    if (memo is None) != (run.model is None):
        raise _Bad("it was saved with" + (" no" if memo is None else "") +
                   " model client; resume it the same way")
    if run.model is not None:
        try:
            run.model.restore_memo(memo)
        except ValueError as exc:
            raise _Bad(str(exc).removeprefix("the checkpoint's ")) from None
    for name in _COUNTS:  # in place: the model session counts on this object
        setattr(run.usage, name, books.usage[name])
    run.usage.started = time.monotonic() - books.elapsed


class _Writer:
    """JSON for a search's state: a node is its index in ``table`` (its ancestors first)."""

    def __init__(self) -> None:
        self.index: dict[int, int] = {}
        self.table: list[list[Any]] = []

    def node(self, node: Node[Any]) -> int:
        path: list[Node[Any]] = []
        at: Node[Any] | None = node
        while at is not None and id(at) not in self.index:
            path.append(at)
            at = at.parent
        for n in reversed(path):
            parent = None if n.parent is None else self.index[id(n.parent)]
            self.index[id(n)] = len(self.table)
            self.table.append([n.id, parent, n.thought, n.prior, n.solved, n.score, n.detail])
        return self.index[id(node)]

    def value(self, v: Any) -> Any:
        if isinstance(v, Node):
            return self.node(v)
        if isinstance(v, SeenStates):
            return {"any_depth": v.any_depth, "held": [self.node(n) for n in v.held.values()]}
        if isinstance(v, random.Random):
            return self.value(v.getstate())
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return {f.name: self.value(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if isinstance(v, dict):
            return [[self.value(k), self.value(x)] for k, x in v.items()]
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        if isinstance(v, (set, frozenset)):
            return sorted(self.value(x) for x in v)
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        raise TypeError(f"a search's state holds a {type(v).__name__}, which a checkpoint cannot save")


class _Reader(Generic[S]):
    """A checkpoint's values read by their declared types; its nodes rebuilt by the exact checker."""

    def __init__(self, run: Run[S], table: object) -> None:
        if not isinstance(table, list):
            raise _Bad("the nodes")
        root, root_solved = run.root_state()
        self.nodes: list[Node[S]] = []
        for i, entry in enumerate(table):
            if not isinstance(entry, list) or len(entry) != 7:
                raise _Bad(f"node {i}")
            nid, parent = self.read(int, entry[0], f"node {i}"), self.read(int | None, entry[1], f"node {i}")
            thought, prior = self.read(str, entry[2], f"node {i}"), self.read(float | None, entry[3], f"node {i}")
            solved, score = self.read(bool, entry[4], f"node {i}"), self.read(float | None, entry[5], f"node {i}")
            if parent is None:
                if thought or solved != root_solved:
                    raise _Bad(f"node {i}: not this run's root")
                node = Node(nid, root, None, 0, score=score, detail=entry[6])
            else:
                if not 0 <= parent < i:
                    raise _Bad(f"node {i}: its parent")
                up = self.nodes[parent]
                verdict, _ = run.step.verdict_of(up.state, Thought(thought, prior))
                if isinstance(verdict, Invalid) or isinstance(verdict, Solved) != solved:
                    raise _Bad(f"node {i}: its thought does not pass the checker at its parent's state as saved")
                node = Node(nid, verdict.state, up, up.depth + 1, thought, prior, solved, verdict.note, score, entry[6])
            self.nodes.append(node)

    def read(self, tp: Any, v: Any, where: str) -> Any:
        """``v`` as a value of type ``tp`` (``_Bad`` naming ``where`` when it is not one)."""
        origin, args = get_origin(tp) or tp, get_args(tp)
        if tp is Any:
            return v
        if origin in (Union, types.UnionType):
            if v is None and type(None) in args:
                return None
            for a in args:
                if a is not type(None):
                    try:
                        return self.read(a, v, where)
                    except _Bad:
                        pass
            raise _Bad(where)
        if origin is bool or origin is int:
            if type(v) is not origin or origin is int and not -_MAX_INT < v < _MAX_INT:
                raise _Bad(where)
            return v
        if origin is float:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or isinstance(v, int) and abs(v) >= _MAX_INT:
                raise _Bad(where)
            return float(v)
        if origin is str:
            if not isinstance(v, str):
                raise _Bad(where)
            return v
        if origin is Node:
            if type(v) is not int or not 0 <= v < len(self.nodes):
                raise _Bad(f"{where}: a node")
            return self.nodes[v]
        if isinstance(origin, type) and issubclass(origin, SeenStates):
            if not isinstance(v, dict) or set(v) != {"any_depth", "held"}:
                raise _Bad(where)
            table = origin(any_depth=self.read(bool, v["any_depth"], where))
            for node in self.read(list[Node[Any]], v["held"], where):
                table.record(node)
            return table
        if origin is random.Random:
            rng = random.Random()
            try:
                rng.setstate(self.read(tuple[int, tuple[int, ...], float | None], v, where))
            except (ValueError, TypeError, OverflowError):
                raise _Bad(f"{where}: a random generator's state") from None
            return rng
        if isinstance(v, list) and origin in (list, Sequence, set, frozenset):
            items = [self.read(args[0], x, where) for x in v]
            return items if origin in (list, Sequence) else origin(items)
        if isinstance(v, list) and origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(self.read(args[0], x, where) for x in v)
            if len(args) != len(v):
                raise _Bad(where)
            return tuple(self.read(a, x, where) for a, x in zip(args, v, strict=True))
        if isinstance(v, list) and origin is dict:
            if not all(isinstance(p, list) and len(p) == 2 for p in v):
                raise _Bad(where)
            return {self.read(args[0], k, where): self.read(args[1], x, where) for k, x in v}
        if dataclasses.is_dataclass(origin) and isinstance(v, dict):
            names = [f.name for f in dataclasses.fields(origin)]
            if set(v) != set(names):
                raise _Bad(where)
            hints = get_type_hints(origin)
            return cast(Any, origin)(**{n: self.read(hints[n], v[n], f"{where}.{n}") for n in names})
        raise _Bad(where)


def _options(cls: type, saved: object) -> Any:
    """The search's options a checkpoint saved; ValueError in one line for one it does not take or
    whose value is not of its declared type or within its bounds."""
    declared = options_of(cls)
    if not isinstance(saved, dict):
        raise ValueError("a malformed checkpoint (the search's options)")
    try:
        unknown = sorted(set(saved) - {s.name for s in option_specs(declared)})
        if unknown:
            raise ValueError(f"it takes no option {_said(unknown[0])}")
        return build_options(declared, saved)
    except (ValueError, OverflowError) as exc:
        lines = str(exc).splitlines()
        raise ValueError(f"the checkpoint's options do not fit {cls.__qualname__}: {lines[0] if lines else exc}") \
            from None


def _said(value: object) -> str:
    """A value read from a checkpoint, quoted on one line and cut short."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

