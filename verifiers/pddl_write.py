"""A parsed problem written back as PDDL, from any state, in the plain fragment every backend reads.

The reader (``pddl_model``) accepts ``either`` types, names shared by a type and a predicate,
constants, negative preconditions, equality and action costs. What is written here is the same
problem in a smaller fragment: every object is a domain constant (so actions that name a constant,
such as tyreworld's ``wrench``, need no special case), predicates are untyped (the reader already
checked the facts' types; an ``either`` in a predicate has no effect on planning), and action costs
are written only when asked (``costs=True``, for a backend that minimises them) and the problem
minimises them (``Problem.action_costs``): then every action adds its cost, 0 where it declares
none, as Fast Downward reads the original files. The initial state is the state given, so an
oracle call from the middle of a search is the same kind of file.
"""

from __future__ import annotations

from verifiers.pddl_model import Atom, Literal, Problem

__all__ = ["write_domain", "write_problem"]

REQUIREMENTS = "(:requirements :strips :typing :negative-preconditions :equality)"
COST_REQUIREMENTS = "(:requirements :strips :typing :negative-preconditions :equality :action-costs)"


def _type_text(t: object) -> str:
    if isinstance(t, (list, tuple)):  # a parameter declared ``(either a b)`` arrives as a list of names
        names = [str(x) for x in t if x != "either"]
        return "(either " + " ".join(names) + ")"
    return str(t)


def _atom(atom: Atom) -> str:
    return "(" + " ".join(atom) + ")"


def _lit(lit: Literal) -> str:
    pos, atom = lit
    return _atom(atom) if pos else f"(not {_atom(atom)})"


def write_domain(problem: Problem, costs: bool = False) -> str:
    """The domain, with the problem's objects as its constants; its action costs with ``costs``."""
    costs = costs and problem.action_costs
    lines = ["(define (domain d)", " " + (COST_REQUIREMENTS if costs else REQUIREMENTS)]
    parents = [(t, chain[1]) for t, chain in problem.supertypes if t != "object" and len(chain) > 1]
    if parents:
        lines.append(" (:types " + " ".join(f"{t} - {p}" for t, p in parents) + ")")
    if problem.objects:
        lines.append(" (:constants " + " ".join(f"{o} - {t}" for o, t in problem.objects) + ")")
    preds = [f"({name}" + "".join(f" ?a{i}" for i in range(len(args))) + ")" for name, args in problem.predicates]
    if preds:
        lines.append(" (:predicates " + " ".join(preds) + ")")
    if costs:
        lines.append(" (:functions (total-cost))")
    for s in problem.schemas:
        params = " ".join(f"{v} - {_type_text(t)}" for v, t in s.params)
        effects = [_atom(a) for a in s.add] + [f"(not {_atom(a)})" for a in s.delete]
        if costs:
            effects.append(f"(increase (total-cost) {s.cost or 0})")
        lines.append(f" (:action {s.name} :parameters ({params})"
                     f" :precondition (and {' '.join(_lit(x) for x in s.pre)})"
                     f" :effect (and {' '.join(effects)}))")
    lines.append(")")
    return "\n".join(lines) + "\n"


def write_problem(problem: Problem, state: frozenset[Atom] | None = None, costs: bool = False) -> str:
    """The problem from ``state`` (default: its initial state); objects are the domain's constants.
    With ``costs`` (and a problem that minimises them) the metric and ``(= (total-cost) 0)``."""
    costs = costs and problem.action_costs
    init = problem.init if state is None else state
    facts = " ".join(_atom(a) for a in sorted(init)) + (" (= (total-cost) 0)" if costs else "")
    goal = " ".join(_lit(x) for x in problem.goal)
    metric = "\n (:metric minimize (total-cost))" if costs else ""
    return f"(define (problem p) (:domain d)\n (:init {facts})\n (:goal (and {goal})){metric})\n"
