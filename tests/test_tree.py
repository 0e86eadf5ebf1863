"""The trace-to-tree step (solver/tools/tree.py) on real traces from BFS and DFS runs, and on synthetic ones.

The trace builders here are shared with tests/test_show.py and tests/test_browser.py.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.evaluators import Prior, Value
from solver.generators import EnumerateRank, Propose
from solver.lm.base import GenParams, LMError
from solver.lm.client import LMClient
from solver.searches import run_search
from solver.tools.cli import main
from solver.tools.show import load_trees, oracle_truth
from solver.tools.tree import PRUNED_FATES, build_tree, build_trees, load_truth, split_runs
from solver.trace import Trace
from solver.trace_reader import read_trace
from tasks.game24 import Game24
from tests.fakes import ScriptedBackend
from tests.profiles import examples

# A scripted model: a path to 24 from 4 9 10 13, some wrong arithmetic (rejected by the gate),
# and "sure" only for states on that path.
PROPOSALS = {
    "4 9 10 13": "13 - 9 = 4 (left: 4 4 10)\n10 - 4 = 6 (left: 4 6 9)\n4 + 9 = 14 (left: 10 13 14)\n"
                 "13 - 9 = 5 (left: 4 5 10)\n4 * 9 = 37 (left: 10 13 37)\n4 + 9 = 13 (left: 10 13 13)\n"
                 "10 - 4 = 6 (left: 6 9 13)\n",
    "4 4 10": "10 - 4 = 6 (left: 4 6)\n4 + 4 = 9 (left: 9 10)\n",
    "4 6": "4 * 6 = 24 (left: 24)\n",
}


def _respond(prompt: str, params: GenParams, i: int) -> str:
    if "Judgement" in prompt:
        nums = re.findall(r"Numbers: ([\d/ -]+)\n", prompt)[-1].strip()
        return " sure" if nums in ("4 4 10", "4 6") else " impossible"
    nums = re.findall(r"Input: ([\d/ -]+)\n", prompt)[-1].strip()
    return PROPOSALS.get(nums, "1 + 1 = 3 (left: 3)\n")


def scripted_bfs_trace(path: Path) -> None:
    """BFS with a scripted model: rejected thoughts, beam cuts and a verified answer."""
    trace = Trace(path)
    trace.emit("start", task="game24", puzzle="4 9 10 13", method="tot-bfs", model="fake:scripted",
               generator="propose", evaluator="value")
    client = LMClient(ScriptedBackend(_respond))
    asyncio.run(run_search("tot-bfs", Game24(), "4 9 10 13", Propose(), Value(n=1), client, breadth=2, trace=trace))
    trace.close()


def dfs_trace(path: Path, puzzle: str = "4 9 10 13") -> None:
    """DFS over unranked enumeration: this puzzle needs backtracking."""
    trace = Trace(path)
    trace.emit("start", task="game24", puzzle=puzzle, method="tot-dfs", model=None,
               generator="enumerate", evaluator="prior")
    asyncio.run(run_search("tot-dfs", Game24(), puzzle, EnumerateRank(rank=False), Prior(), None, trace=trace))
    trace.close()


def oracle_bfs_trace(path: Path, *extra: str) -> None:
    assert main(["solve", "game24", "4 9 10 13", "--method", "tot-bfs", "--generator", "enumerate",
                 "--evaluator", "oracle", "--trace", str(path), *extra]) == 0


def synthetic_trace(path: Path, fanouts: tuple[int, ...] = (150, 66)) -> int:
    """A BFS-shaped trace whose level i nodes each have fanouts[i] children (the default makes
    1 + 150 + 9,900 = 10,051 nodes); returns the node count."""
    events: list[dict[str, Any]] = [
        {"event": "start", "task": "synthetic", "puzzle": "big", "method": "tot-bfs", "model": None},
        {"event": "search", "method": "tot-bfs", "breadth": max(fanouts), "depth": len(fanouts)},
        {"event": "root", "node": 0, "state": "s0"}]
    frontier, next_id = [0], 1
    for fanout in fanouts:
        new = []
        for parent in frontier:
            events.append({"event": "expand", "node": parent})
            for j in range(fanout):
                nid, next_id = next_id, next_id + 1
                events.append({"event": "proposal", "node": nid, "parent": parent, "thought": f"step {nid} via {j};"})
                events.append({"event": "verdict", "node": nid, "verdict": "valid", "state": f"s{nid}"})
                events.append({"event": "score", "node": nid, "score": j % 7})
                events.append({"event": "keep" if j % 3 else "cut", "node": nid,
                               **({} if j % 3 else {"why": "beam", "solvable": j % 2 == 0})})
                new.append(nid)
        frontier = new
    events.append({"event": "end", "answer": None, "verified": False, "stopped_by": None,
                   "calls": 0, "tokens": 0, "seconds": 0.0})
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return next_id


def _events(path: Path) -> list[dict[str, Any]]:
    return read_trace(path)


def test_oracle_bfs_tree_matches_its_trace(tmp_path):
    path = tmp_path / "t.jsonl"
    oracle_bfs_trace(path)
    events = _events(path)
    [tree] = build_trees(events)
    end = events[-1]
    assert len(tree.nodes) == end["proposed"] + 1
    assert tree.info["task"] == "game24" and tree.info["method"] == "tot-bfs"
    assert tree.verified and tree.answer == end["answer"]
    # Expansion order: 1..expanded, each once, root first.
    order = sorted(nd.expanded_at for nd in tree.nodes.values() if nd.expanded_at is not None)
    assert order == list(range(1, end["expanded"] + 1))
    assert tree.nodes[tree.root].expanded_at == 1
    # The highlighted path runs from the root to the one verified answer, parent by parent.
    [sol] = [nd for nd in tree.nodes.values() if nd.fate == "solution"]
    path_keys = {nd.key for nd in tree.nodes.values() if nd.on_path}
    walk, cursor = set(), sol.key
    while cursor is not None:
        walk.add(cursor)
        cursor = tree.nodes[cursor].parent
    assert path_keys == walk and tree.root in walk
    # Every keep/cut event shows up as that node's fate.
    for e in events:
        if e["event"] == "cut":
            assert tree.nodes[str(e["node"])].fate == e["why"]
        if e["event"] == "keep":
            assert tree.nodes[str(e["node"])].fate == "kept"
    # Children lists agree with the proposals' parents.
    for e in events:
        if e["event"] == "proposal":
            assert str(e["node"]) in tree.nodes[str(e["parent"])].children


def test_rejected_thoughts_keep_their_reason_and_parent(tmp_path):
    path = tmp_path / "t.jsonl"
    scripted_bfs_trace(path)
    events = _events(path)
    [tree] = build_trees(events)
    rejected = [nd for nd in tree.nodes.values() if nd.fate == "rejected"]
    invalid = [e for e in events if e["event"] == "verdict" and e["verdict"] == "invalid"]
    assert len(rejected) == len(invalid) == events[-1]["rejected"] > 0
    assert [nd.thought for nd in rejected] == [e["thought"] for e in invalid]
    assert all(nd.reason and nd.key.startswith("r") and nd.score is None for nd in rejected)
    wrong = next(nd for nd in rejected if nd.thought == "4 * 9 = 37 (left: 10 13 37)")
    assert wrong.parent == tree.root and wrong.key in tree.nodes[tree.root].children
    assert tree.verified and any(nd.fate == "beam" for nd in tree.nodes.values())
    assert tree.info["model"] == "fake:scripted" and tree.end["calls"] > 0


def test_dfs_backtracks_are_marked(tmp_path):
    path = tmp_path / "t.jsonl"
    dfs_trace(path)
    events = _events(path)
    [tree] = build_trees(events)
    backtracks = [e for e in events if e["event"] == "backtrack"]
    marked = [nd for nd in tree.nodes.values() if nd.fate == "backtracked"]
    assert backtracks and {str(e["node"]) for e in backtracks} == {nd.key for nd in marked}
    assert all(nd.expanded_at is not None for nd in marked)
    assert tree.verified


def test_appended_runs_become_separate_trees(tmp_path):
    path = tmp_path / "t.jsonl"
    oracle_bfs_trace(path)
    dfs_trace(path)
    scripted_bfs_trace(path)
    events = _events(path)
    trees = build_trees(events)
    assert [t.run for t in trees] == [1, 2, 3]
    assert [t.info["method"] for t in trees] == ["tot-bfs", "tot-dfs", "tot-bfs"]
    ends = [e for e in events if e["event"] == "end"]
    assert [len(t.nodes) for t in trees] == [e["proposed"] + 1 for e in ends]
    assert all(t.root == "0" for t in trees)  # node ids restart in each run
    assert load_trees(str(path), run=2)[0].info["method"] == "tot-dfs"


def test_runs_without_start_are_split_on_search():
    evs = [{"event": "search", "method": "tot-bfs"}, {"event": "root", "node": 0, "state": "a"},
           {"event": "search", "method": "tot-dfs"}, {"event": "root", "node": 0, "state": "b"}]
    runs = split_runs(evs)
    assert len(runs) == 2 and [build_tree(r).nodes["0"].state for r in runs] == ["a", "b"]


def test_model_errors_attach_to_the_node_being_expanded():
    class Broken(ScriptedBackend):
        async def complete(self, prompt, params):
            raise LMError("server said 500")

    trace = Trace()
    client = LMClient(Broken())
    asyncio.run(run_search("tot-bfs", Game24(), "4 9 10 13", Propose(), Value(n=1), client, trace=trace))
    tree = build_tree(trace.events)
    assert tree.errors and "server said 500" in tree.errors[0]
    assert tree.nodes[tree.root].errors == tree.errors
    assert tree.outcome() == "no verified solution found"


def test_cut_off_trace_is_shown_as_incomplete(tmp_path):
    path = tmp_path / "t.jsonl"
    oracle_bfs_trace(path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:40]) + "\n" + lines[40][:10])  # killed mid-line
    [tree] = build_trees(read_trace(path))
    assert tree.end is None and tree.outcome().startswith("incomplete")
    assert not tree.verified and len(tree.nodes) > 1


def test_ground_truth_from_trace_fields_and_from_a_file(tmp_path):
    evs = [{"event": "start", "task": "x", "puzzle": "p"}, {"event": "root", "node": 0, "state": "r"}]
    for i, (why, solvable) in enumerate([("pruned", True), ("beam", True), ("duplicate", True),
                                         ("pruned", False), (None, True)], 1):
        evs.append({"event": "proposal", "node": i, "parent": 0, "depth": 1, "thought": f"t{i}"})
        evs.append({"event": "score", "node": i, "score": 0.5, "solvable": solvable})
        evs.append({"event": "cut", "node": i, "why": why} if why else {"event": "keep", "node": i})
    tree = build_tree(evs)
    assert [nd.key for nd in tree.false_prunes()] == ["1", "2"]  # a duplicate or a keep is no false prune
    assert all(nd.fate in PRUNED_FATES for nd in tree.false_prunes())
    truth_file = tmp_path / "truth.jsonl"
    truth_file.write_text('{"run": 1, "node": 4, "solvable": true}\n{"node": 1, "solvable": false}\n')
    truth = load_truth(truth_file)
    assert truth == {1: {"4": True, "1": False}}
    tree = build_tree(evs, truth=truth[1])  # the file overrides the trace's fields
    assert [nd.key for nd in tree.false_prunes()] == ["2", "4"]
    (tmp_path / "list.json").write_text('[{"run": 2, "node": 3, "solvable": false}]')
    assert load_truth(tmp_path / "list.json") == {2: {"3": False}}


@pytest.mark.parametrize("text, needle", [
    ('{"node": 1}', "must look like"), ('{"node": 1, "solvable": "yes"}', "must look like"),
    ('{"run": 0, "node": 1, "solvable": true}', "positive integer"), ("{not json", "not JSON"),
])
def test_bad_truth_files_say_what_is_wrong(tmp_path, text, needle):
    f = tmp_path / "truth.json"
    f.write_text(text)
    with pytest.raises(ValueError, match=needle):
        load_truth(f)
    with pytest.raises(ValueError, match="not found"):
        load_truth(tmp_path / "missing.json")


def test_oracle_truth_agrees_with_the_oracle_evaluator(tmp_path):
    """With the exact oracle as evaluator, score 1 means solvable: the two must agree, and the only
    false prunes are solvable states lost to the beam."""
    path = tmp_path / "t.jsonl"
    oracle_bfs_trace(path, "--breadth", "2")
    from solver.tools.plugins import load_plugins

    [tree] = load_trees(str(path), plugins=load_plugins())
    scored = [nd for nd in tree.nodes.values() if nd.score is not None]
    assert scored and all(nd.solvable is (nd.score == 1.0) for nd in scored)
    assert tree.false_prunes() and all(nd.fate == "beam" and nd.score == 1.0 for nd in tree.false_prunes())
    assert oracle_truth([tree], load_plugins())[1][tree.root] is True


@st.composite
def random_trees(draw: Any) -> list[int]:
    """Parent of node i (i >= 1) is some earlier node: any rooted tree shape."""
    n = draw(st.integers(1, 60))
    return [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]


@settings(max_examples=examples(60), deadline=None)
@given(parents=random_trees(), data=st.data())
def test_any_tree_shape_round_trips(parents, data):
    evs: list[dict[str, Any]] = [{"event": "start", "task": "t"}, {"event": "root", "node": 0, "state": "s0"}]
    fates = {}
    for i in range(1, len(parents)):
        evs.append({"event": "proposal", "node": i, "parent": parents[i], "thought": f"t{i}"})
        evs.append({"event": "verdict", "node": i, "verdict": "valid", "state": f"s{i}"})
        fate = data.draw(st.sampled_from(["kept", "beam", "pruned", "duplicate", "unexplored"]))
        fates[str(i)] = fate
        if fate == "kept":
            evs.append({"event": "keep", "node": i})
        elif fate != "unexplored":
            evs.append({"event": "cut", "node": i, "why": fate})
    tree = build_tree(evs)
    assert len(tree.nodes) == len(parents)
    for i in range(1, len(parents)):
        nd = tree.nodes[str(i)]
        assert nd.parent == str(parents[i]) and nd.fate == fates[str(i)]
        assert str(i) in tree.nodes[str(parents[i])].children
    assert sum(len(nd.children) for nd in tree.nodes.values()) == len(parents) - 1


def test_synthetic_trace_of_ten_thousand_nodes(tmp_path):
    path = tmp_path / "big.jsonl"
    count = synthetic_trace(path)
    [tree] = build_trees(read_trace(path))
    assert count == len(tree.nodes) == 10_051
    assert len(tree.nodes[tree.root].children) == 150
    assert tree.counts() == {"root": 1, "kept": 6_700, "beam": 3_350}
    assert len(tree.false_prunes()) == 25 + 150 * 11  # cut (j % 3 == 0) and solvable (j even)


def test_gate_off_thoughts_are_marked_and_get_no_ground_truth():
    from solver.tools.plugins import load_plugins

    evs: list[dict[str, Any]] = [
        {"event": "start", "task": "game24", "puzzle": "4 9 10 13"}, {"event": "root", "node": 0, "state": "4 9 10 13"},
        {"event": "proposal", "node": 1, "parent": 0, "thought": "4 * 6 = 24 (left: 24)"},
        {"event": "verdict", "node": 1, "verdict": "unchecked", "solved": True, "reason": "6 is not available",
         "state": "24"},
        {"event": "answer", "node": 1, "answer": "4 * 6", "verified": False, "reason": "uses numbers not given"},
        {"event": "proposal", "node": 2, "parent": 0, "thought": "9 + 10 = 20 (left: 4 13 20)"},
        {"event": "verdict", "node": 2, "verdict": "unchecked", "solved": False, "reason": "9 + 10 is 19",
         "state": "4 13 20"},
        {"event": "keep", "node": 2},
        {"event": "proposal", "node": 3, "parent": 2, "thought": "20 + 4 = 24 (left: 13 24)"},
        {"event": "verdict", "node": 3, "verdict": "valid", "state": "13 24"},
        {"event": "proposal", "node": 4, "parent": 0, "thought": "13 - 9 = 4 (left: 4 4 10)"},
        {"event": "verdict", "node": 4, "verdict": "valid", "state": "4 4 10"},
    ]
    tree = build_tree(evs)
    assert [tree.nodes[k].fate for k in "1234"] == ["unverified", "kept", "unexplored", "unexplored"]
    assert tree.nodes["1"].reason == "6 is not available; answer: uses numbers not given" and not tree.verified
    truth = oracle_truth([tree], load_plugins())[1]
    assert truth == {"0": True, "4": True}  # nothing at or below a thought the gate would have rejected


def test_controller_events_probes_rounds_and_remarks():
    """Long's controller scores thoughts before they become nodes, cuts some without a node id,
    asks a node again, and remarks "no new proposal"; none of that may be lost or misread."""
    evs: list[dict[str, Any]] = [
        {"event": "start", "task": "t", "method": "long"}, {"event": "root", "node": 0, "state": "r"},
        {"event": "round", "round": 1, "node": 0},
        {"event": "expand", "node": 0, "request": 1},
        {"event": "score", "parent": 0, "thought": "a", "score": 1.0, "detail": "d-a"},
        {"event": "score", "parent": 0, "thought": "b", "score": 0.0, "detail": "d-b"},
        {"event": "cut", "parent": 0, "thought": "b", "why": "pruned", "score": 0.0},
        {"event": "proposal", "node": 1, "parent": 0, "depth": 1, "thought": "a"},
        {"event": "verdict", "node": 1, "verdict": "valid", "state": "s1"},
        {"event": "keep", "node": 1, "score": None},
        {"event": "expand", "node": 1, "request": 1},
        {"event": "expand", "node": 1, "request": 2},
        {"event": "cut", "node": 1, "why": "no new proposal"},
        {"event": "backtrack", "node": 1, "to": 0, "why": "1 children tried"},
    ]
    tree = build_tree(evs)
    a, b = tree.nodes["1"], tree.nodes["p1"]
    assert (a.score, a.detail, a.fate, a.reason, a.expanded_at) == (1.0, "d-a", "backtracked", "no new proposal", 2)
    assert (b.thought, b.parent, b.score, b.detail, b.fate, b.verdict) == ("b", "0", 0.0, "d-b", "pruned", "valid")
    assert tree.nodes["0"].children == ("p1", "1")


def test_baseline_trace_without_root_or_node_ids():
    evs: list[dict[str, Any]] = [
        {"event": "start", "task": "t", "method": "io"}, {"event": "search", "method": "io"},
        {"event": "proposal", "parent": 0, "thought": "wrong"},
        {"event": "verdict", "parent": 0, "thought": "wrong", "verdict": "invalid", "reason": "bad"},
        {"event": "proposal", "parent": 0, "thought": "right"},
        {"event": "verdict", "parent": 0, "thought": "right", "verdict": "solved"},
        {"event": "answer", "answer": "right", "verified": True},
    ]
    tree = build_tree(evs)
    assert tree.root == "0" and tree.verified and tree.answer == "right"
    assert [tree.nodes[k].fate for k in tree.nodes["0"].children] == ["rejected", "solution"]
