"""A search's own options, declared once: a dataclass whose fields are made by ``option``.

A search class takes one instance of it (``Bfs(BfsOptions(breadth=2))``; a search written as a
function names it, ``register_search(..., options=...)``); ``tot solve`` and ``tot bench`` make
their flags from its fields, ``tot list --json`` lists them, ``run_search`` takes them as keywords,
``SearchSettings.options`` holds the instance and the search event writes it as it is. Adding an
option is adding a field, read where it is used::

    @dataclass(frozen=True)
    class RandomFirstOptions(Options):
        tries: int = option(3, "random orders tried from the root", at_least=1)

    # tot solve game24 "4 9 10 13" --method random-first --tries 5
    # in the search: self.options.tries (a class), settings.own(RandomFirstOptions).tries (a function)

A field's type is one of ``int``, ``float``, ``bool``, ``str`` or one of those ``| None``. A
boolean whose default is True gets the flag ``--no-NAME`` (given: False); one whose default is
False gets ``--NAME``. The bounds (``at_least``, ``above``, ``at_most``) are checked wherever the
options are built (made from ``Options``, when an instance is made); a float must be finite.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass
from typing import Mapping, TypeVar, Union

__all__ = ["NoOptions", "OptionSpec", "OptionValue", "Options", "build_options", "check_value", "option",
           "option_specs", "options_of"]

OptionsT = TypeVar("OptionsT")
T = TypeVar("T")
OptionValue = Union[int, float, bool, str, None]
"""A value an option may hold (its declared type, or None where it is ``| None``)."""

_KEY = "tot_option"  # the metadata key of a field made by ``option``


@dataclass(frozen=True, slots=True)
class _Meta:
    help: str
    flag: str | None
    short: str | None
    dest: str | None
    at_least: float | None
    above: float | None
    at_most: float | None


def option(default: T, help: str, *, flag: str | None = None, short: str | None = None, dest: str | None = None,
           at_least: float | None = None, above: float | None = None, at_most: float | None = None) -> T:
    """A field of a search's options: its default, one line of help, and optionally its flag
    (default ``--name-with-dashes``), a short flag, the command line's name for it where it differs
    (``dest``, kept for results directories written before) and bounds."""
    meta = _Meta(help, flag, short, dest, at_least, above, at_most)
    made: T = dataclasses.field(default=default, metadata={_KEY: meta})
    return made


class Options:
    """A base of a search's options dataclass: an instance is checked when it is made (each
    field's type and bounds; ValueError in one line), so no search checks its options again."""

    def __post_init__(self) -> None:
        for spec in option_specs(type(self)):
            check_value(spec, getattr(self, spec.name))


@dataclass(frozen=True)
class NoOptions(Options):
    """The options of a search that has none of its own (it takes only depth and seed)."""


def options_of(search: type) -> type:
    """The options dataclass a search class takes: the type of its ``options`` field; TypeError
    in one line for a class that declares none."""
    found = typing.get_type_hints(search).get("options")
    if not (isinstance(found, type) and dataclasses.is_dataclass(found)):
        raise TypeError(f"search class {search.__name__} must take its options dataclass as `options`")
    return found


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One declared option as the command line and the listings see it."""

    name: str
    type: type  # int, float, bool or str
    optional: bool  # None is a value (``int | None``)
    default: OptionValue
    help: str
    flag: str
    short: str | None
    dest: str  # the argparse destination
    at_least: float | None = None
    above: float | None = None
    at_most: float | None = None

    @property
    def negated(self) -> bool:
        """A boolean that is on by default: its flag turns it off (``--no-early-stop``)."""
        return self.type is bool and self.default is True

    def describe(self) -> dict[str, OptionValue]:
        """JSON for ``tot list --json``."""
        kind = self.type.__name__ + (" | None" if self.optional else "")
        out: dict[str, OptionValue] = {"name": self.name, "flag": self.flag, "type": kind,
               "default": self.default, "help": self.help}
        for bound in ("at_least", "above", "at_most"):
            if getattr(self, bound) is not None:
                out[bound] = getattr(self, bound)
        return out


_TYPES = (int, float, bool, str)


def _field_type(cls: type, f: dataclasses.Field[object], hints: Mapping[str, object]) -> tuple[type, bool]:
    hint = hints[f.name]
    args = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
    optional = type(None) in args
    rest = [a for a in args if a is not type(None)]
    if len(rest) != 1 or rest[0] not in _TYPES:
        raise TypeError(f"option {cls.__name__}.{f.name} must be int, float, bool or str (or that | None), "
                        f"not {hint!r}")
    return rest[0], optional


def option_specs(cls: type) -> tuple[OptionSpec, ...]:
    """The options ``cls`` (a dataclass of ``option`` fields) declares, in field order; TypeError
    in one line for a class that is not one."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"a search's options must be a dataclass, not {cls!r}")
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        meta = f.metadata.get(_KEY)
        if not isinstance(meta, _Meta):
            raise TypeError(f"option {cls.__name__}.{f.name} must be made by solver.search_options.option(...)")
        kind, optional = _field_type(cls, f, hints)
        negated = kind is bool and f.default is True
        dashed = f.name.replace("_", "-")
        flag = meta.flag or (f"--no-{dashed}" if negated else f"--{dashed}")
        dest = meta.dest or (f"no_{f.name}" if negated else f.name)
        spec = OptionSpec(f.name, kind, optional, None, meta.help, flag, meta.short, dest, meta.at_least,
                          meta.above, meta.at_most)
        try:  # the default itself must be a value the option allows
            out.append(dataclasses.replace(spec, default=check_value(spec, f.default)))
        except ValueError as exc:
            raise TypeError(f"option {cls.__name__}.{f.name}'s default: {exc}") from None
    return tuple(out)


def check_value(spec: OptionSpec, value: object, label: str | None = None) -> OptionValue:
    """``value`` if it is a valid value of ``spec``, else ValueError in one line naming ``label``
    (default: the option's name). An int is taken where a float is declared."""
    name = label or spec.name
    if value is None:
        if spec.optional:
            return None
        raise ValueError(f"{name} must be given (it has no 'none')")
    if spec.type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, (int, float, bool, str)) or not isinstance(value, spec.type) or \
            (spec.type is int and isinstance(value, bool)):
        raise ValueError(f"{name} must be {'a whole number' if spec.type is int else spec.type.__name__}, "
                         f"not {value!r}")
    if not isinstance(value, (int, float)):
        return value
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    low = spec.at_least if spec.at_least is not None else spec.above
    if spec.at_most is not None and low is not None:
        left = "[" if spec.at_least is not None else "("
        if not (number >= low if spec.at_least is not None else number > low) or number > spec.at_most:
            raise ValueError(f"{name} must lie in {left}{low:g}, {spec.at_most:g}], not {value!r}")
    elif spec.at_least is not None and number < spec.at_least:
        raise ValueError(f"{name} must be at least {spec.at_least:g}, not {value!r}")
    elif spec.above is not None and not number > spec.above:
        raise ValueError(f"{name} must be above {spec.above:g}, not {value!r}")
    elif spec.at_most is not None and number > spec.at_most:
        raise ValueError(f"{name} must be at most {spec.at_most:g}, not {value!r}")
    return value


def build_options(cls: type[OptionsT], values: Mapping[str, object]) -> OptionsT:
    """An instance of ``cls`` from ``values`` (by option name; names ``cls`` does not declare are
    another search's and are left out; those missing take their declared defaults), each value
    checked (ValueError in one line)."""
    taken = {s.name: check_value(s, values[s.name]) for s in option_specs(cls) if s.name in values}
    return cls(**taken)
