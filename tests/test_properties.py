"""Property tests of search invariants over generated small tasks, scripted models and settings.

Two tasks: a tiny toy (reach a target number with +1, +3, *2; exact reachability is cheap) and
Game of 24. Models are scripted: their answers are a deterministic function of a seed and the
prompt, mixing legal thoughts with wrong results, unavailable operands and garbage.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import random
import re
import tempfile
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.budget import Budget, Usage
from solver.evaluators import make_evaluator
from solver.generators import make_generator
from solver.lm.base import Completion, GenParams
from solver.lm.cache import Cache
from solver.lm.client import LMClient
from solver.lm.session import Session
from solver.node import Node, NodeFactory
from solver.search import SearchResult, bfs, dfs
from solver.task import Thought
from solver.trace import Trace
from tasks.game24 import Game24
from tests import references as ref
from tests.fakes import ScriptedBackend
from tests.profiles import examples
from tests.references import sym_reaches
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Solved, Valid, Verdict

# ---- a tiny generic task ----------------------------------------------------------------------
OPS: tuple[tuple[str, int], ...] = (("+", 1), ("+", 3), ("*", 2))
CAP = 200  # a value above this is never useful for the targets the tests draw
_STEP = re.compile(r"^\s*(\d{1,6})\s*([+*])\s*(\d{1,6})\s*=\s*(\d{1,7})\s*$")


@dataclass(frozen=True, slots=True)
class ToyState:
    """The current value; ``path`` is history (two states with the same value are the same)."""

    value: int
    target: int
    path: tuple[str, ...] = field(default=(), compare=False)


def apply(value: int, op: str, k: int) -> int:
    return value + k if op == "+" else value * k


def step_text(value: int, op: str, k: int) -> str:
    return f"{value} {op} {k} = {apply(value, op, k)}"


class ToyReach:
    """Reach ``target`` from ``start`` (puzzle text "start target") in at most ``max_depth`` steps."""

    name = "toy-reach"

    def __init__(self, max_depth: int = 3) -> None:
        self.max_depth = max_depth

    @staticmethod
    def parse(puzzle: str) -> tuple[int, int]:
        parts = puzzle.split()
        if len(parts) != 2 or not all(p.isdigit() and len(p) <= 4 for p in parts):
            raise ValueError(f"expected 'start target', got {puzzle[:40]!r}")
        return int(parts[0]), int(parts[1])

    def root(self, puzzle: str) -> ToyState:
        start, target = self.parse(puzzle)
        return ToyState(start, target)

    def depth(self, state: ToyState) -> int:
        return len(state.path)

    def check(self, state: ToyState, thought: Thought) -> Verdict[ToyState]:
        m = _STEP.match(thought.text)
        if not m:
            return Invalid("not of the form 'a op k = r'")
        a, op, k, r = int(m[1]), m[2], int(m[3]), int(m[4])
        if a != state.value:
            return Invalid(f"{a} is not the current value {state.value}")
        if (op, k) not in OPS:
            return Invalid(f"'{op} {k}' is not an allowed move")
        if apply(a, op, k) != r:
            return Invalid(f"{a} {op} {k} is {apply(a, op, k)}, not {r}")
        if r > CAP:
            return Invalid(f"{r} is above the cap {CAP}")
        new = ToyState(r, state.target, state.path + (f"{op}{k}",))
        return Solved(new) if r == state.target else Valid(new)

    def legal_thoughts(self, state: ToyState) -> Sequence[Thought]:
        return [Thought(step_text(state.value, op, k)) for op, k in OPS if apply(state.value, op, k) <= CAP]

    def propose_prompt(self, state: ToyState, chat: bool) -> str:
        return f"Propose moves.\nValue: {state.value} depth {len(state.path)}\n"

    def sample_prompt(self, state: ToyState, chat: bool) -> str:
        return f"One move.\nValue: {state.value} depth {len(state.path)}\n"

    def parse_proposals(self, state: ToyState, text: str) -> list[Thought]:
        return [Thought(line.strip()) for line in text.splitlines()[:20] if 0 < len(line.strip()) <= 80]

    def value_prompt(self, state: ToyState, chat: bool) -> str:
        return f"Judge: {state.value} depth {len(state.path)}\nJudgement:"

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[ToyState], chat: bool) -> str:
        return "Vote:\n" + "\n".join(f"Choice {i}: {s.value}" for i, s in enumerate(states, 1))

    @staticmethod
    def reachable(value: int, target: int, steps: int) -> bool:
        """Exact: can ``value`` reach ``target`` in at most ``steps`` moves under the cap?"""
        frontier = {value}
        for _ in range(steps + 1):
            if target in frontier:
                return True
            frontier = {apply(v, op, k) for v in frontier for op, k in OPS if apply(v, op, k) <= CAP}
        return False

    def oracle(self, state: ToyState) -> bool:
        return self.reachable(state.value, state.target, self.max_depth - len(state.path))

    def answer(self, state: ToyState) -> str:
        return " ".join(state.path)

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        start, target = self.parse(puzzle)
        moves = answer.split()
        if len(moves) > self.max_depth:
            return Invalid(f"{len(moves)} moves; at most {self.max_depth} allowed")
        value = start
        for mv in moves:
            op, k = mv[:1], mv[1:]
            if not k.isdigit() or (op, int(k)) not in OPS:
                return Invalid(f"unknown move {mv!r}")
            value = apply(value, op, int(k))
            if value > CAP:
                return Invalid("above the cap")
        return None if value == target else Invalid(f"ends at {value}, not {target}")

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        problem = self.verify_answer(puzzle, answer)
        return AnswerReport("toy: reach the target", (Check("reaches the target", problem is None,
                                                            problem.reason if problem else ""),))

    def describe(self, state: ToyState) -> str:
        return str(state.value)


# ---- the machinery that runs one generated case ---------------------------------------------


class RecordingFactory(NodeFactory):
    """Keeps every node search makes, with a snapshot of its state taken at creation."""

    made: list[tuple[Node[Any], str]] = []

    def make(self, state: Any, parent: Node[Any] | None, thought: str = "", prior: float | None = None,
             solved: bool = False, note: str = "") -> Node[Any]:
        node = super().make(state, parent, thought, prior, solved, note)
        RecordingFactory.made.append((node, repr(state)))
        return node


def _h(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "big")


class YieldingScripted(ScriptedBackend):
    """A scripted model that yields to the event loop inside every call, so concurrent requests
    really interleave (a plain scripted backend never suspends)."""

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        await asyncio.sleep(0)
        return await super().complete(prompt, params)

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        await asyncio.sleep(0)
        return await super().score(prompt, continuations)


def toy_model(seed: int, p_valid: float) -> ScriptedBackend:
    """Answers are a deterministic function of (seed, prompt, sample index): a mix of legal moves,
    wrong results, moves from the wrong value, unknown moves and garbage."""

    def respond(prompt: str, params: GenParams, i: int) -> str:
        rng = random.Random(_h(seed, prompt, i))
        if prompt.startswith("Judge"):
            return " " + rng.choice(["sure", "likely", "impossible", "no idea"])
        if prompt.startswith("Vote"):
            return f"The best choice is {rng.randint(0, 6)}"
        m = re.search(r"Value: (\d+)", prompt)
        v = int(m[1]) if m else 0
        lines = []
        for _ in range(rng.randint(0, 5)):
            op, k = rng.choice(OPS)
            r = rng.random()
            if r < p_valid:
                lines.append(step_text(v, op, k))
            elif r < p_valid + 0.1:
                lines.append(f"{v} {op} {k} = {apply(v, op, k) + rng.choice([-1, 1, 7])}")
            elif r < p_valid + 0.2:
                lines.append(step_text(v + rng.randint(1, 3), op, k))
            elif r < p_valid + 0.3:
                lines.append(f"{v} * 3 = {v * 3}")
            else:
                lines.append(rng.choice(["", "hmm", "= =", "1/0", "{\"a\": 1}", "Input: 4 4"]))
        return "\n".join(lines)

    def scorer(prompt: str, cont: str) -> float:
        return -(_h(seed, prompt, cont) % 1000) / 100.0

    return YieldingScripted(respond, scorer, name=f"toy{seed}")


@dataclass(frozen=True, slots=True)
class Case:
    task: str  # "toy" or "game24"
    puzzle: str
    max_depth: int
    method: str
    generator: str
    evaluator: str
    breadth: int
    depth: int | None
    max_children: int | None
    seed: int
    p_valid: float
    calls: int | None
    tokens: int | None
    steps: int | None
    policy: str = "reject"
    concurrency: int = 1


@dataclass(slots=True)
class Outcome:
    case: Case
    task: Any
    result: SearchResult
    trace: Trace
    nodes: dict[int, Node[Any]]
    snapshots: dict[int, str]
    backend: ScriptedBackend
    thoughts: list[tuple[Any, Thought]]
    late_requests: int


class RecordingGenerator:
    """Wraps a generator and records every (state, thought) it hands to the gate."""

    def __init__(self, inner: Any, sink: list[tuple[Any, Thought]]) -> None:
        self.inner, self.sink, self.name = inner, sink, inner.name

    async def __call__(self, task: Any, state: Any, model: Session | None) -> list[Thought]:
        out = await self.inner(task, state, model)
        self.sink.extend((state, t) for t in out)
        return out


def make_task(case: Case) -> Any:
    return ToyReach(case.max_depth) if case.task == "toy" else Game24(policy=case.policy)  # type: ignore[arg-type]


def game24_model(seed: int, p_valid: float) -> ScriptedBackend:
    """Legal steps of the numbers in the prompt, and corrupted ones (wrong result, wrong left list,
    unavailable operand), chosen by (seed, prompt, index)."""
    task = Game24()

    def respond(prompt: str, params: GenParams, i: int) -> str:
        rng = random.Random(_h(seed, prompt, i))
        if "Judgement:" in prompt:
            return " " + rng.choice(["sure", "likely", "impossible", "maybe"])
        if "best choice" in prompt:
            return f"The best choice is {rng.randint(0, 6)}"
        nums = re.findall(r"Input: ([\d/ -]+)\n", prompt)[-1].strip()
        state = task.root("0 0 0 0")
        state = type(state)(tuple(sorted(Fraction(x) for x in nums.split())), tuple(nums.split()))
        legal = [t.text for t in task.legal_thoughts(state)]
        lines = []
        for _ in range(rng.randint(0, 6)):
            t = rng.choice(legal) if legal else "1 + 1 = 2 (left: 2)"
            r = rng.random()
            if r < p_valid:
                lines.append(t)
            elif r < p_valid + 0.15:
                lines.append(re.sub(r"= (\S+)", lambda m: f"= {m[1]}1", t, count=1))
            elif r < p_valid + 0.3:
                lines.append(t.replace("(left: ", "(left: 7 "))
            else:
                lines.append(rng.choice(["13 * 13 = 169 (left: 169)", "x", "4 / 0 = 0 (left: 0)", ""]))
        return "\n".join(lines)

    def scorer(prompt: str, cont: str) -> float:
        return -(_h(seed, prompt, cont) % 1000) / 100.0

    return YieldingScripted(respond, scorer, name=f"g24-{seed}")


async def _run_case(case: Case, trace: Trace, backend: ScriptedBackend | None = None,
                    cache: Cache | None = None, mode: str = "off") -> Outcome:
    task = make_task(case)
    backend = backend or (toy_model if case.task == "toy" else game24_model)(case.seed, case.p_valid)
    usage = Usage(budget=Budget(calls=case.calls, tokens=case.tokens, steps=case.steps), model=backend.model)
    client = LMClient(backend, cache, mode, concurrency=case.concurrency)  # type: ignore[arg-type]
    thoughts: list[tuple[Any, Thought]] = []
    gen = RecordingGenerator(make_generator(case.generator, k=3, seed=case.seed), thoughts)
    ev = make_evaluator(case.evaluator, n=2, seed=case.seed)
    RecordingFactory.made = []
    with mock.patch("solver.search.NodeFactory", RecordingFactory):
        if case.method == "tot-bfs":
            res = await bfs(task, case.puzzle, gen, ev, client, breadth=case.breadth, depth=case.depth,
                            trace=trace, usage=usage)
        else:
            res = await dfs(task, case.puzzle, gen, ev, client, depth=case.depth,
                            max_children=case.max_children, trace=trace, usage=usage)
    made = RecordingFactory.made
    before = len(backend.requests) + len(backend.score_requests)
    for _ in range(20):  # anything search left running would make its requests now
        await asyncio.sleep(0)
    late = len(backend.requests) + len(backend.score_requests) - before
    return Outcome(case, task, res, trace, {n.id: n for n, _ in made}, {n.id: s for n, s in made},
                   backend, thoughts, late)


def run_case(case: Case) -> Outcome:
    return asyncio.run(_run_case(case, Trace()))


GENS = ["propose", "sample", "enumerate", "enumerate-rank"]
EVALS = ["value", "vote", "prior", "oracle", "likelihood"]


@st.composite
def toy_cases(draw: st.DrawFn, method: str | None = None, generator: str | None = None,
              evaluator: str | None = None, budgets: bool = True) -> Case:
    max_depth = draw(st.integers(1, 4))
    return Case(
        task="toy", puzzle=f"{draw(st.integers(0, 12))} {draw(st.integers(0, 40))}", max_depth=max_depth,
        method=method or draw(st.sampled_from(["tot-bfs", "tot-dfs"])),
        generator=generator or draw(st.sampled_from(GENS)),
        evaluator=evaluator or draw(st.sampled_from(EVALS)),
        breadth=draw(st.integers(1, 4)), depth=draw(st.one_of(st.none(), st.integers(1, max_depth))),
        max_children=draw(st.one_of(st.none(), st.integers(1, 3))), seed=draw(st.integers(0, 10_000)),
        p_valid=draw(st.floats(0.0, 1.0)),
        calls=draw(st.one_of(st.none(), st.integers(0, 12))) if budgets else None,
        tokens=draw(st.one_of(st.none(), st.integers(0, 300))) if budgets else None,
        steps=draw(st.one_of(st.none(), st.integers(0, 10))) if budgets else None,
        concurrency=draw(st.integers(1, 3)))


@st.composite
def game24_cases(draw: st.DrawFn, method: str | None = None) -> Case:
    nums = draw(st.lists(st.integers(1, 13), min_size=4, max_size=4))
    return Case(
        task="game24", puzzle=" ".join(map(str, nums)), max_depth=3,
        method=method or draw(st.sampled_from(["tot-bfs", "tot-dfs"])),
        generator=draw(st.sampled_from(GENS)), evaluator=draw(st.sampled_from(EVALS)),
        breadth=draw(st.integers(1, 3)), depth=None, max_children=draw(st.one_of(st.none(), st.integers(1, 3))),
        seed=draw(st.integers(0, 10_000)), p_valid=draw(st.floats(0.0, 1.0)),
        calls=draw(st.one_of(st.none(), st.integers(0, 8))), tokens=None,
        steps=draw(st.one_of(st.none(), st.integers(1, 6))), policy=draw(st.sampled_from(["reject", "repair"])))


SETTINGS = settings(max_examples=examples(60), deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


# ---- invariants (each a plain function so several properties can share it) -------------------


def assert_snapshots_exact(o: Outcome) -> None:
    """Every node's state is exactly the checker's result of its thought on its parent's state,
    and no state changed after it was made."""
    for nid, node in o.nodes.items():
        assert repr(node.state) == o.snapshots[nid], f"state of node {nid} was mutated"
        if node.parent is None:
            assert repr(node.state) == repr(o.task.root(o.case.puzzle))
            continue
        assert node.depth == node.parent.depth + 1
        verdict = o.task.check(node.parent.state, Thought(node.thought))
        assert not isinstance(verdict, Invalid), f"node {nid} came from an invalid thought: {verdict}"
        assert repr(verdict.state) == repr(node.state)
        assert node.solved == isinstance(verdict, Solved)


def assert_gate(o: Outcome) -> None:
    """No Invalid thought is made a node, scored, kept or expanded; the counts agree."""
    proposals = o.trace.of("proposal")
    # Thoughts of an expansion cut short by a budget are never gated, so only "at most".
    assert o.result.proposed == len(proposals) <= len(o.thoughts)
    for e in proposals:
        verdict = o.task.check(o.nodes[e["parent"]].state, Thought(e["thought"]))
        assert isinstance(verdict, Invalid) == ("node" not in e), e
    assert o.result.rejected == sum("node" not in e for e in proposals)
    verdicts = o.trace.of("verdict")
    assert all("node" not in e for e in verdicts if e["verdict"] == "invalid")
    valid_ids = {e["node"] for e in verdicts if e["verdict"] != "invalid"} | {0}
    for kind in ("score", "keep", "expand", "answer"):
        assert {e["node"] for e in o.trace.of(kind)} <= valid_ids, kind
    assert set(o.nodes) == valid_ids


def assert_answer_verified(o: Outcome) -> None:
    r = o.result
    assert r.verified == (r.answer is not None)
    # The toy task's checker is written in this file; Game of 24's is checked by sympy.
    ok = ((lambda a: ref.game24_ok(o.case.puzzle, a)) if o.case.task == "game24"
          else (lambda a: o.task.verify_answer(o.case.puzzle, a) is None))
    if r.answer is not None:
        assert ok(r.answer)
        assert r.solution is not None and r.solution.solved
    for e in o.trace.of("answer"):
        assert e["verified"] == ok(e["answer"])


def assert_budgets(o: Outcome) -> None:
    """Calls and steps never exceed their budgets; tokens exceed theirs by at most one call per
    concurrency slot (one call when requests go one at a time)."""
    u, c = o.result.usage, o.case
    requests = len(o.backend.requests) + len(o.backend.score_requests)
    if c.calls is not None:
        assert u.calls <= c.calls and requests <= c.calls
    if c.steps is not None:
        assert u.steps <= c.steps and o.result.expanded <= c.steps
    if c.tokens is not None:
        assert u.tokens - c.tokens <= c.concurrency * _last_call_tokens(o), (u.tokens, c.tokens)
    if o.result.stopped_by is not None:
        assert o.result.stopped_by in ("calls", "tokens", "steps", "seconds")
    assert o.late_requests == 0, "search left requests running after it returned"


def _last_call_tokens(o: Outcome) -> int:
    """Tokens of the most expensive single request the backend answered."""
    costs = [len(p.split()) + sum(len(o.backend.respond(p, g, i).split()) for i in range(g.n))
             for p, g in o.backend.requests] + [len(p.split()) for p, _ in o.backend.score_requests]
    return max(costs + [0])


def depth_limit(o: Outcome) -> int:
    return o.case.depth or o.task.max_depth


def assert_bfs_shape(o: Outcome) -> None:
    """At most b states kept per depth; nothing expanded at or beyond depth T; beam keeps the best;
    every expanded non-root node was kept at the level before."""
    t = depth_limit(o)
    kept_by_depth: dict[int, list[int]] = {}
    for e in o.trace.of("keep"):
        kept_by_depth.setdefault(o.nodes[e["node"]].depth, []).append(e["node"])
    assert all(len(v) <= o.case.breadth for v in kept_by_depth.values()), kept_by_depth
    assert all(n.depth <= t for n in o.nodes.values())
    kept = {n for v in kept_by_depth.values() for n in v}
    for e in o.trace.of("expand"):
        assert e["depth"] < t
        assert e["node"] == 0 or e["node"] in kept
    beam_cut = {e["node"]: e["score"] for e in o.trace.of("cut") if e["why"] == "beam"}
    for d, ids in kept_by_depth.items():
        low = min(o.nodes[i].score or 0.0 for i in ids)
        assert all((s or 0.0) <= low for n, s in beam_cut.items() if o.nodes[n].depth == d)


def assert_dfs_shape(o: Outcome) -> None:
    """Siblings are tried in non-increasing score order, none below the threshold, at most
    max_children per node; expansion follows a stack (backtracking pops to the exact parent)."""
    t = depth_limit(o)
    threshold = make_evaluator(o.case.evaluator).prune_below
    kept_by_parent: dict[int, list[float]] = {}
    stack: list[int] = []
    for e in o.trace.events:
        if e["event"] == "expand":
            node = o.nodes[e["node"]]
            assert node.depth < t
            if node.parent is None:
                assert not stack
            else:
                assert stack and stack[-1] == node.parent.id, "DFS expanded a node off the current path"
            stack.append(node.id)
        elif e["event"] == "keep":
            node = o.nodes[e["node"]]
            assert node.parent is not None
            kept_by_parent.setdefault(node.parent.id, []).append(node.score or 0.0)
            assert (node.score or 0.0) >= threshold
        elif e["event"] == "backtrack":
            assert stack and stack[-1] == e["node"], "backtracked from a node that is not current"
            stack.pop()
            parent = o.nodes[e["to"]]
            assert stack and stack[-1] == parent.id == o.nodes[e["node"]].parent.id  # type: ignore[union-attr]
            assert e["state"] == o.task.describe(parent.state)
            assert repr(parent.state) == o.snapshots[parent.id]
    for scores in kept_by_parent.values():
        assert scores == sorted(scores, reverse=True)
        if o.case.max_children is not None:
            assert len(scores) <= o.case.max_children


# ---- properties ---------------------------------------------------------------------------------


@SETTINGS
@given(toy_cases())
def test_toy_search_invariants(case: Case) -> None:
    assert_search_invariants(case)


@settings(SETTINGS, max_examples=examples(25))
@given(game24_cases())
def test_game24_search_invariants(case: Case) -> None:
    assert_search_invariants(case)


def assert_search_invariants(case: Case) -> None:
    o = run_case(case)
    assert_snapshots_exact(o)
    assert_gate(o)
    assert_answer_verified(o)
    assert_budgets(o)
    (assert_bfs_shape if case.method == "tot-bfs" else assert_dfs_shape)(o)


def solvable_with_steps(start: int, target: int, steps: int) -> bool:
    """Ground truth by brute force over every move sequence of length 1..steps (the root itself
    is never an answer: search answers with at least one step)."""
    return any(_ends_at(start, target, seq) for n in range(1, steps + 1) for seq in itertools.product(OPS, repeat=n))


def _ends_at(start: int, target: int, seq: tuple[tuple[str, int], ...]) -> bool:
    v = start
    for op, k in seq:
        v = apply(v, op, k)
        if v > CAP:
            return False
    return v == target


@SETTINGS
@given(toy_cases(generator="enumerate", evaluator="oracle", budgets=False))
def test_toy_exhaustive_with_oracle_finds_a_solution_iff_one_exists(case: Case) -> None:
    # The oracle judges reachability within the task's own depth, so the search runs to it.
    o = run_case(replace(case, depth=None))
    task = o.task
    start, target = task.parse(case.puzzle)
    assert o.result.verified == solvable_with_steps(start, target, depth_limit(o))


@SETTINGS
@given(toy_cases(generator="enumerate", evaluator="prior", budgets=False))
def test_toy_exhaustive_without_oracle_finds_a_solution_iff_one_exists(case: Case) -> None:
    # Wide enough beam / no child cap: plain enumeration is exhaustive, so it must agree with
    # the exact reachability check, with no help from the oracle.
    wide = Case(**{**asdict(case), "breadth": 10_000, "max_children": None})
    o = run_case(wide)
    start, target = o.task.parse(case.puzzle)
    assert o.result.verified == solvable_with_steps(start, target, depth_limit(o))


@settings(SETTINGS, max_examples=examples(15))
@given(st.lists(st.integers(1, 13), min_size=4, max_size=4), st.sampled_from(["tot-bfs", "tot-dfs"]))
def test_game24_enumerate_with_oracle_finds_a_solution_iff_one_exists(nums: list[int], method: str) -> None:
    puzzle = " ".join(map(str, nums))
    case = Case("game24", puzzle, 3, method, "enumerate", "oracle", 1, None, None, 0, 1.0, None, None, None)
    o = run_case(case)
    assert o.result.verified == sym_reaches(nums, 24)  # ground truth by sympy (tests/references.py)
    assert_snapshots_exact(o)


class LyingToy(ToyReach):
    """A task whose answer text is sometimes wrong: search must never return it."""

    def __init__(self, max_depth: int, lie: int) -> None:
        super().__init__(max_depth)
        self.lie = lie

    def answer(self, state: ToyState) -> str:
        honest = super().answer(state)
        return honest if self.lie == 0 else honest + " +1" * self.lie


@SETTINGS
@given(toy_cases(generator="enumerate", budgets=False), st.integers(0, 2))
def test_unverifiable_answers_are_never_returned(case: Case, lie: int) -> None:
    async def go() -> SearchResult:
        task = LyingToy(case.max_depth, lie)
        ev = make_evaluator("oracle" if case.evaluator != "prior" else "prior")
        if case.method == "tot-bfs":
            return await bfs(task, case.puzzle, make_generator("enumerate"), ev, None, breadth=case.breadth)
        return await dfs(task, case.puzzle, make_generator("enumerate"), ev, None)

    res = asyncio.run(go())
    if res.answer is not None:
        assert ToyReach(case.max_depth).verify_answer(case.puzzle, res.answer) is None
    if lie:
        assert res.answer is None


def _strip(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events minus wall-clock fields (the timestamp 't' and the run's total 'seconds')."""
    out = []
    for e in events:
        e = {k: v for k, v in e.items() if k != "t"}
        if e["event"] == "end":
            e.pop("seconds", None)
        out.append(e)
    return out


# sqlite commits every write; a RAM-backed folder keeps this test from waiting on the disk.
_FAST_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None


@settings(SETTINGS, max_examples=examples(20))
@given(st.one_of(toy_cases(), game24_cases()).map(lambda c: replace(c, tokens=None)))
def test_same_seed_and_same_recorded_answers_give_the_same_trace(case: Case) -> None:
    check_replay_gives_the_same_trace(case)


def test_token_budget_replays_identically() -> None:
    # Cache hits count the tokens recorded with them, so a token budget stops a replay where it
    # stopped the live run.
    check_replay_gives_the_same_trace(Case("toy", "0 0", 1, "tot-bfs", "propose", "value", 1, None, None,
                                           0, 1.0, None, 1, None))


def check_replay_gives_the_same_trace(case: Case) -> None:
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as tmp:
        db = Path(tmp) / "rec.sqlite"

        async def go(mode: str, backend: ScriptedBackend | None = None) -> list[dict[str, Any]]:
            cache = Cache(db)
            try:
                o = await _run_case(case, Trace(), backend, cache, mode)
            finally:
                cache.close()
            return _strip(o.trace.events)

        recorded = asyncio.run(go("record"))
        again = asyncio.run(go("off"))  # same seed, fresh model: same answers, same trace
        assert again == recorded

        class Dead(ScriptedBackend):
            async def complete(self, prompt: str, params: GenParams) -> Completion:
                raise AssertionError("replay reached the model")

            async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
                raise AssertionError("replay reached the model")

        fresh = (toy_model if case.task == "toy" else game24_model)(case.seed, case.p_valid)
        dead = Dead(name=fresh.model)
        dead.name = fresh.name
        replay1 = asyncio.run(go("replay", dead))
        replay2 = asyncio.run(go("replay", dead))
        assert replay1 == replay2

        def usage_free(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [{k: v for k, v in e.items() if k not in ("backend_calls", "cache_hits", "replayed_tokens")}
                    for e in events]

        # Replayed answers are the recorded ones, so the search takes exactly the same path, and
        # cache hits count the tokens recorded with them, so usage and token budgets agree too.
        assert usage_free(replay1) == usage_free(recorded)


@settings(SETTINGS, max_examples=examples(40))
@given(toy_cases(method="tot-dfs", evaluator="prior", generator="enumerate", budgets=False),
       st.integers(1, 6))
def test_dfs_step_cap_is_exact(case: Case, steps: int) -> None:
    o = run_case(Case(**{**asdict(case), "steps": steps}))
    assert o.result.expanded <= steps
    if o.result.stopped_by == "steps":
        assert o.result.expanded == steps
    assert_dfs_shape(o)
