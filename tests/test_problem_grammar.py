"""LLM+P's problem grammars (tasks/planning/problem_grammar.py), checked with a GBNF reader written
for the tests (tests/gbnf_sampler.py) and the project's PDDL reader and gate:
every string the two stages derive is a problem of the domain whose atoms are well typed, and
every ground-truth problem (the project's Blocksworld generator, a typed domain written here, and
LLM+P's seven domains where ../shared/data/llmp is present) is derivable in its normal form."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasks.planning.blocksworld import DOMAIN as BLOCKS
from tasks.planning.blocksworld import problem as blocks_problem
from tasks.planning.files import LLMP_DOMAINS, domain_file, llmp_dir
from tasks.planning.llmp import gate_problem
from tasks.planning.problem_grammar import (
    GrammarUnavailable,
    body_grammar,
    canonical,
    domain_shape,
    objects_grammar,
    read_objects_prefix,
)
from tests import gbnf_sampler as ref
from verifiers.pddl_model import Problem, parse_problem

# A typed domain with what LLM+P's domains use: a type tree, (either ...), a constant, a 0-ary
# predicate and action costs.
DEPOT = """(define (domain Depot-Lite)
  (:requirements :typing :action-costs)
  (:types place locatable - object truck crate - locatable depot - place)
  (:constants home - depot)
  (:predicates (at ?x - locatable ?p - place) (in ?c - crate ?t - truck)
               (loaded ?x - (either truck crate)) (SUNNY))
  (:functions (total-cost))
  (:action drive :parameters (?t - truck ?a - place ?b - place)
    :precondition (and (at ?t ?a) (sunny))
    :effect (and (not (at ?t ?a)) (at ?t ?b) (increase (total-cost) 1))))
"""
DEPOT_PROBLEM = """(define (problem d1) (:domain depot-lite)
 (:objects t1 - truck c1 c2 - crate yard - place)
 (:init (= (total-cost) 0) (at t1 home) (at c1 yard) (in c2 t1) (loaded c2) (loaded t1) (SUNNY))
 (:goal (and (at t1 yard) (not (in c2 t1)) (sunny)))
 (:metric minimize (total-cost)))
"""
# No 0-ary predicate and no constant: an object list can leave every predicate unusable.
NO_ZERO_ARY = DEPOT.replace("(:constants home - depot)", "").replace("(SUNNY)", "") \
    .replace("(and (at ?t ?a) (sunny))", "(at ?t ?a)")


def _shared() -> Path | None:
    """Where the project itself finds LLM+P's data (tasks.planning.files.llmp_dir), if anywhere."""
    try:
        return llmp_dir()
    except ValueError:
        return None


SHARED = _shared()
DOMAINS = {"blocks": BLOCKS, "depot": DEPOT, "no-zero-ary": NO_ZERO_ARY}
if SHARED is not None:
    DOMAINS.update({d: domain_file(SHARED / d).read_text() for d in LLMP_DOMAINS})


def _fits(prob: Problem, atom: tuple[str, ...]) -> bool:
    """Every argument of the atom is an object of a type its predicate accepts there."""
    allowed = dict(prob.predicates)[atom[0]]
    types = prob.object_types()
    return len(allowed) == len(atom) - 1 and all(
        any(prob.is_a(types[o], t) for t in options) for o, options in zip(atom[1:], allowed, strict=True))


@pytest.mark.parametrize("name", sorted(DOMAINS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_derived_problem_reads_as_a_well_typed_problem_of_the_domain(name: str, data: st.DataObject) -> None:
    domain = DOMAINS[name]
    shape = domain_shape(domain)

    def draw(n: int) -> int:
        return data.draw(st.integers(0, n - 1))

    head = ref.parse(objects_grammar(shape)).sample(draw)
    prefix = read_objects_prefix(head)
    assert prefix.text == head
    try:  # what the project's reader makes of the object list alone (independent of the grammar code)
        bare = parse_problem(domain, head + " (:init) (:goal (and)))")
    except ValueError as e:
        assert "duplicate objects" in str(e)
        with pytest.raises(ValueError, match="declared twice"):
            body_grammar(shape, prefix.objects)
        return
    assert {(n.lower(), t) for n, t in prefix.objects} | set(shape.constants) == set(bare.objects)
    types = bare.object_types()
    usable = [p for p, allowed in bare.predicates
              if all(any(bare.is_a(types[o], t) for o in types for t in options) for options in allowed)]
    if not usable:
        with pytest.raises(ValueError, match="no predicate"):
            body_grammar(shape, prefix.objects)
        return
    body = ref.parse(body_grammar(shape, prefix.objects)).sample(draw)
    prob, reasons = gate_problem(domain, head + body)
    assert prob is not None, reasons
    assert not [r for r in reasons if r.startswith("init fact")]
    assert prob.goal
    assert all(_fits(prob, atom) for atom in prob.init)
    assert all(_fits(prob, atom) for _, atom in prob.goal)


def _derivable(domain: str, truth: str) -> bool:
    shape = domain_shape(domain)
    text = canonical(truth)
    end = text.index(")", text.index("(:objects")) + 1
    head, body = text[:end], text[end:]
    objects = read_objects_prefix(head).objects
    return ref.parse(objects_grammar(shape)).matches(head) and ref.parse(body_grammar(shape, objects)).matches(body)


@pytest.mark.parametrize("seed", range(5))
def test_generated_blocksworld_problems_are_derivable(seed: int) -> None:
    assert _derivable(BLOCKS, blocks_problem(3 + seed, seed, name=f"p{seed}"))


def test_a_typed_problem_with_constants_either_costs_and_negative_goals_is_derivable() -> None:
    assert _derivable(DEPOT, DEPOT_PROBLEM)


@pytest.mark.parametrize("bad", [
    DEPOT_PROBLEM.replace("(loaded t1)", "(loaded yard)"),  # a place where (either truck crate) is needed
    DEPOT_PROBLEM.replace("(in c2 t1)", "(in c2 t1 t1)"),  # arity
    DEPOT_PROBLEM.replace("(at c1 yard)", "(at c1 depot9)"),  # an undeclared object
    DEPOT_PROBLEM.replace("(not (in c2 t1))", "(or (in c2 t1))"),
    DEPOT_PROBLEM.replace("(:init (= (total-cost) 0)", "(:init (at t1 home) (= (total-cost) 0)"),
])
def test_what_the_gate_or_the_domain_refuses_is_not_derivable(bad: str) -> None:
    assert not _derivable(DEPOT, bad)


@pytest.mark.skipif(SHARED is None, reason="LLM+P's data (../shared/data/llmp) is not present")
@pytest.mark.parametrize("domain", LLMP_DOMAINS)
def test_every_llmp_ground_truth_problem_is_derivable(domain: str) -> None:
    assert SHARED is not None
    folder = SHARED / domain
    text = domain_file(folder).read_text()
    files = sorted(folder.glob("p*.pddl"))
    assert len(files) >= 20
    for f in files:
        truth = f.read_text()
        try:
            prob = parse_problem(text, truth)
        except ValueError:
            assert f.name == "p_example.pddl"  # floortile's example names an undeclared robot2
            continue
        assert _derivable(text, truth), f.name
        head = canonical(truth)
        objects = read_objects_prefix(head).objects  # the reader agrees with the project's PDDL reader
        assert {(n.lower(), t) for n, t in objects} | set(domain_shape(text).constants) == set(prob.objects)


def test_the_object_reader_refuses_an_incomplete_or_malformed_header() -> None:
    ok = read_objects_prefix("Here:\n(define (problem x)\n(:domain blocks)\n(:objects a b - t c) (:init")
    assert ok.objects == (("a", "t"), ("b", "t"), ("c", "object"))
    assert ok.text.endswith("(:objects a b - t c)")
    for bad in ["(define (problem x) (:domain blocks) (:objects a b", "no pddl", "(define (problem x) (:objects a)",
                "(define (problem x) (:domain d) (:objects a - )", "(define (problem x) (:domain d) (:objects (a))"]:
        with pytest.raises(ValueError):
            read_objects_prefix(bad)


def test_an_unreadable_domain_is_one_line() -> None:
    for bad in ["(define (domain d) (:predicates (p ?x)) (:action a :parameters (?x) :effect (when (p ?x) (p ?x))))",
                "not pddl"]:
        with pytest.raises(GrammarUnavailable) as e:
            domain_shape(bad)
        assert "\n" not in str(e.value) and str(e.value).startswith("no problem grammar")


def test_the_reference_reader_refuses_what_it_should() -> None:
    g = ref.parse('root ::= "(" [a-c]+ (" " x)? ")"\nx ::= "y" | "z"\n')
    assert g.matches("(ab z)") and g.matches("(c)")
    assert not g.matches("(ad)") and not g.matches("(a y") and not g.matches("(a  y)")
    with pytest.raises(ValueError):
        ref.parse('root ::= x\n')
