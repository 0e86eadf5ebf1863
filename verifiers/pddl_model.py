"""A PDDL domain and problem read by Fast Downward's own translator parser, kept as frozen values.

Fast Downward's parser (``fast-downward-translate`` on PyPI) reads all seven LLM+P domains
(``either`` types, names shared by a type and a predicate, action costs); other readers refuse
some of them (see the README, "Planning (LLM+P)"). Only the STRIPS fragment with typing,
negative preconditions, equality, constants and ``(increase (total-cost) N)`` is accepted:
anything else (conditional or universal effects, disjunctive or quantified conditions, derived
predicates, numeric fluents) is refused with a one-line error, never simulated approximately.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from typing import Any

from fast_downward.translate import options as fd_options
from fast_downward.translate import pddl as fd
from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions
from fast_downward.translate.pddl_parser.parse_error import ParseError

__all__ = ["Atom", "Literal", "MAX_NESTING", "MAX_PDDL_CHARS", "Problem", "Schema", "atom_text",
           "parse_problem"]

MAX_PDDL_CHARS = 1_000_000
MAX_NESTING = 64

# The translator keeps its settings in one module global; parsing and grounding read only defaults.
if fd_options.options is None:
    fd_options.set_options(["domain.pddl", "problem.pddl"])

Atom = tuple[str, ...]  # (predicate, arg1, arg2, ...), lower case as PDDL is case-insensitive
Literal = tuple[bool, Atom]  # (positive?, atom); arguments may be parameters "?x" in a schema


@dataclass(frozen=True, slots=True)
class Schema:
    """One action of the domain: typed parameters, precondition literals, add and delete lists."""

    name: str
    params: tuple[tuple[str, str], ...]  # (?var, type)
    pre: tuple[Literal, ...]
    add: tuple[Atom, ...]
    delete: tuple[Atom, ...]
    cost: int | None = None  # ``(increase (total-cost) N)``: N; None when the action declares no cost


@dataclass(frozen=True, slots=True)
class Problem:
    """A grounded planning problem: objects with types, action schemas, initial atoms and goal."""

    domain_name: str
    name: str
    objects: tuple[tuple[str, str], ...]  # (name, type), domain constants included
    supertypes: tuple[tuple[str, tuple[str, ...]], ...]  # type -> itself and all its ancestors
    predicates: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]  # name -> allowed types per argument
    schemas: tuple[Schema, ...]
    init: frozenset[Atom]
    goal: tuple[Literal, ...]
    uses_costs: bool  # the domain's actions declare costs (``(increase (total-cost) N)``)
    metric: bool = False  # the problem asks for ``(:metric minimize (total-cost))``

    @property
    def action_costs(self) -> bool:
        """Plans are judged by their total cost, not their number of actions: the domain declares
        costs and the problem minimises them (as Fast Downward reads it; otherwise every action
        counts 1). An action that declares no cost then costs 0."""
        return self.uses_costs and self.metric

    def action_cost(self, name: str) -> int:
        """What one action of the schema ``name`` adds to the plan's cost (1 when costs do not apply)."""
        if not self.action_costs:
            return 1
        s = self.schema(name)
        return 0 if s is None or s.cost is None else s.cost

    def schema(self, name: str) -> Schema | None:
        for s in self.schemas:
            if s.name == name:
                return s
        return None

    def object_types(self) -> dict[str, str]:
        return dict(self.objects)

    def is_a(self, type_name: str, wanted: str) -> bool:
        return wanted in dict(self.supertypes).get(type_name, (type_name, "object"))

    def arity(self, predicate: str) -> int | None:
        for name, types in self.predicates:
            if name == predicate:
                return len(types)
        return None


def _read_lisp(text: str, what: str) -> list[Any]:
    if len(text) > MAX_PDDL_CHARS:
        raise ValueError(f"{what} PDDL is longer than {MAX_PDDL_CHARS} characters")
    # The translator's reader recurses once per parenthesis: bound the nesting before it runs.
    depth = 0
    for line in text.splitlines():
        for ch in line.split(";", 1)[0]:
            if ch == "(":
                depth += 1
                if depth > MAX_NESTING:
                    raise ValueError(f"{what} PDDL nests parentheses deeper than {MAX_NESTING}")
            elif ch == ")":
                depth -= 1
    if not text.strip():
        raise ValueError(f"{what} PDDL is empty")
    try:
        return lisp_parser.parse_nested_list(io.StringIO(text))
    except ParseError as e:
        raise ValueError(f"{what} PDDL: {_one_line(str(e))}") from None


def _one_line(msg: str) -> str:
    parts = [p.strip(" \t->") for p in msg.splitlines() if p.strip(" \t->")]
    # The translator nests its context ("Parsing domain", "Parsing action 'x'", ...) before the reason.
    tail = [p for p in parts if not p.startswith("Parsing")]
    where = [p for p in parts if p.startswith("Parsing action") or p.startswith("Parsing goal")
             or p.startswith("Parsing element")]
    text = "; ".join(tail) or "; ".join(parts)
    return (where[-1] + ": " if where else "") + text


def _literals(cond: fd.Condition, where: str) -> tuple[Literal, ...]:
    if isinstance(cond, fd.Truth):
        return ()
    if isinstance(cond, fd.Atom):
        return ((True, (cond.predicate, *cond.args)),)
    if isinstance(cond, fd.NegatedAtom):
        return ((False, (cond.predicate, *cond.args)),)
    if isinstance(cond, fd.Conjunction):
        out: list[Literal] = []
        for part in cond.parts:
            out.extend(_literals(part, where))
        return tuple(out)
    kind = {"Disjunction": "a disjunction (or)", "UniversalCondition": "forall",
            "ExistentialCondition": "exists"}.get(type(cond).__name__, type(cond).__name__)
    raise ValueError(f"{where} uses {kind}, which this checker does not support (only conjunctions of literals)")


def _schema(action: fd.Action) -> Schema:
    where = f"action {action.name}"
    add: list[Atom] = []
    delete: list[Atom] = []
    for eff in action.effects:
        if eff.parameters:
            raise ValueError(f"{where} has a universal (forall) effect, which this checker does not support")
        if not isinstance(eff.condition, fd.Truth):
            raise ValueError(f"{where} has a conditional (when) effect, which this checker does not support")
        atom = (eff.literal.predicate, *eff.literal.args)
        (delete if eff.literal.negated else add).append(atom)
    params = tuple((p.name, p.type_name) for p in action.parameters)
    return Schema(action.name, params, _literals(action.precondition, where), tuple(add), tuple(delete),
                  _cost(action, where))


def _cost(action: fd.Action, where: str) -> int | None:
    """The action's constant cost; a cost read from a numeric fluent is refused (the translator's
    parser already refuses negative and fractional numbers)."""
    if action.cost is None:
        return None
    expr = action.cost.expression
    if not isinstance(expr, fd.NumericConstant):
        raise ValueError(f"{where}'s cost is not a number, which this checker does not support (only constant costs)")
    return int(expr.value)


def _supertypes(types: list[fd.Type]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    parent = {t.name: t.basetype_name for t in types}
    out = []
    for t in parent:
        chain, seen, cur = [t], {t}, parent.get(t)
        while cur is not None and cur not in seen:  # a type cycle in a bad file must not hang
            chain.append(cur)
            seen.add(cur)
            cur = parent.get(cur)
        if "object" not in seen:
            chain.append("object")
        out.append((t, tuple(chain)))
    return tuple(out)


def _arg_types(type_name: Any) -> tuple[str, ...]:
    # ``(either a b)`` arrives as a list of names; a plain type as a string.
    if isinstance(type_name, (list, tuple)):
        return tuple(str(t) for t in type_name if t != "either")
    return (str(type_name),)


def parse_problem(domain_text: str, problem_text: str) -> Problem:
    """Read a domain and a problem; ValueError with a one-line reason when either is malformed,
    inconsistent with the other, or outside the supported fragment."""
    dom = _read_lisp(domain_text, "domain")
    prob = _read_lisp(problem_text, "problem")
    warnings = io.StringIO()
    try:
        with contextlib.redirect_stdout(warnings), contextlib.redirect_stderr(warnings):
            task = parsing_functions.parse_task(dom, prob)
    except ParseError as e:
        raise ValueError(_one_line(str(e))) from None
    except (SystemExit, RecursionError, AssertionError, AttributeError, TypeError, IndexError,
            KeyError, ValueError) as e:  # the translator asserts on some malformed inputs
        raise ValueError(f"malformed PDDL ({type(e).__name__}: {_one_line(str(e)) or 'no detail'})") from None
    if task.axioms:
        raise ValueError("the domain has derived predicates (axioms), which this checker does not support")
    if any(isinstance(f, fd.Assign) and f.fluent.symbol != "total-cost" for f in task.init):
        raise ValueError("the problem has numeric fluents other than total-cost, which this checker does not support")
    schemas = tuple(_schema(a) for a in task.actions)
    names = [s.name for s in schemas]
    if len(set(names)) != len(names):
        raise ValueError("the domain defines two actions with the same name")
    init = frozenset((a.predicate, *a.args) for a in task.init if isinstance(a, fd.Atom) and a.predicate != "=")
    goal = _literals(task.goal, "the goal")
    preds = tuple((p.name, tuple(_arg_types(a.type_name) for a in p.arguments))
                  for p in task.predicates if p.name != "=")
    return Problem(
        domain_name=task.domain_name, name=task.problem_name,
        objects=tuple((o.name, o.type_name) for o in task.objects),
        supertypes=_supertypes(task.types), predicates=preds, schemas=schemas, init=init, goal=goal,
        uses_costs=any(a.cost is not None for a in task.actions), metric=bool(task.use_min_cost_metric),
    )


def atom_text(atom: Atom) -> str:
    return "(" + " ".join(atom) + ")"
