"""The composition check of the testing kit: every part a task composes is what it claims.

``solver.task_capabilities.find(task, Capability)`` trusts ``isinstance`` on a runtime protocol, which
only asks whether the member names exist. ``check_parts(task)`` asks more of each part found for
each capability: every member the protocol declares is there, a method is callable with the
protocol's parameters (by name and by position), a coroutine method where the protocol's is
``async``, and the task's ``parts`` is a sequence of objects each of which gives at least one
capability (a part that gives none is a typo waiting to be found at run time).
"""

from __future__ import annotations

import inspect
from typing import Any

import solver.baseline_capabilities  # noqa: F401 - registers the baselines' capabilities in CAPABILITIES
from solver.task import Task
from solver.task_capabilities import CAPABILITIES, find

__all__ = ["PartBroken", "check_parts", "protocol_members"]


class PartBroken(AssertionError):
    """A task's part (or the task itself) does not really implement a capability it is found for."""


def protocol_members(protocol: type) -> dict[str, Any]:
    """The members a runtime protocol declares: name -> its function (methods, properties'
    getters) or None (plain attributes)."""
    out: dict[str, Any] = {}
    for cls in protocol.__mro__:
        if cls is not protocol and not getattr(cls, "_is_protocol", False):
            continue  # object, Generic: not the protocol's own members
        for name in getattr(cls, "__annotations__", {}):
            if not name.startswith("_"):
                out.setdefault(name, None)
        for name, value in vars(cls).items():
            if name.startswith("_"):
                continue
            if isinstance(value, property):
                out.setdefault(name, None)
            elif inspect.isfunction(value):
                out.setdefault(name, value)
    return out


def _binds(impl: Any, spec: Any) -> str | None:
    """Why ``impl`` (a bound method) cannot be called as ``spec`` (the protocol's function) is, or None."""
    try:
        sig = inspect.signature(impl)
    except (TypeError, ValueError):
        return None  # a builtin without a signature: nothing to compare
    params = [p for p in inspect.signature(spec).parameters.values() if p.name != "self"]
    positional = [object() for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
    keywords = {p.name: object() for p in params if p.kind == p.KEYWORD_ONLY}
    try:
        sig.bind(*positional, **keywords)
    except TypeError as exc:
        return f"cannot be called as {spec.__name__}{inspect.signature(spec)}: {exc}"
    if inspect.iscoroutinefunction(spec) and not inspect.iscoroutinefunction(impl):
        return "must be async (the protocol's method is)"
    return None


def check_parts(task: Any) -> dict[type, Any]:
    """Check every capability ``task`` is found to have (on itself or a part): each protocol
    member exists, methods are callable with the protocol's parameters (async where it is), and
    every object in ``task.parts`` gives at least one capability. Returns {capability: part}
    for those found; raises ``PartBroken`` naming the part, the capability and the member."""
    if not isinstance(task, Task):
        raise PartBroken(f"{type(task).__name__} lacks the core Task protocol (name, max_depth, root, check, "
                         "answer, report_answer, describe)")
    parts = getattr(task, "parts", None)
    if parts is not None and (isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__")):
        raise PartBroken(f"{type(task).__name__}.parts must be a tuple of part objects, not {type(parts).__name__}")
    found: dict[type, Any] = {}
    for cap in CAPABILITIES:
        part = find(task, cap)
        if part is None:
            continue
        found[cap] = part
        for name, spec in protocol_members(cap).items():
            where = f"{type(part).__name__}.{name} (found for {cap.__name__} on {type(task).__name__})"
            if not hasattr(part, name):
                raise PartBroken(f"{where} is missing")
            if spec is not None:
                impl = getattr(part, name)
                if not callable(impl):
                    raise PartBroken(f"{where} is not callable")
                problem = _binds(impl, spec)
                if problem:
                    raise PartBroken(f"{where} {problem}")
    for p in parts or ():
        if not any(isinstance(p, cap) for cap in CAPABILITIES):
            raise PartBroken(f"part {type(p).__name__} of {type(task).__name__} gives no capability of "
                             "solver.task_capabilities")
    return found
