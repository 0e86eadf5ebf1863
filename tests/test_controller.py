"""Long's controller: task-agnostic, bounded by K rounds, never above the root, C children a node."""

import asyncio
import json
import random
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.budget import Usage
from solver.evaluators import Oracle
from solver.generators import EnumerateRank, Propose
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.run import SearchSettings, Settings, solve
from solver.searches import run_search
from solver.task import Thought
from solver.task_capabilities import LegalMoves, find
from solver.trace import Trace
from tasks.game24 import Game24
from tasks.sudoku.generator import generate
from tasks.sudoku.task import Sudoku
from tests import references as ref
from tests.fakes import ScriptedBackend
from tests.profiles import examples
from verifiers.report import AnswerReport, Check
from verifiers.sudoku import format_board
from verifiers.verdict import Invalid, Solved, Valid


@dataclass(frozen=True, slots=True)
class Total:
    value: int
    steps: int = 0


class CountUp:
    """A toy task unrelated to any puzzle: reach ``target`` from 0 by adding 1, 2 or 3."""

    name = "count-up"
    max_depth = 12

    def __init__(self, target: int) -> None:
        self.target = target

    def root(self, puzzle: str) -> Total:
        return Total(0)

    def depth(self, state: Total) -> int:
        return state.steps

    def check(self, state: Total, thought: Thought):
        if thought.text not in ("+1", "+2", "+3"):
            return Invalid("not a step")
        nxt = Total(state.value + int(thought.text[1:]), state.steps + 1)
        if nxt.value > self.target:
            return Invalid("overshoots")
        return Solved(nxt) if nxt.value == self.target else Valid(nxt)

    def answer(self, state: Total) -> str:
        return str(state.value)

    def verify_answer(self, puzzle: str, answer: str):
        return None if answer == str(self.target) else Invalid("wrong total")

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        return AnswerReport("count-up", (Check("the target total", answer == str(self.target)),))

    def describe(self, state: Total) -> str:
        return str(state.value)


class RandomGenerator:
    exhaustive = log_likelihoods = False
    """Proposes a random handful of steps (some invalid, some repeated, sometimes none)."""

    name = "random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seen: list[object] = []

    async def __call__(self, task, state, client):
        self.seen.append(state)
        return [Thought(self.rng.choice(["+1", "+2", "+3", "+9", "x"])) for _ in range(self.rng.randint(0, 4))]


def run(coro):
    return asyncio.run(coro)


@given(seed=st.integers(0, 10**6), target=st.integers(1, 30), c=st.integers(1, 4), k=st.integers(1, 40))
@settings(max_examples=examples(150), deadline=None)
def test_invariants_on_random_proposals(seed, target, c, k):
    trace = Trace()
    gen = RandomGenerator(seed)
    usage = Usage()
    res = run(run_search("long", CountUp(target), "", gen, None, None, max_children=c, max_rounds=k, trace=trace,
                         usage=usage))
    rounds = trace.of("round")
    assert len(rounds) <= k and usage.steps == len(rounds)  # never more than K rounds
    root = trace.of("root")[0]["node"]
    parent_of = {e["node"]: e["parent"] for e in trace.of("proposal") if "node" in e}
    state_of = {root: trace.of("root")[0]["state"]}
    state_of.update({e["node"]: e["state"] for e in trace.of("verdict") if "node" in e})
    events = trace.events
    for i, e in enumerate(events):
        if e["event"] != "backtrack":
            continue
        assert e["node"] != root  # never backtracks past the root
        assert e["to"] == parent_of[e["node"]]  # only ever to the parent
        assert e["state"] == state_of[e["to"]]  # whose state is exactly as it was
        tried_here = [r for r in rounds if r["node"] == e["node"] and r["t"] <= e["t"]]
        assert len(tried_here) >= c  # only after C children were tried there
        nxt = next((x for x in events[i + 1:] if x["event"] in ("round", "backtrack")), None)
        assert nxt is None or nxt.get("node") == e["to"] or nxt["event"] == "backtrack"
    if res.verified:
        assert res.answer == str(target) and res.stopped_by is None
    else:
        assert res.stopped_by == "rounds" and len(rounds) == k


def test_invalid_proposals_stay_at_the_root_until_k():
    class Bad:
        name = "bad"
        exhaustive = log_likelihoods = False

        async def __call__(self, task, state, client):
            return [Thought("x")]

    trace = Trace()
    res = run(run_search("long", CountUp(3), "", Bad(), None, None, max_children=2, max_rounds=7, trace=trace))
    assert not res.verified and res.stopped_by == "rounds" and not trace.of("backtrack")
    assert len(trace.of("round")) == 7 and res.rejected == 1  # a repeated proposal is not rechecked


def test_c_children_then_back_to_the_exact_parent_state():
    class Script:
        exhaustive = log_likelihoods = False
        """At 0: '+1' (valid), then '+2'. At 1: only overshooting steps."""

        name = "script"

        def __init__(self):
            self.calls = []

        async def __call__(self, task, state, client):
            self.calls.append(state)
            return [Thought("+1"), Thought("+2")] if state.value == 0 else [Thought("+3"), Thought("+9"), Thought("x")]

    gen, trace = Script(), Trace()
    res = run(run_search("long", CountUp(2), "", gen, None, None, max_children=3, max_rounds=20, trace=trace))
    assert res.verified and res.answer == "2"
    [bt] = trace.of("backtrack")
    assert bt["state"] == "0" and bt["to"] == trace.of("root")[0]["node"]
    # The root is held unchanged: the generator saw the same root state object before and after.
    roots = [s for s in gen.calls if s.value == 0]
    assert roots and all(s is roots[0] for s in roots)


def test_task_agnostic_through_solve_on_game24():
    s = Settings(search=SearchSettings(method="long", generator="enumerate", evaluator="oracle"))
    res = run(solve(Game24(), "4 9 10 13", s, None))
    assert res.verified and ref.game24_ok("4 9 10 13", res.answer)


@given(st.sampled_from([3, 4, 5]), st.integers(0, 10**4))
@settings(max_examples=examples(15), deadline=None)
def test_oracle_controller_solves_without_backtracking(n, seed):
    p = generate(n, seed)
    trace = Trace()
    res = run(run_search("long", Sudoku(), p.text, EnumerateRank(False, name="enumerate"), Oracle(), None,
                          trace=trace))
    assert res.verified and res.answer == format_board(p.solution)
    assert ref.csp_is_solution(p.givens, ref.read_board(res.answer), p.boxes)
    assert not trace.of("backtrack") and len(trace.of("round")) == sum(v == 0 for r in p.givens for v in r)


def test_json_proposals_from_a_scripted_model_with_fresh_seeds():
    p = generate(3, 5)
    sol = p.solution

    def respond(prompt: str, params: GenParams, i: int) -> str:
        board = prompt.rsplit("Board: ", 1)[1].split("\n", 1)[0]
        rows = [list(r) for r in board.split("|")]
        if params.seed == 0 and board.count("*") == 2:
            return ' {"rows": ["999", "999", "999"]}'  # nonsense once; a fresh seed gets a good step
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                if v == "*":
                    rows[r][c] = str(sol[r][c])
                    return " " + json.dumps({"rows": ["".join(x) for x in rows]})
        return ""

    client = LMClient(ScriptedBackend(respond))
    trace = Trace()
    res = run(run_search("long", Sudoku(), p.text, Propose(), None, client, trace=trace))
    assert res.verified and res.answer == format_board(sol)
    assert res.rejected == 1 and res.usage.calls == 5  # 4 blanks, one retry with a new seed
    seeds = [e for e in trace.of("expand")]
    assert [e["request"] for e in seeds].count(2) == 1


def test_oracle_ranking_records_invalid_and_pruned_proposals():
    puzzle = "*2*|*32|*13"  # unique solution 321|132|213

    class Mixed:
        name = "mixed"
        exhaustive = log_likelihoods = False

        async def __call__(self, task, state, client):
            if state.board == Sudoku().root(puzzle).board:
                # invalid (changes a given), valid but not completable, valid and completable
                return [Thought("*1*|*32|*13"), Thought("12*|*32|*13"), Thought("32*|*32|*13")]
            return [Thought(t.text) for t in find(task, LegalMoves).legal_thoughts(state)]

    trace = Trace()
    res = run(run_search("long", Sudoku(), puzzle, Mixed(), Oracle(), None, trace=trace))
    assert res.verified and res.answer == "321|132|213"
    assert [e["thought"] for e in trace.of("verdict") if e["verdict"] == "invalid"] == ["*1*|*32|*13"]
    assert [e["thought"] for e in trace.of("cut") if e.get("why") == "pruned"][0] == "12*|*32|*13"
    assert trace.of("proposal")[1]["thought"] == "32*|*32|*13" and not trace.of("backtrack")
