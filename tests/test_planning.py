"""The planning gate, simulator, planner and oracle, against a Blocksworld simulator written here
separately (towers of blocks, not atoms) and an exhaustive breadth-first search over it."""

from __future__ import annotations

import itertools
import re
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.expansion import rule_failure
from solver.task import Thought
from solver.task_capabilities import HasOracle, LegalMoves, Restorable, find
from tasks.planning.blocksworld import DOMAIN, problem
from tasks.planning.files import join_puzzle
from tasks.planning.parts import PlannerJudge
from tasks.planning.task import Planning
from verifiers.pddl_model import parse_problem
from verifiers.planner import plan
from verifiers.planning import GroundAction, apply, failed_precondition, parse_action, parse_plan, simulate
from verifiers.verdict import Invalid, Solved, Valid

# --- the independent Blocksworld: below[x] is what x sits on ("table"), or x is held -----------

World = tuple[tuple[tuple[str, str], ...], str | None]  # (sorted (block, below) pairs, held block)


def clear(world: World, x: str) -> bool:
    below = dict(world[0])
    return x in below and all(v != x for v in below.values())


def ref_step(world: World, name: str, args: tuple[str, ...]) -> World | None:
    """The successor world, or None when the action cannot be done."""
    below, held = dict(world[0]), world[1]
    blocks = set(below) | ({held} if held else set())
    if any(a not in blocks for a in args):
        return None
    if name == "pickup" and len(args) == 1:
        (x,) = args
        if held is None and below.get(x) == "table" and clear(world, x):
            del below[x]
            return tuple(sorted(below.items())), x
    elif name == "putdown" and len(args) == 1:
        (x,) = args
        if held == x:
            below[x] = "table"
            return tuple(sorted(below.items())), None
    elif name == "stack" and len(args) == 2:
        x, y = args
        if held == x and y != x and clear(world, y):
            below[x] = y
            return tuple(sorted(below.items())), None
    elif name == "unstack" and len(args) == 2:
        x, y = args
        if held is None and below.get(x) == y and clear(world, x):
            del below[x]
            return tuple(sorted(below.items())), x
    return None


def to_atoms(world: World) -> frozenset[tuple[str, ...]]:
    below, held = dict(world[0]), world[1]
    atoms: set[tuple[str, ...]] = set()
    for x, y in below.items():
        atoms.add(("on-table", x) if y == "table" else ("on", x, y))
        if clear(world, x):
            atoms.add(("clear", x))
    atoms.add(("holding", held) if held else ("arm-empty",))
    return frozenset(atoms)


@st.composite
def worlds(draw: st.DrawFn, max_blocks: int = 5) -> World:
    n = draw(st.integers(1, max_blocks))
    blocks = [f"b{i}" for i in range(1, n + 1)]
    order = draw(st.permutations(blocks))
    held = order[-1] if draw(st.booleans()) else None
    below: dict[str, str] = {}
    placed: list[str] = []
    for b in order:
        if b == held:
            continue
        tops = [p for p in placed if all(v != p for v in below.values())]
        below[b] = draw(st.sampled_from(["table", *tops]))
        placed.append(b)
    return tuple(sorted(below.items())), held


def bw_problem(n: int) -> str:
    objs = " ".join(f"b{i}" for i in range(1, n + 1))
    return f"(define (problem t) (:domain blocks) (:objects {objs}) (:init (arm-empty)) (:goal (arm-empty)))"


ACTIONS = {"pickup": 1, "putdown": 1, "stack": 2, "unstack": 2}


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_gate_agrees_with_the_independent_simulator_on_every_action(world: World) -> None:
    n = len(world[0]) + (1 if world[1] else 0)
    prob = parse_problem(DOMAIN, bw_problem(n))
    state = to_atoms(world)
    names = [f"b{i}" for i in range(1, n + 1)] + ["b99"]
    for name, arity in [*ACTIONS.items(), ("fly", 1)]:
        for k in {arity, arity + 1, max(arity - 1, 0)}:
            for args in itertools.product(names, repeat=k):
                act = GroundAction(name, args)
                expected = ref_step(world, name, args) if k == ACTIONS.get(name) else None
                reason = failed_precondition(prob, state, act)
                if expected is None:
                    assert reason is not None, f"{act.text()} accepted in {sorted(state)}"
                    with pytest.raises(ValueError):
                        apply(prob, state, act)
                else:
                    assert reason is None, f"{act.text()} refused ({reason}) in {sorted(state)}"
                    assert apply(prob, state, act) == to_atoms(expected)


def ref_shortest(world: World, goal: frozenset[tuple[str, ...]], limit: int = 200_000) -> int | None:
    """Breadth-first search over the independent simulator: the fewest actions to the goal."""
    blocks = [b for b, _ in world[0]] + ([world[1]] if world[1] else [])
    seen, queue = {world}, deque([(world, 0)])
    while queue:
        w, d = queue.popleft()
        if goal <= to_atoms(w):
            return d
        for name, arity in ACTIONS.items():
            for args in itertools.permutations(blocks, arity):
                nxt = ref_step(w, name, args)
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    queue.append((nxt, d + 1))
        if len(seen) > limit:
            return None
    return None


def world_of(prob_text: str) -> tuple[World, frozenset[tuple[str, ...]]]:
    p = parse_problem(DOMAIN, prob_text)
    below = {a[1]: "table" for a in p.init if a[0] == "on-table"} | {a[1]: a[2] for a in p.init if a[0] == "on"}
    return (tuple(sorted(below.items())), None), frozenset(a for _pos, a in p.goal)


@pytest.mark.parametrize("seed", range(8))
def test_optimal_plans_are_valid_for_the_independent_simulator_and_as_short_as_bfs(seed: int) -> None:
    text = problem(4, seed)
    prob = parse_problem(DOMAIN, text)
    found = plan(prob, time_limit=60, mode="optimal")
    assert found.status == "solved" and found.plan is not None
    assert simulate(prob, list(found.plan)).valid
    world, goal = world_of(text)
    for act in found.plan:
        nxt = ref_step(world, act.name, act.args)
        assert nxt is not None, f"{act.text()} not applicable for the independent simulator"
        world = nxt
    assert goal <= to_atoms(world)
    assert len(found.plan) == ref_shortest(*world_of(text))


@pytest.mark.parametrize("seed", range(4))
def test_satisficing_plans_are_valid(seed: int) -> None:
    prob = parse_problem(DOMAIN, problem(6, seed))
    found = plan(prob, time_limit=60, mode="satisficing")
    assert found.plan is not None and simulate(prob, list(found.plan)).valid


@settings(max_examples=40, deadline=None)
@given(worlds(max_blocks=4), st.lists(st.tuples(st.sampled_from(sorted(ACTIONS)), st.integers(0, 15)), max_size=8))
def test_a_plan_the_validator_accepts_is_accepted_by_the_independent_simulator(world: World, raw) -> None:
    blocks = [b for b, _ in world[0]] + ([world[1]] if world[1] else [])
    steps = []
    for name, k in raw:
        args = tuple(blocks[(k >> (2 * i)) % len(blocks)] for i in range(ACTIONS[name]))
        steps.append(GroundAction(name, args))
    prob = parse_problem(DOMAIN, bw_problem(len(blocks)))
    start = to_atoms(world)
    res = simulate(prob, steps, start)
    w: World | None = world
    for i, act in enumerate(steps, 1):
        w = ref_step(w, act.name, act.args) if w is not None else None
        if res.failed_step is not None and i == res.failed_step:
            assert w is None
            break
        assert w is not None
    if res.failed_step is None:
        assert w is not None and to_atoms(w) == res.final


LAMP = """(define (domain lamp) (:requirements :strips :typing :negative-preconditions :equality)
 (:types lamp room)
 (:constants master - lamp)
 (:predicates (on ?l - lamp) (intact ?l - lamp) (linked ?a ?b - lamp))
 (:action switch-on :parameters (?l - lamp) :precondition (and (intact ?l) (not (on ?l))) :effect (on ?l))
 (:action smash :parameters (?l - lamp) :precondition (intact ?l) :effect (not (intact ?l)))
 (:action pair :parameters (?a ?b - lamp) :precondition (and (not (= ?a ?b)) (on master))
   :effect (linked ?a ?b)))"""
LAMP_P = """(define (problem p) (:domain lamp) (:objects l1 l2 - lamp hall - room) (:init (intact l1) (intact master))
 (:goal (and (on l1) (linked l1 master))))"""


def test_negative_preconditions_equality_constants_and_types() -> None:
    prob = parse_problem(LAMP, LAMP_P)
    s = prob.init
    assert failed_precondition(prob, s, parse_action("(pair l1 master)")) is not None  # master is off
    s = apply(prob, s, parse_action("switch-on master"))
    assert "does not hold" in (failed_precondition(prob, s, parse_action("switch-on master")) or "")
    assert "= master" in (failed_precondition(prob, s, parse_action("pair master master")) or "")
    assert failed_precondition(prob, s, parse_action("pair l1 master")) is None
    assert "unknown object" in (failed_precondition(prob, s, parse_action("smash l9")) or "")
    assert "hall is a room, but switch-on needs a lamp" in (failed_precondition(prob, s, parse_action("switch-on hall"))
                                                            or "")
    assert "takes 1 arguments" in (failed_precondition(prob, s, parse_action("smash l1 l2")) or "")


def test_oracle_agrees_with_the_planner_and_with_a_dead_end() -> None:
    task = Planning(oracle_seconds=30)
    root = task.root(join_puzzle(LAMP, LAMP_P))
    assert find(task, HasOracle).oracle(root) is True
    dead = task.check(root, Thought("(smash l1)"))
    assert isinstance(dead, Valid)
    assert find(task, HasOracle).oracle(dead.state) is False
    assert plan(dead.state.problem, dead.state.atoms, 30).status == "unsolvable"
    live = task.check(root, Thought("(switch-on l1)"))
    assert isinstance(live, Valid) and find(task, HasOracle).oracle(live.state) is True


def test_the_oracle_reports_unknown_when_its_time_runs_out() -> None:
    task = Planning(oracle_seconds=0.0)
    root = task.root(join_puzzle(DOMAIN, problem(9, 1)))
    assert find(task, PlannerJudge).oracle_verdict(root) is None


def test_task_check_solved_and_answer_reverifies() -> None:
    task = Planning()
    puzzle = join_puzzle(LAMP, LAMP_P)
    state = task.root(puzzle)
    for line in ["(switch-on l1)", "(switch-on master)"]:
        v = task.check(state, Thought(line))
        assert isinstance(v, Valid)
        state = v.state
    v = task.check(state, Thought("pair l1 master"))
    assert isinstance(v, Solved)
    assert rule_failure(task, puzzle, task.answer(v.state)) is None
    assert isinstance(task.check(state, Thought("(pair l1)")), Invalid)
    assert isinstance(rule_failure(task, puzzle, "(switch-on l1)"), Invalid)
    assert all(isinstance(task.check(state, t), (Valid, Solved)) for t in find(task, LegalMoves).legal_thoughts(state))


def test_restore_rebuilds_described_states() -> None:
    task = Planning()
    puzzle = join_puzzle(LAMP, LAMP_P)
    state = task.root(puzzle)
    assert find(task, Restorable).restore(puzzle, task.describe(state)) == state
    v = task.check(state, Thought("(switch-on l1)"))
    assert isinstance(v, Valid)
    assert find(task, Restorable).restore(puzzle, task.describe(v.state)) == v.state
    with pytest.raises(ValueError):
        find(task, Restorable).restore(puzzle, "after 1 actions: (smash l9)")


@pytest.mark.parametrize("text", ["(unstack b2 b3)", "unstack b2 b3", "1. (unstack b2 b3)", "UNSTACK B2 B3,"])
def test_action_forms(text: str) -> None:
    assert parse_action(text) == GroundAction("unstack", ("b2", "b3"))


@pytest.mark.parametrize("text", ["(unstack b2 b3", "unstack (b2) b3", "", "((x))", "unstack b2 b3)", "rm -rf /"])
def test_malformed_actions(text: str) -> None:
    with pytest.raises(ValueError):
        parse_plan(text) if text else parse_action(text)


@pytest.mark.parametrize("domain, reason", [
    ("(define (domain d) (:predicates (p ?x)) (:action a :parameters (?x) :precondition (p ?x) "
     ":effect (when (p ?x) (not (p ?x)))))", "conditional"),
    ("(define (domain d) (:predicates (p ?x)) (:action a :parameters (?x) :precondition (or (p ?x) (p ?x)) "
     ":effect (not (p ?x))))", "disjunction"),
    ("(define (domain d) (:predicates (p ?x)) (:action a :parameters (?x) :precondition (p ?x) "
     ":effect (forall (?y) (not (p ?y)))))", "forall"),
    ("(define (domain d) (:predicates (p ?x)) (:action a :parameters (?x) :precondition (q ?x) :effect (p ?x)))",
     "predicate name; Got: q"),
    ("(define (domain d)" + "(" * 80, "nests"),
    ("(define (domain d) (:predicates (p ?x))", "Missing ')'"),
])
def test_malformed_or_unsupported_domains_are_refused_in_one_line(domain: str, reason: str) -> None:
    prob = "(define (problem q) (:domain d) (:objects o) (:init (p o)) (:goal (p o)))"
    with pytest.raises(ValueError, match=re.escape(reason)) as info:
        parse_problem(domain, prob)
    assert "\n" not in str(info.value)
