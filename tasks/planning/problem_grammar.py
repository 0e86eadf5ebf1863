"""GBNF grammars (llama.cpp's format) of LLM+P problem files, written from the domain file alone.

Two stages, so that the translation from English stays the model's own:

1. ``objects_grammar(shape)``: ``(define (problem NAME) (:domain D) (:objects ...)``: the header
   and an object list whose names the model chooses freely, typed only with the domain's types.
2. ``body_grammar(shape, objects)``: the rest, `` (:init ...) (:goal ...) [(:metric ...)])``, whose
   atoms use the domain's predicates with their arities, and as arguments only the objects the
   model itself declared in stage 1 (and the domain's constants) of a type each position accepts.

Nothing here reads the English description. A grammar is an optimisation, never a proof: the
gate (``llmp.gate_problem``) still checks the finished file, and refusals go to the repair loop.

``canonical`` is the normal form the grammars are tested against: comments removed, lower case,
one space between tokens and none inside parentheses; every problem in that form whose atoms are
well typed is derivable (LLM+P's ground-truth problems are, see tests/test_problem_grammar.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from solver.grammar import literal
from verifiers.pddl_model import parse_problem

__all__ = ["DomainShape", "GrammarUnavailable", "ObjectsPrefix", "body_grammar", "canonical", "domain_shape",
           "objects_grammar", "read_objects_prefix"]

COST_INIT = "(= (total-cost) 0)"
# At most as many atoms in :init (and literals in a goal) as there are distinct well-typed ground
# atoms, when that number is small: a small model repeating one atom then stops within the bound
# instead of spending its whole token budget. Above it the count is left free (the rules would grow).
BOUNDED_ATOMS = 64
METRIC = "(:metric minimize (total-cost))"


class GrammarUnavailable(ValueError):
    """The domain cannot be read, so no grammar is written (the run goes on unconstrained)."""


@dataclass(frozen=True, slots=True)
class DomainShape:
    """What a problem file of the domain may mention, as the project's PDDL reader sees it
    (names lower case, as PDDL is case-insensitive)."""

    name: str
    supertypes: tuple[tuple[str, tuple[str, ...]], ...]  # type -> itself and its ancestors
    predicates: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]  # name -> allowed types per argument
    constants: tuple[tuple[str, str], ...]
    costs: bool  # the domain's actions have costs: (= (total-cost) 0) and the metric may appear

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(t for t, _ in self.supertypes)

    def fits(self, obj_type: str, allowed: tuple[str, ...]) -> bool:
        chain = dict(self.supertypes).get(obj_type, (obj_type, "object"))
        return any(t in chain for t in allowed)


_DOMAIN_NAME = re.compile(r"\(\s*define\s*\(\s*domain\s+([^\s()]+)\s*\)", re.IGNORECASE)


def _strip_comments(text: str) -> str:
    return "\n".join(line.split(";", 1)[0] for line in text.splitlines())


def domain_shape(domain_pddl: str) -> DomainShape:
    """Read the domain with the project's PDDL reader (through an empty problem of that domain);
    GrammarUnavailable with a one-line reason when it cannot be read."""
    m = _DOMAIN_NAME.search(_strip_comments(domain_pddl))
    if m is None:
        raise GrammarUnavailable("no problem grammar: the domain file has no (define (domain NAME) ...) form")
    empty = f"(define (problem empty) (:domain {m.group(1)}) (:objects) (:init) (:goal (and)))"
    try:
        p = parse_problem(domain_pddl, empty)
    except ValueError as e:
        raise GrammarUnavailable(f"no problem grammar: the domain does not parse ({e})") from None
    return DomainShape(p.domain_name, p.supertypes, p.predicates, p.objects, p.uses_costs)


# -- writing GBNF ---------------------------------------------------------------------------------



def _ci(word: str) -> str:
    """A word in any letter case (the domain file may spell ``SUCC`` where the reader has ``succ``)."""
    parts = [f"[{c.lower()}{c.upper()}]" if c.isalpha() and c.lower() != c.upper() else literal(c) for c in word]
    return "(" + " ".join(parts) + ")" if parts else '""'


def _alt(options: list[str]) -> str:
    return " | ".join(options)


# Separators: one space, or a newline and up to four spaces or tabs of indent. Bounded on purpose:
# an unbounded run of blanks lets a small model spend its whole token budget on whitespace.
_COMMON = {
    "sep": '" " | "\\n" indent',
    "indent": "([ \\t] ([ \\t] ([ \\t] [ \\t]?)?)?)?",
    "ws": "sep?",
    "name": "[a-zA-Z] [a-zA-Z0-9_-]*",
}


def _render(rules: dict[str, str]) -> str:
    return "".join(f"{k} ::= {v}\n" for k, v in rules.items())


def objects_grammar(shape: DomainShape) -> str:
    """Stage 1: the header and the object list (free names, the domain's types)."""
    rules = {
        "root": f'"(define" sep "(problem" " " name ")" sep "(:domain" " " {_ci(shape.name)} ")" '
                f'sep "(:objects" group* plain* ws ")"',
        "group": 'plain+ sep "-" " " type',
        "plain": "sep name",
        "type": _alt([_ci(t) for t in shape.types]),
        **_COMMON,
    }
    return _render(rules)


@dataclass(frozen=True, slots=True)
class ObjectsPrefix:
    """The model's stage-1 text up to the ``)`` closing ``(:objects``, and the objects it declares."""

    text: str
    objects: tuple[tuple[str, str], ...]  # (name as written, type lower case)


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def read_objects_prefix(text: str) -> ObjectsPrefix:
    """The first ``(define (problem N) (:domain D) (:objects ...)`` of a text (leading text and
    comments skipped); ValueError with a one-line reason when it is not there complete."""
    start = text.lower().find("(define")
    if start < 0:
        raise ValueError("no (define (problem ...)) form in the answer")
    code = "".join(line.split(";", 1)[0].ljust(len(line)) for line in text[start:].splitlines(keepends=True))
    toks = [(m.group(0), m.end()) for m in _TOKEN.finditer(code)]
    want = ["(", "define", "(", "problem", None, ")", "(", ":domain", None, ")", "(", ":objects"]
    if len(toks) < len(want):
        raise ValueError("the answer stops before its (:objects ...) section is complete")
    for (tok, _), w in zip(toks, want, strict=False):
        if w is not None and tok.lower() != w:
            raise ValueError(f"expected {w!r} in the problem's header, found {tok!r}")
        if w is None and tok in "()":
            raise ValueError("a name is missing in the problem's header")
    objects: list[tuple[str, str]] = []
    pending: list[str] = []
    i = len(want)
    while i < len(toks):
        tok, end = toks[i]
        if tok == ")":
            objects += [(n, "object") for n in pending]
            return ObjectsPrefix(text[: start + end], tuple(objects))
        if tok == "(":
            raise ValueError("a '(' inside the (:objects ...) section")
        if tok == "-":
            if not pending or i + 1 >= len(toks) or toks[i + 1][0] in "()-":
                raise ValueError("a '-' in (:objects ...) must follow names and precede a type")
            objects += [(n, toks[i + 1][0].lower()) for n in pending]
            pending = []
            i += 2
            continue
        pending.append(tok)
        i += 1
    raise ValueError("the answer stops before its (:objects ...) section is complete")


def body_grammar(shape: DomainShape, objects: tuple[tuple[str, str], ...]) -> str:
    """Stage 2: `` (:init ...) (:goal ...) [(:metric ...)])`` over the declared objects and the
    domain's constants. ValueError with a one-line reason when the object list cannot make a
    problem of the domain (a name declared twice, an unknown type, no predicate usable in a goal)."""
    known = set(shape.types)
    seen: dict[str, str] = {}
    for name, typ in (*shape.constants, *objects):
        if name.lower() in seen:
            raise ValueError(f"the object {name} is declared twice (or is also a constant of the domain)")
        if typ not in known:
            raise ValueError(f"the object {name} has the type {typ}, which the domain does not declare")
        seen[name.lower()] = typ
    names = [*((n, t) for n, t in shape.constants), *objects]
    rules: dict[str, str] = {}
    arg_rule: dict[tuple[str, ...], str] = {}
    atoms: list[str] = []
    ground = 0  # distinct well-typed ground atoms
    for pname, arg_types in shape.predicates:
        parts, count = [_ci(pname)], 1
        for allowed in arg_types:
            fitting = [n for n, t in names if shape.fits(t, allowed)]
            if not fitting:
                break
            count *= len(fitting)
            if allowed not in arg_rule:
                arg_rule[allowed] = f"arg{len(arg_rule)}"
                rules[arg_rule[allowed]] = _alt([literal(n) for n in fitting])
            parts.append('" " ' + arg_rule[allowed])
        else:
            rule = f"pred{len(atoms)}"
            rules[rule] = " ".join(parts)
            atoms.append(rule)
            ground += count
    if not atoms:
        raise ValueError("no predicate of the domain can be written with the declared objects and their types")
    if ground <= BOUNDED_ATOMS:  # a chain of optional rules: at most ``ground`` items
        for i in range(1, ground + 1):
            rules[f"inits{i}"] = f"(sep atom{f' inits{i + 1}' if i < ground else ''})?"
            rules[f"lits{i}"] = f"(sep literal{f' lits{i + 1}' if i < ground else ''})?"
        inits, lits = "inits1", "sep literal" + (" lits2" if ground > 1 else "")
    else:
        inits, lits = "(sep atom)*", "(sep literal)+"
    cost = f"(sep {literal(COST_INIT)})? " if shape.costs else ""
    metric = f"(sep {literal(METRIC)})? " if shape.costs else ""
    head = {
        "root": f'sep "(:init" {cost}{inits} ws ")" sep "(:goal" sep goal ws ")" {metric}ws ")"',
        "goal": f'"(and" {lits} ws ")" | literal',
        "literal": 'atom | "(not" " " atom ")"',
        "atom": '"(" (' + _alt(atoms) + ') ")"',
    }
    return _render({**head, **rules, **_COMMON})


def canonical(pddl: str) -> str:
    """The normal form: comments removed, lower case, one space between tokens, none after '(' or
    before ')'. Two problem texts with the same normal form read the same to a PDDL parser."""
    toks = _TOKEN.findall(_strip_comments(pddl).lower())
    out: list[str] = []
    for tok in toks:
        if out and out[-1] != "(" and tok != ")":
            out.append(" ")
        out.append(tok)
    return "".join(out)
