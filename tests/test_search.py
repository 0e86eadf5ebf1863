"""Search with scripted models: the gate, the beam, re-verification, budgets, DFS backtracking."""

import asyncio
import re

import pytest

from solver.budget import Budget, Usage
from solver.evaluators import Oracle, Prior, Value, parse_vote
from solver.generators import EnumerateRank, Propose
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.searches import run_search
from solver.task import Thought
from solver.task_capabilities import LegalMoves, find
from solver.trace import Trace
from tasks.game24 import Game24
from tests import references as ref
from tests.fakes import ScriptedBackend
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid

GOOD = {  # a path to 24 from 4 9 10 13, then noise
    "4 9 10 13": "13 - 9 = 4 (left: 4 4 10)\n10 - 4 = 6 (left: 4 6 9)\n4 + 9 = 14 (left: 10 13 14)\n"
                 "13 - 9 = 5 (left: 4 5 10)\n4 * 9 = 37 (left: 10 13 37)\n",
    "4 4 10": "10 - 4 = 6 (left: 4 6)\n4 + 4 = 9 (left: 9 10)\n",
    "4 6": "4 * 6 = 24 (left: 24)\n",
}


def respond(prompt: str, params: GenParams, i: int) -> str:
    if "Judgement" in prompt:
        return " sure"
    nums = re.findall(r"Input: ([\d/ -]+)\n", prompt)[-1].strip()
    return GOOD.get(nums, "1 + 1 = 3 (left: 3)\n")


def value_respond(prompt: str, params: GenParams, i: int) -> str:
    if "Judgement" in prompt:
        nums = re.findall(r"Numbers: ([\d/ -]+)\n", prompt)[-1].strip()
        return " sure" if nums in ("4 4 10", "4 6") else " impossible"
    return respond(prompt, params, i)


def run(coro):
    return asyncio.run(coro)


def client_for(backend):
    return LMClient(backend)


def session_for(backend):
    """A run's session of a fresh client, for calling a generator or evaluator directly."""
    return LMClient(backend).session()


def test_bfs_gate_blocks_invalid_thoughts_and_finds_verified_answer():
    backend = ScriptedBackend(value_respond)
    trace = Trace()
    task = Game24()
    res = run(run_search("tot-bfs", task, "4 9 10 13", Propose(), Value(n=1), client_for(backend), breadth=2,
                         trace=trace))
    assert res.verified and res.answer is not None
    assert ref.game24_ok("4 9 10 13", res.answer)
    invalid = [e for e in trace.of("verdict") if e["verdict"] == "invalid"]
    assert {e["thought"] for e in invalid} >= {"13 - 9 = 5 (left: 4 5 10)", "4 * 9 = 37 (left: 10 13 37)",
                                                "4 + 4 = 9 (left: 9 10)"}
    # No invalid thought is ever scored or kept.
    invalid_nodes = {e.get("node") for e in invalid}
    assert invalid_nodes == {None}
    scored = {e["node"] for e in trace.of("score")} | {e["node"] for e in trace.of("keep")}
    valid_nodes = {e["node"] for e in trace.of("verdict") if e["verdict"] != "invalid"}
    assert scored <= valid_nodes
    assert res.rejected == len(invalid)


def test_bfs_never_keeps_more_than_breadth():
    backend = ScriptedBackend(respond)
    trace = Trace()
    run(run_search("tot-bfs", Game24(), "4 9 10 13", EnumerateRank(rank=False), Value(n=1), client_for(backend),
            breadth=3, early_stop=False, trace=trace))
    by_depth = {}
    depth_of = {e["node"]: e["depth"] for e in trace.of("proposal") if "node" in e}
    for e in trace.of("keep"):
        by_depth.setdefault(depth_of[e["node"]], []).append(e["node"])
    assert by_depth and all(len(v) <= 3 for v in by_depth.values())


def test_oracle_bfs_solves_every_solvable_puzzle_sampled():
    task = Game24()
    for puzzle in ["4 9 10 13", "3 3 8 8", "1 1 4 6", "5 5 5 1", "1 2 3 4"]:
        res = run(run_search("tot-bfs", task, puzzle, EnumerateRank(rank=False), Oracle(), None, breadth=1))
        assert res.verified, puzzle
    res = run(run_search("tot-bfs", task, "1 1 1 1", EnumerateRank(rank=False), Oracle(), None, breadth=5))
    assert res.answer is None and not res.verified


def test_answer_is_reverified_from_puzzle_text():
    class Lying(Game24):
        def answer(self, state):
            return "4 + 9 + 10 + 13"

    trace = Trace()
    res = run(run_search("tot-bfs", Lying(), "4 9 10 13", EnumerateRank(rank=False), Oracle(), None, breadth=1,
                         trace=trace))
    assert res.answer is None and not res.verified
    assert any(e["verified"] is False for e in trace.of("answer"))


def test_call_budget_stops_search_and_says_so():
    backend = ScriptedBackend(respond)
    res = run(run_search("tot-bfs", Game24(), "4 9 10 13", Propose(), Value(n=1), client_for(backend), breadth=5,
                  usage=Usage(budget=Budget(calls=3))))
    assert res.stopped_by == "calls"
    assert res.usage.calls <= 3
    assert len(backend.requests) <= 3


def test_step_budget_stops_dfs():
    res = run(run_search("tot-dfs", Game24(), "1 1 1 1", EnumerateRank(rank=False), Prior(), None,
                  usage=Usage(budget=Budget(steps=4))))
    assert res.stopped_by == "steps" and res.expanded == 4


def test_dfs_backtracks_to_exact_parent_and_finds_answer():
    trace = Trace()
    task = Game24()
    res = run(run_search("tot-dfs", task, "4 9 10 13", EnumerateRank(rank=False), Prior(), None, trace=trace))
    assert res.verified
    states = {e["node"]: e["state"] for e in trace.of("verdict") if "node" in e}
    states[0] = trace.of("root")[0]["state"]
    for e in trace.of("backtrack"):
        assert e["state"] == states[e["to"]]
    assert trace.of("backtrack"), "this puzzle needs backtracking with unranked enumeration"


def test_dfs_prunes_below_threshold_with_oracle():
    trace = Trace()
    res = run(run_search("tot-dfs", Game24(), "1 1 1 1", EnumerateRank(rank=False), Oracle(), None, trace=trace))
    assert res.answer is None and res.expanded == 1
    assert all(e["why"] in ("pruned", "duplicate") for e in trace.of("cut"))


def test_ranking_orders_by_model_likelihood():
    backend = ScriptedBackend(scorer=lambda p, c: -len(c))
    task = Game24()
    out = run(EnumerateRank()(task, task.root("4 9 10 13"), session_for(backend)))
    priors = [t.prior for t in out]
    assert priors == sorted(priors, reverse=True)
    assert len(out) == len(find(task, LegalMoves).legal_thoughts(task.root("4 9 10 13")))


def test_failed_calls_are_recorded_not_raised():
    from solver.lm.base import LMError

    class Broken(ScriptedBackend):
        async def complete(self, prompt, params):
            raise LMError("server said 500")

    trace = Trace()
    client = client_for(Broken())
    res = run(run_search("tot-bfs", Game24(), "4 9 10 13", Propose(), Value(n=1), client, trace=trace))
    assert res.answer is None and res.usage.failed_calls == 1
    assert trace.of("lm_error")[0]["error"] == "server said 500"


@pytest.mark.parametrize("text, n, want", [
    ("The best choice is 12", 12, 12), ("The best choice is 12", 5, None), ("best choice is 2.", 3, 2),
    ("no idea", 3, None), ("The best choice is 99999999999", 3, None),
])
def test_vote_parser_reads_whole_number(text, n, want):
    assert parse_vote(text, n) == want


def test_identical_requests_are_made_once():
    backend = ScriptedBackend(respond)
    model = session_for(backend)
    task = Game24()
    st = task.root("4 9 10 13")
    gen = Propose()
    run(gen(task, st, model))
    run(gen(task, st, model))
    assert len(backend.requests) == 1 and model.usage.cache_hits == 1


def test_gate_in_task_check_is_exact():
    task = Game24()
    st = task.root("4 9 10 13")
    assert isinstance(task.check(st, Thought("13 - 9 = 5 (left: 4 5 10)")), Invalid)
    v = task.check(st, Thought("13 - 9 = 4 (left: 4 4 10)"))
    assert not isinstance(v, Invalid) and v.state.text() == "4 4 10"


def test_choice_generator_orders_by_votes_and_ignores_garbage():
    from solver.generators import EnumerateChoice

    task = Game24()
    st = task.root("2 3 8 9")
    picks = [" 3", " 3", " 999", "abc", " 1"]
    backend = ScriptedBackend(lambda p, g, i: picks[i])
    out = run(EnumerateChoice(n=5)(task, st, session_for(backend)))
    legal = [t.text for t in find(task, LegalMoves).legal_thoughts(st)]
    assert sorted(t.text for t in out) == sorted(legal)
    assert out[0].text == legal[2] and out[0].prior == 2.0
    assert out[1].text == legal[0] and out[1].prior == 1.0
    assert all(t.prior == 0.0 for t in out[2:])


def test_vote_reads_a_bare_number_after_a_prompt_ending_in_the_phrase():
    from solver.evaluators import Vote
    from solver.node import NodeFactory

    task = Game24()
    f = NodeFactory()
    nodes = [f.make(task.root(p), None) for p in ("1 1 1 1", "4 9 10 13", "2 2 2 2")]
    backend = ScriptedBackend(lambda p, g, i: [" 2", " 2\n", "The best choice is 3", " 12", ""][i])
    scores = run(Vote(n=5)(task, nodes, session_for(backend)))
    assert [s for s, _ in scores] == [0.0, 2.0, 1.0]


class _Words:
    """A toy task: one step picks a word; every word is a solution (like passages that all pass)."""

    name, max_depth = "words", 1

    def root(self, puzzle):
        return ""

    def depth(self, state):
        return int(bool(state))

    def check(self, state, thought):
        from verifiers.verdict import Solved

        return Solved(thought.text) if thought.text.isalpha() else Invalid("not a word")

    def legal_thoughts(self, state):
        return [Thought(w) for w in ("ant", "zebra", "cow", "4x")]

    def answer(self, state):
        return state

    def verify_answer(self, puzzle, answer):
        return None if answer.isalpha() else Invalid("not a word")

    def report_answer(self, puzzle, answer):
        return AnswerReport("words", (Check("a word", answer.isalpha()),))

    def describe(self, state):
        return state


def test_bfs_picks_the_best_scored_of_several_solutions():
    class ByLength:  # the evaluator prefers longer words
        name, prune_below = "by-length", 0.0

        async def __call__(self, task, nodes, client):
            return [(float(len(nd.state)), None) for nd in nodes]

    trace = Trace()
    res = run(run_search("tot-bfs", _Words(), "", EnumerateRank(rank=False), ByLength(), None, breadth=1, trace=trace))
    assert res.answer == "zebra"
    assert len(trace.of("score")) == 3


def test_bad_arguments_are_refused_in_one_line() -> None:
    from solver.budget import Budget
    from solver.evaluators import make_evaluator
    from solver.generators import make_generator

    gen, ev = make_generator("enumerate"), make_evaluator("oracle")
    with pytest.raises(ValueError, match="^breadth must be at least 1, not 0$"):
        asyncio.run(run_search("tot-bfs", Game24(), "4 9 10 13", gen, ev, None, breadth=0))
    with pytest.raises(TypeError, match="^client must be an LMClient or None, not str$"):
        asyncio.run(run_search("tot-complete", Game24(), "4 9 10 13", gen, ev, "http://localhost:8000"))  # type: ignore[arg-type]
    for field in ("calls", "tokens", "steps", "seconds"):
        with pytest.raises(ValueError, match=f"^budget {field} must be 0 or more"):
            Budget(**{field: -1})
    with pytest.raises(ValueError, match="^budget seconds must be 0 or more, not nan$"):
        Budget(seconds=float("nan"))
    assert Budget(calls=0, steps=0).calls == 0  # zero is a budget (nothing allowed), not an error


def test_bfs_dfs_and_complete_dfs_are_run_search_of_their_searches() -> None:
    from solver import bfs, complete_dfs, dfs

    for search, method in ((bfs, "tot-bfs"), (dfs, "tot-dfs"), (complete_dfs, "tot-complete")):
        trace = Trace()
        res = asyncio.run(search(Game24(), "4 9 10 13", EnumerateRank(rank=False), Oracle(), None, trace=trace))
        assert res.verified
        assert trace.of("search")[0]["method"] == method
    with pytest.raises(TypeError, match="'breadth' is not an option of search 'tot-dfs'"):
        asyncio.run(dfs(Game24(), "4 9 10 13", EnumerateRank(rank=False), Oracle(), None, breadth=2))
