"""A recording proxy of a task: it forwards everything, and remembers what search did with it.

It records, for the scripted model, which state (or states) each prompt was made from, and, for
the invariant checks, every state the task handed to search (from ``root``, ``check`` and any
other method returning a verdict), with a snapshot of its contents taken when it was made. Every
state search hands back to the task must be one of those, unchanged.

Capabilities are forwarded by attribute lookup (``__getattr__``), so ``hasattr(proxy, name)``
holds exactly when it holds for the wrapped task. The task's composed ``parts`` are wrapped the
same way (``RecordingPart``), so what search does through a part found with
``solver.task_capabilities.find`` is recorded and checked like a call on the task.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable

from solver.task import Thought
from verifiers.verdict import Solved, Valid


def snapshot(state: Any) -> Any:
    """The full contents of a state, history fields included (``compare=False`` fields too), as
    nested tuples that compare equal exactly when the contents are equal: dataclass fields,
    ``__slots__`` and ``__dict__`` attributes, lists, tuples, dicts and sets (in sorted order)."""
    return _walk(state, set())


_ATOMS = (str, bytes, int, float, complex, bool, type(None), Fraction, Decimal)


def _walk(obj: Any, path: set[int]) -> Any:
    if isinstance(obj, _ATOMS):
        return (type(obj).__name__, repr(obj))
    if id(obj) in path:
        return ("<cycle>",)
    path.add(id(obj))
    try:
        kind = type(obj).__name__
        if isinstance(obj, (list, tuple)):
            return (kind, tuple(_walk(x, path) for x in obj))
        if isinstance(obj, (set, frozenset)):
            return (kind, tuple(sorted((_walk(x, path) for x in obj), key=repr)))
        if isinstance(obj, dict):
            return (kind, tuple(sorted(((_walk(k, path), _walk(v, path)) for k, v in obj.items()), key=repr)))
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return (kind, tuple((f.name, _walk(getattr(obj, f.name), path)) for f in dataclasses.fields(obj)))
        slots = [n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ()) if hasattr(obj, n)]
        attrs = dict(getattr(obj, "__dict__", {}))
        if slots or attrs:
            named = {**{n: getattr(obj, n) for n in slots}, **attrs}
            return (kind, tuple((n, _walk(v, path)) for n, v in sorted(named.items())))
        return (kind, repr(obj))
    finally:
        path.discard(id(obj))


@dataclass(slots=True)
class Asked:
    """What a prompt was made from: the prompt method's name without ``_prompt`` (``propose``,
    ``value``, ``vote``, ``choice``, ...), the states among its arguments, and how many
    options it listed (``choice_prompt``'s thoughts, ``vote_prompt``'s states)."""

    kind: str
    states: list[Any]
    options: int = 0


@dataclass(slots=True)
class CheckCall:
    parent: Any
    thought: str
    verdict: Any


@dataclass(slots=True)
class Made:
    state: Any
    snap: Any
    how: str  # e.g. "root" or "check('1 + 2 = 3')"


class RecordingTask:
    """Wraps ``task``; see the module docstring. ``foreign`` lists states search handed in that
    the task never made, ``problems`` states seen changed since they were made, while search ran.

    ``RecordingTask(task)`` is an instance of a subclass made for the task, whose class holds a
    forwarding property for each public attribute of the task: so ``hasattr`` and protocol checks
    that look attributes up statically (``isinstance`` on a runtime protocol, Python 3.12+) see
    exactly the task's capabilities."""

    def __new__(cls, task: Any) -> RecordingTask:
        names = frozenset(n for n in (*dir(type(task)), *getattr(task, "__dict__", {}))
                          if not n.startswith("_") and n not in _OWN)
        return object.__new__(_forwarding_class(cls, names))

    def __init__(self, task: Any) -> None:
        self.inner = task
        self.prompts: dict[str, Asked] = {}
        self.made: dict[int, Made] = {}
        self.check_calls: list[CheckCall] = []
        self.problems: list[str] = []
        self.foreign: list[str] = []
        self.state_types: set[type] = set()

    # ---- the core: every state search holds comes from these --------------------------------

    def root(self, puzzle: str) -> Any:
        state = self.inner.root(puzzle)
        self._made(state, "root")
        return state

    def check(self, state: Any, thought: Thought) -> Any:
        self._held(state, "check")
        verdict = self.inner.check(state, thought)
        if isinstance(verdict, (Valid, Solved)):
            self._made(verdict.state, f"check({thought.text[:60]!r})")
        self.check_calls.append(CheckCall(state, thought.text, verdict))
        return verdict

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        attr = getattr(self.inner, name)
        if not callable(attr) or isinstance(attr, type):
            return attr
        return self._wrap(name, attr)

    @property
    def parts(self) -> tuple[Any, ...]:
        """The task's parts, each wrapped so that its calls are recorded here (made once)."""
        wrapped = self.__dict__.get("_parts")
        if wrapped is None:
            wrapped = tuple(RecordingPart(self, p) for p in getattr(self.inner, "parts", None) or ())
            self.__dict__["_parts"] = wrapped
        return wrapped

    # ---- bookkeeping ---------------------------------------------------------------------------

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            states = [s for a in (*args, *kwargs.values()) for s in self._states_in(a)]
            for s in states:
                self._held(s, name)
            out = fn(*args, **kwargs)
            if isinstance(out, (Valid, Solved)):
                self._made(out.state, name)
            if name.endswith("_prompt") and isinstance(out, str):
                options = 0
                for a in args:
                    if isinstance(a, (list, tuple)) and a and not self._is_state(a):
                        options = len(a)
                self.prompts[out] = Asked(name[: -len("_prompt")], states, options)
            return out

        return call

    def _is_state(self, obj: Any) -> bool:
        return type(obj) in self.state_types

    def _states_in(self, arg: Any) -> list[Any]:
        if self._is_state(arg):
            return [arg]
        if isinstance(arg, (list, tuple)) and arg and all(self._is_state(a) for a in arg):
            return list(arg)
        return []

    def _made(self, state: Any, how: str) -> None:
        self.state_types.add(type(state))
        if id(state) not in self.made or self.made[id(state)].state is not state:
            self.made[id(state)] = Made(state, snapshot(state), how)

    def _held(self, state: Any, where: str) -> None:
        """``state`` was handed to the task by search: it must be a state the task made, unchanged."""
        rec = self.made.get(id(state))
        if rec is None or rec.state is not state:
            self.foreign.append(f"search handed {where} a state the task never made (not one it holds): "
                                f"{self.describe_safe(state)}")
        elif snapshot(state) != rec.snap:
            self.problems.append(f"a state changed after the task made it (by {rec.how}), seen by {where}: "
                                 f"now {self.describe_safe(state)}")
            rec.snap = snapshot(state)  # report each change once

    def changed(self) -> list[str]:
        """States whose contents differ now from when the task made them."""
        return [f"a state changed after the task made it (by {rec.how}): now {self.describe_safe(rec.state)}"
                for rec in self.made.values() if snapshot(rec.state) != rec.snap]

    def describe_safe(self, state: Any) -> str:
        try:
            return str(self.inner.describe(state))[:120]
        except Exception:
            return repr(state)[:120]


class RecordingPart:
    """Wraps one part of a recorded task: every method call goes through the owner's recording
    (states handed in must be the task's, unchanged; prompts remember their states)."""

    def __new__(cls, owner: RecordingTask, part: Any) -> RecordingPart:
        names = frozenset(n for n in (*dir(type(part)), *getattr(part, "__dict__", {}))
                          if not n.startswith("_") and n != "inner")
        return object.__new__(_forwarding_class(cls, names))

    def __init__(self, owner: RecordingTask, part: Any) -> None:
        self.inner, self._owner = part, owner

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """The part's class: a task's own generator or evaluator may look its part up by its
        concrete class (``find(task, CandidateWords)``), which must find the wrapped part."""
        return type(self.inner)

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "_owner"):  # not set yet: no recursion
            raise AttributeError(name)
        attr = getattr(self.inner, name)
        if not callable(attr) or isinstance(attr, type):
            return attr
        return self._owner._wrap(name, attr)


_OWN = frozenset(n for n in vars(RecordingTask) if not n.startswith("_")) | {
    "inner", "prompts", "made", "check_calls", "problems", "foreign", "state_types"}
_CLASSES: dict[tuple[type, frozenset[str]], type] = {}


def _forwarding_class(base: type, names: frozenset[str]) -> type:
    key = (base, names)
    if key not in _CLASSES:
        _CLASSES[key] = type(base.__name__, (base,), {n: property(_forwarder(n)) for n in sorted(names)})
    return _CLASSES[key]


def _forwarder(name: str) -> Callable[[Any], Any]:
    def get(self: Any) -> Any:
        return self.__getattr__(name)

    return get
