"""tot audit: exact figures on synthetic traces, official-log import, real searches, the CLI."""

from __future__ import annotations

import asyncio
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.evaluators import Oracle
from solver.generators import EnumerateRank
from solver.searches import run_search
from solver.task_capabilities import HasOracle, LegalMoves, Restorable, find
from solver.tools.audit.figures import audit
from solver.tools.audit.judgements import judgement_class, score_classes
from solver.tools.audit.render import render
from solver.tools.audit.runs import split_runs
from solver.tools.cli import main
from solver.tools.plugins import load_plugins
from solver.tools.stats import Proportion, wilson
from solver.trace import Trace
from tasks.game24 import Game24
from tasks.game24.official_logs import decode_value, entry_events, step_fault
from tests import references as ref
from tests.profiles import examples

PLUGINS = load_plugins()


def solvable(text: str) -> bool:
    return ref.sym_solvable(text.split())  # sympy, not the oracle the audit itself uses


# ---- statistics --------------------------------------------------------------------------------

def test_wilson_known_values() -> None:
    lo, hi = wilson(5, 10) or (0, 0)
    assert lo == pytest.approx(0.236593, abs=1e-6) and hi == pytest.approx(0.763407, abs=1e-6)
    lo, hi = wilson(0, 10) or (0, 0)
    assert lo == 0.0 and hi == pytest.approx(0.277533, abs=1e-6)
    assert wilson(3, 3) is not None and wilson(3, 3)[1] == 1.0  # type: ignore[index]
    assert wilson(0, 0) == (0.0, 1.0)  # no trials: the whole interval (tests/test_stats.py)
    assert Proportion(0, 0).as_dict() == {"k": 0, "n": 0, "rate": None, "low": 0.0, "high": 1.0}
    assert Proportion(0, 0).text() == "- (0/0)"
    with pytest.raises(ValueError):
        wilson(4, 3)


@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_rate(kn: tuple[int, int]) -> None:
    k, n = kn
    lo, hi = wilson(k, n) or (math.nan, math.nan)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert lo < hi


# ---- judgement classes -------------------------------------------------------------------------

def test_judgement_classes() -> None:
    assert judgement_class("value", 22.0, {"labels": ["likely", "sure", None]}) == "sure"
    assert judgement_class("value", 1.002, {"labels": ["impossible", "likely", "impossible"]}) == "likely"
    assert judgement_class("value", 0.0, {"labels": [None, None]}) == "none"
    assert judgement_class("likelihood", 3.0, {"p": {"sure": 0.1, "likely": 0.6, "impossible": 0.3}}) == "likely"
    assert judgement_class("likelihood", 0.0, {"error": "scoring failed"}) == "error"
    assert judgement_class("vote", 2.0, {"votes": 2}) == "2 votes"
    assert judgement_class("oracle", 1.0, None) == "1" and judgement_class("oracle", 0.0, None) == "0"
    assert judgement_class("prior", -3.5, None) is None
    assert score_classes([0.0, 0.0, None]) == ["score 0", "score 0", "no score"]
    many = score_classes([float(i) for i in range(20)])
    assert many[0] == "Q1 [0, 5)" and many[-1] == "Q4 [15, 19]"
    assert [many.count(name) for name in ("Q1 [0, 5)", "Q2 [5, 10)", "Q3 [10, 15)", "Q4 [15, 19]")] == [5] * 4


# ---- synthetic traces with known answers -------------------------------------------------------

def _bfs_trace() -> list[dict[str, Any]]:
    """BFS, value evaluator, puzzle 1 1 4 6, answered at depth 3."""
    return [
        {"event": "start", "task": "game24", "puzzle": "1 1 4 6", "method": "tot-bfs", "generator": "propose",
         "evaluator": "value", "model": "m"},
        {"event": "root", "node": 0, "state": "1 1 4 6"},
        {"event": "proposal", "node": 1, "parent": 0, "depth": 1, "thought": "1 * 1 = 1 (left: 1 4 6)"},
        {"event": "verdict", "node": 1, "verdict": "valid", "state": "1 4 6"},
        {"event": "proposal", "node": 2, "parent": 0, "depth": 1, "thought": "1 - 1 = 0 (left: 0 4 6)"},
        {"event": "verdict", "node": 2, "verdict": "valid", "state": "0 4 6"},
        {"event": "proposal", "node": 3, "parent": 0, "depth": 1, "thought": "1 + 1 = 2 (left: 2 4 6)"},
        {"event": "verdict", "node": 3, "verdict": "valid", "state": "2 4 6"},
        {"event": "proposal", "node": 4, "parent": 0, "depth": 1, "thought": "4 + 6 = 10 (left: 1 1 10)"},
        {"event": "verdict", "node": 4, "verdict": "valid", "state": "1 1 10"},
        {"event": "proposal", "node": 5, "parent": 0, "depth": 1, "thought": "1 * 1 = 1 (left: 1 4 6)"},
        {"event": "verdict", "node": 5, "verdict": "valid", "state": "1 4 6"},
        {"event": "cut", "node": 5, "why": "duplicate"},
        {"event": "proposal", "parent": 0, "thought": "1 + 1 = 3 (left: 3 4 6)"},
        {"event": "verdict", "parent": 0, "verdict": "invalid", "reason": "1 + 1 is 2, not 3"},
        {"event": "score", "node": 1, "score": 22.0, "detail": {"labels": ["sure", "likely", "likely"]}},
        {"event": "score", "node": 2, "score": 0.002, "detail": {"labels": ["impossible", "impossible", None]}},
        {"event": "score", "node": 3, "score": 1.0, "detail": {"labels": ["likely", None, None]}},
        {"event": "score", "node": 4, "score": 0.0, "detail": {"labels": [None, None, None]}},
        {"event": "keep", "node": 1, "score": 22.0},
        {"event": "keep", "node": 3, "score": 1.0},
        {"event": "cut", "node": 2, "why": "beam", "score": 0.002, "tie": False},
        {"event": "cut", "node": 4, "why": "beam", "score": 0.0, "tie": False},
        {"event": "proposal", "node": 6, "parent": 1, "depth": 2, "thought": "1 * 4 = 4 (left: 4 6)"},
        {"event": "verdict", "node": 6, "verdict": "valid", "state": "4 6"},
        {"event": "proposal", "node": 7, "parent": 3, "depth": 2, "thought": "2 + 4 = 6 (left: 6 6)"},
        {"event": "verdict", "node": 7, "verdict": "valid", "state": "6 6"},
        {"event": "proposal", "node": 8, "parent": 1, "depth": 2, "thought": "1 + 4 = 5 (left: 5 6)"},
        {"event": "verdict", "node": 8, "verdict": "valid", "state": "5 6"},
        {"event": "score", "node": 6, "score": 20.0, "detail": {"labels": ["sure", None, None]}},
        {"event": "score", "node": 7, "score": 1.0, "detail": {"labels": ["likely", None, None]}},
        {"event": "score", "node": 8, "score": 1.0, "detail": {"labels": ["likely", None, None]}},
        {"event": "keep", "node": 6, "score": 20.0},
        {"event": "keep", "node": 7, "score": 1.0},
        {"event": "cut", "node": 8, "why": "beam", "score": 1.0, "tie": True},
        {"event": "proposal", "node": 9, "parent": 6, "depth": 3, "thought": "4 * 6 = 24 (left: 24)"},
        {"event": "verdict", "node": 9, "verdict": "solved", "state": "24"},
        {"event": "answer", "node": 9, "answer": "(1 * 1) * 4 * 6", "verified": True},
        {"event": "end", "verified": True, "stopped_by": None},
    ]


def _dfs_trace() -> list[dict[str, Any]]:
    """DFS, likelihood evaluator, puzzle 1 1 4 6 again: it prunes its only solvable child."""
    return [
        {"event": "start", "task": "game24", "puzzle": "1 1 4 6", "method": "tot-dfs",
         "generator": "enumerate-rank", "evaluator": "likelihood", "model": "m"},
        {"event": "root", "node": 0, "state": "1 1 4 6"},
        {"event": "proposal", "node": 1, "parent": 0, "depth": 1, "thought": "1 - 1 = 0 (left: 0 4 6)"},
        {"event": "verdict", "node": 1, "verdict": "valid", "state": "0 4 6"},
        {"event": "proposal", "node": 2, "parent": 0, "depth": 1, "thought": "1 + 1 = 2 (left: 2 4 6)"},
        {"event": "verdict", "node": 2, "verdict": "valid", "state": "2 4 6"},
        {"event": "score", "node": 1, "score": 0.5, "detail": {"p": {"sure": 0.01, "likely": 0.2, "impossible": 0.79}}},
        {"event": "score", "node": 2, "score": 9.0, "detail": {"p": {"sure": 0.4, "likely": 0.5, "impossible": 0.1}}},
        {"event": "keep", "node": 2, "score": 9.0},
        {"event": "proposal", "node": 3, "parent": 2, "depth": 2, "thought": "2 + 4 = 6 (left: 6 6)"},
        {"event": "verdict", "node": 3, "verdict": "valid", "state": "6 6"},
        {"event": "score", "node": 3, "score": 0.2, "detail": {"p": {"sure": 0.0, "likely": 0.1, "impossible": 0.9}}},
        {"event": "cut", "node": 3, "why": "pruned", "score": 0.2},
        {"event": "backtrack", "node": 2, "to": 0, "state": "1 1 4 6"},
        {"event": "cut", "node": 1, "why": "pruned", "score": 0.5},
        {"event": "end", "verified": False, "stopped_by": None},
    ]


def test_the_states_of_the_synthetic_traces_are_what_the_tests_assume() -> None:
    assert [solvable(s) for s in ("1 1 4 6", "1 4 6", "0 4 6", "4 6", "24")] == [True] * 5
    assert [solvable(s) for s in ("2 4 6", "1 1 10", "6 6", "5 6")] == [False] * 4


def test_every_figure_of_a_synthetic_bfs_trace() -> None:
    (g,) = audit([("a.jsonl", _bfs_trace())], PLUGINS)["groups"]
    assert (g["task"], g["method"], g["evaluator"], g["runs"]) == ("game24", "tot-bfs", "value", 1)
    assert g["puzzles_solvable"] == 1 and g["answered"] == 1 and g["lost"] == []
    assert g["refused_by_gate"] == {"refused by the gate": 1}
    a = g["depths"]["all"]
    # Evaluated: 1..4 and 6..8 (5 is a duplicate, 9 is solved and never scored).
    assert (a["evaluated"], a["solvable"], a["unsolvable"], a["invalid"]) == (7, 3, 4, 0)
    assert a["cut"]["beam"] == {"solvable": 1, "unsolvable": 2, "invalid": 0}
    assert a["cut"]["pruned"] == {"solvable": 0, "unsolvable": 0, "invalid": 0}
    assert a["beam_ties"] == {"solvable": 0, "unsolvable": 1, "invalid": 0}
    assert a["kept"] == {"solvable": 2, "unsolvable": 2, "invalid": 0}
    assert a["false_prune"]["k"] == 1 and a["false_prune"]["n"] == 3
    lo, hi = wilson(1, 3) or (0, 0)
    assert a["false_prune"]["low"] == pytest.approx(lo) and a["false_prune"]["high"] == pytest.approx(hi)
    assert (a["true_prune"]["k"], a["true_prune"]["n"]) == (2, 4)
    c = a["classes"]
    assert list(c) == ["sure", "likely", "impossible", "none"]
    assert (c["sure"]["solvable"], c["sure"]["unsolvable"]) == (2, 0)
    assert (c["likely"]["solvable"], c["likely"]["unsolvable"], c["likely"]["unsolvable_cut"]) == (0, 3, 1)
    assert (c["impossible"]["solvable"], c["impossible"]["solvable_cut"]) == (1, 1)
    assert (c["none"]["unsolvable"], c["none"]["unsolvable_cut"]) == (1, 1)
    assert c["likely"]["p_solvable"]["rate"] == 0.0 and c["sure"]["p_solvable"]["rate"] == 1.0
    d1, d2 = g["depths"]["1"], g["depths"]["2"]
    assert (d1["evaluated"], d1["solvable"], d1["false_prune"]["k"]) == (4, 2, 1)
    assert (d2["evaluated"], d2["solvable"], d2["false_prune"]["k"], d2["beam_ties"]["unsolvable"]) == (3, 1, 0, 1)
    assert set(g["depths"]) == {"all", "1", "2"}


def test_an_accepted_answer_the_oracle_rejects_does_not_count() -> None:
    events = [dict(e, state="23") if e.get("node") == 9 and e["event"] == "verdict" else e for e in _bfs_trace()]
    (g,) = audit([("c.jsonl", events)], PLUGINS)["groups"]
    assert (g["answered"], g["answered_correct"]) == (1, 0)
    assert g["lost"] == [{"puzzle": "1 1 4 6", "step": 3, "cause": "not proposed"}]


def test_a_trace_cut_short_says_so() -> None:
    (g,) = audit([("k.jsonl", _dfs_trace()[:-1])], PLUGINS)["groups"]
    cause = "cut: pruned 1; the trace ends before the search did"
    assert g["lost"] == [{"puzzle": "1 1 4 6", "step": 1, "cause": cause}]


def test_a_budget_that_ran_out_is_named_and_unscored_solvable_states_are_undecided() -> None:
    events = _bfs_trace()[:10] + [{"event": "end", "verified": False, "stopped_by": "seconds"}]
    (g,) = audit([("u.jsonl", events)], PLUGINS)["groups"]
    assert g["depths"]["all"]["evaluated"] == 0
    assert g["lost"] == [{"puzzle": "1 1 4 6", "step": 1, "cause": "undecided; the seconds budget ran out"}]


def test_every_figure_of_a_synthetic_dfs_trace_and_the_lost_step() -> None:
    (g,) = audit([("b.jsonl", _dfs_trace())], PLUGINS)["groups"]
    a = g["depths"]["all"]
    assert (a["evaluated"], a["solvable"], a["unsolvable"]) == (3, 1, 2)
    assert a["cut"]["pruned"] == {"solvable": 1, "unsolvable": 1, "invalid": 0}
    assert (a["false_prune_pruned"]["k"], a["false_prune_beam"]["k"], a["false_prune"]["n"]) == (1, 0, 1)
    assert list(a["classes"]) == ["likely", "impossible"]
    assert a["classes"]["impossible"]["solvable"] == 1 and a["classes"]["likely"]["unsolvable"] == 1
    assert g["lost"] == [{"puzzle": "1 1 4 6", "step": 1, "cause": "cut: pruned 1"}]
    assert (g["lost_rate"]["k"], g["lost_rate"]["n"]) == (1, 1)


def test_two_traces_side_by_side_and_a_solvable_state_never_proposed(tmp_path: Path) -> None:
    never = [
        {"event": "start", "task": "game24", "puzzle": "1 1 4 6", "method": "tot-bfs", "generator": "propose",
         "evaluator": "value", "model": "m"},
        {"event": "root", "node": 0, "state": "1 1 4 6"},
        {"event": "proposal", "node": 1, "parent": 0, "depth": 1, "thought": "1 + 1 = 2 (left: 2 4 6)"},
        {"event": "verdict", "node": 1, "verdict": "valid", "state": "2 4 6"},
        {"event": "score", "node": 1, "score": 20.0, "detail": {"labels": ["sure"]}},
        {"event": "keep", "node": 1},
        {"event": "end", "verified": False},
    ]
    first, second = tmp_path / "x.jsonl", tmp_path / "y.jsonl"
    first.write_text("".join(json.dumps(e) + "\n" for e in _bfs_trace() + never))
    second.write_text("".join(json.dumps(e) + "\n" for e in _dfs_trace()))
    out = tmp_path / "report.md"
    assert main(["audit", str(first), str(second), "--markdown", str(out)]) == 0
    md = out.read_text()
    assert "| depth | evaluated |" in md and str(second) in md
    rep = audit([(str(first), [json.loads(x) for x in first.read_text().splitlines()])], PLUGINS)
    (g,) = rep["groups"]  # both runs share task and settings: one group, two runs
    assert g["runs"] == 2 and g["puzzles_solvable"] == 2 and g["answered"] == 1
    assert g["lost"] == [{"puzzle": "1 1 4 6", "step": 1, "cause": "not proposed"}]
    assert len(split_runs(json.loads(x) for x in first.read_text().splitlines())) == 2


def test_runs_without_the_gate_are_a_group_of_their_own() -> None:
    ungated = [dict(e, gate=False) if e["event"] == "start" else e for e in _bfs_trace()]
    groups = audit([("t", _bfs_trace() + ungated)], PLUGINS)["groups"]
    assert [g["method"] for g in groups] == ["tot-bfs", "tot-bfs:no-gate"]


def test_runs_with_an_adapter_are_a_group_of_their_own_and_the_report_names_the_model() -> None:
    """tot audit with and without an adapter: the model's name carries the adapter's, and each
    model's judgements are counted apart and named in the report."""
    tagged = "local:gemma3-270m-q4_k_m+game24@eb05eec219e1"
    adapted = [dict(e, model=tagged) if e["event"] == "start" else e for e in _bfs_trace()]
    report = audit([("t", _bfs_trace() + adapted)], PLUGINS)
    assert [g["model"] for g in report["groups"]] == ["m", tagged]
    assert [g["runs"] for g in report["groups"]] == [1, 1]
    text = render(report)
    summary = [line for line in text.splitlines() if line.startswith("t ")]
    assert len(summary) == 2 and tagged in summary[1] and tagged not in summary[0]
    assert f"== t [game24 tot-bfs propose value {tagged}]" in text


def test_a_task_without_restore_is_reported_plainly() -> None:
    class NoRestore:
        name = "plain"

        def oracle(self, state: object) -> bool:
            return True

    class Plugin:
        name, help = "plain", "a task without restore"

        def add_solve_args(self, parser: Any) -> None:
            parser.add_argument("puzzle", nargs="?")

        def make_task(self, args: Any) -> NoRestore:
            return NoRestore()

    events = [{"event": "start", "task": "plain", "puzzle": "p"}, {"event": "root", "node": 0, "state": "s"}]
    (g,) = audit([("t", events)], {"plain": Plugin()})["groups"]  # type: ignore[dict-item]
    assert g["unsupported"] == ("the audit needs a task with states restorable from a trace "
                                "(Restorable: restore(puzzle, description)); NoRestore has none")
    assert "depths" not in g
    assert "not auditable" in render({"groups": [g]})
    (h,) = audit([("t", [{**events[0], "task": "elsewhere"}, events[1]])], PLUGINS)["groups"]
    assert "no installed task" in h["unsupported"]


# ---- real searches -----------------------------------------------------------------------------

def _search_events(method: str, puzzle: str, breadth: int = 2) -> list[dict[str, Any]]:
    trace = Trace()
    trace.emit("start", task="game24", puzzle=puzzle, method=method, generator="enumerate", evaluator="oracle")
    gen = EnumerateRank(rank=False, name="enumerate")
    if method == "tot-bfs":
        asyncio.run(run_search("tot-bfs", Game24(), puzzle, gen, Oracle(), None, breadth=breadth, trace=trace))
    else:
        asyncio.run(run_search("tot-dfs", Game24(), puzzle, gen, Oracle(), None, trace=trace))
    return trace.events


@pytest.mark.parametrize("method", ["tot-bfs", "tot-dfs"])
def test_the_oracle_evaluator_is_perfectly_calibrated_and_never_prunes_a_solvable_state(method: str) -> None:
    (g,) = audit([("run", _search_events(method, "4 9 10 13"))], PLUGINS)["groups"]
    a = g["depths"]["all"]
    assert a["evaluated"] > 0 and a["unknown"] == 0
    assert a["classes"]["1"]["unsolvable"] == 0 and a["classes"]["0"]["solvable"] == 0
    assert a["cut"]["pruned"]["solvable"] == 0
    assert g["answered"] == 1 and g["lost"] == []


def test_a_narrow_oracle_beam_loses_solvable_states_only_to_ties() -> None:
    (g,) = audit([("run", _search_events("tot-bfs", "4 9 10 13", breadth=1))], PLUGINS)["groups"]
    a = g["depths"]["all"]
    assert a["cut"]["beam"]["solvable"] > 0
    assert a["beam_ties"]["solvable"] == a["cut"]["beam"]["solvable"]  # all score 1: order decided


# ---- official ToT logs -------------------------------------------------------------------------

def _y(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


S1 = ("4 * 5 = 20 (left: 6 10 20)", "4 + 5 = 9 (left: 6 9 10)", "10 / 6 = 1.666 (left: 1.666 4 5)",
      "6 - 4 = 2 (left: 2 5 10)")
S2 = ("10 - 6 = 4 (left: 4 20)", "6 + 10 = 16 (left: 16 20)", "6 + 9 = 15 (left: 10 15)",
      "4 * 5 = 20 (left: 1.666 20)")
OFFICIAL_ENTRY = {
    "idx": 900,
    "steps": [
        {"step": 0, "x": "4 5 6 10", "ys": [""],
         "new_ys": [_y(S1[0]), _y(S1[1]), _y(S1[2]), _y(S1[0]), _y(S1[3])],
         "values": [21.0, 3.0, 1.002, 0, 0.003],
         "select_new_ys": [_y(S1[0]), _y(S1[1]), _y(S1[2])]},
        {"step": 1, "x": "4 5 6 10", "ys": [_y(S1[0]), _y(S1[1]), _y(S1[2])],
         "new_ys": [_y(S1[0], S2[0]), _y(S1[0], S2[1]), _y(S1[1], S2[2]), _y(S1[2], S2[3])],
         "values": [60.0, 0.003, 1.002, 1.002],
         "select_new_ys": [_y(S1[0], S2[0]), _y(S1[1], S2[2])]},
        {"step": 2, "x": "4 5 6 10", "ys": [_y(S1[0], S2[0]), _y(S1[1], S2[2])],
         "new_ys": [_y(S1[0], S2[0], "4 + 20 = 24 (left: 24)"), _y(S1[1], S2[2], "10 + 15 = 25 (left: 25)")],
         "values": [60.0, 0.003],
         "select_new_ys": [_y(S1[0], S2[0], "4 + 20 = 24 (left: 24)"), _y(S1[1], S2[2], "10 + 15 = 25 (left: 25)")]},
        {"step": 3, "x": "4 5 6 10", "ys": [],
         "new_ys": [_y(S1[0], S2[0], "4 + 20 = 24 (left: 24)", "Answer: (4 * 5) + (10 - 6) = 24"),
                    _y(S1[1], S2[2], "10 + 15 = 25 (left: 25)", "25 - 1 = 24 (left: 24)")],
         "values": [60.0, 0],
         "select_new_ys": [_y(S1[0], S2[0], "4 + 20 = 24 (left: 24)", "Answer: (4 * 5) + (10 - 6) = 24")]},
    ],
    "ys": [_y(S1[0], S2[0], "4 + 20 = 24 (left: 24)", "Answer: (4 * 5) + (10 - 6) = 24")],
    "infos": [{"r": 1}],
    "usage_so_far": {"completion_tokens": 1, "prompt_tokens": 1, "cost": 0.0},
}


def test_decode_value() -> None:
    assert decode_value(21.001) == ["sure", "likely", "impossible"]
    assert decode_value(60.0) == ["sure"] * 3 and decode_value(0.003) == ["impossible"] * 3
    assert decode_value(0) == [] and decode_value(2.001) == ["likely", "likely", "impossible"]
    assert decode_value(-1) is None and decode_value(0.0005) is None and decode_value(float("nan")) is None


@given(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5))
def test_decode_value_inverts_the_official_sum(sure: int, likely: int, impossible: int) -> None:
    value = sum(v * n for v, n in ((20, sure), (1, likely), (0.001, impossible)))
    assert decode_value(value) == ["sure"] * sure + ["likely"] * likely + ["impossible"] * impossible


def test_step_faults() -> None:
    nums = tuple(Fraction(n) for n in (4, 5, 6, 10))
    assert step_fault(nums, "4 * 5 = 20 (left: 6 10 20)") is None
    assert step_fault(nums, "5 - 6 = -1 (left: 4 -1 10)") is None
    assert step_fault(nums, "6 / 4 = 1.5 (left: 1.5 5 10)") is None
    assert step_fault(nums, "10 / 6 = 1.666 (left: 1.666 4 5)") == "wrong result"
    assert step_fault(nums, "4 * 5 = 20 (left: 6 20)") == "wrong left list"
    assert step_fault(nums, "4 * 5 = 20") == "missing left list"
    assert step_fault(nums, "4 * 4 = 16 (left: 5 6 10 16)") == "operands not available"
    assert step_fault(nums, "10 / 1.5 = 6.67 (approx.) (left: 6.67)") == "approximate result"
    assert step_fault(nums, "four times five") == "not a step"
    minus = tuple(Fraction(n) for n in (-1, 6, 10))
    assert step_fault(minus, "6 + (-1) = 5 (left: 5 10)") is None


def test_an_official_log_gives_exact_figures(tmp_path: Path) -> None:
    events = entry_events(OFFICIAL_ENTRY)
    assert events[0]["audit"] == {"puzzles": 1, "official_r_solved": 1, "reverified_solved": 1,
                                  "candidates": 13, "duplicates": 1}
    path = tmp_path / "official.json"
    path.write_text(json.dumps([OFFICIAL_ENTRY]))
    out = tmp_path / "official.md"
    assert main(["audit", "--tot-log", str(path), "--markdown", str(out)]) == 0
    (g,) = audit([("log", events)], PLUGINS)["groups"]
    assert g["answered"] == 1 and g["lost"] == [] and g["imported"]["official_r_solved"] == 1
    assert g["invalid_states"] == {"count": 3, "kept": 1, "by_kind": {
        "follows an invalid step": 1, "operands not available": 1, "wrong result": 1}}
    a = g["depths"]["all"]
    # 13 candidates, 1 duplicate: 12 evaluated. Solvable: 6 10 20, 4 20, 24 (left), the answer.
    assert (a["evaluated"], a["solvable"], a["unsolvable"], a["invalid"]) == (12, 4, 5, 3)
    assert a["false_prune"]["k"] == 0 and a["false_prune"]["n"] == 4
    assert (a["true_prune"]["k"], a["true_prune"]["n"]) == (2, 5)
    assert a["kept"] == {"solvable": 4, "unsolvable": 3, "invalid": 1}
    d1 = g["depths"]["1"]
    assert (d1["evaluated"], d1["solvable"], d1["unsolvable"], d1["invalid"]) == (4, 1, 2, 1)
    # Step 2 keeps values 60 and 1.002; the other 1.002 (after a wrong step) is cut by order: a tie.
    assert g["depths"]["2"]["beam_ties"] == {"solvable": 0, "unsolvable": 0, "invalid": 1}
    assert g["depths"]["2"]["cut"]["beam"] == {"solvable": 0, "unsolvable": 1, "invalid": 1}
    c = a["classes"]
    assert (c["sure"]["solvable"], c["sure"]["unsolvable"]) == (4, 0)
    assert (c["likely"]["unsolvable"], c["likely"]["invalid"]) == (2, 2)
    assert c["refused (0)"]["invalid"] == 1
    assert "wrong result 1" in out.read_text()


def test_official_log_ties_and_losses() -> None:
    entry = json.loads(json.dumps(OFFICIAL_ENTRY))
    # Keep only the 4 + 5 branch at step 0 (6 9 10 cannot reach 24) and cut 4 * 5 by a tie.
    entry["steps"][0]["values"] = [3.0, 3.0, 1.002, 0, 0.003]
    entry["steps"][0]["select_new_ys"] = [_y(S1[1])]
    entry["steps"] = entry["steps"][:1]
    entry["ys"], entry["infos"] = [_y(S1[1])], [{"r": 0}]
    (g,) = audit([("log", entry_events(entry))], PLUGINS)["groups"]
    a = g["depths"]["all"]
    assert a["cut"]["beam"]["solvable"] == 1 and a["beam_ties"]["solvable"] == 1
    assert g["lost"] == [{"puzzle": "4 5 6 10", "step": 1, "cause": "cut: beam 1"}]


def test_bad_input_is_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit"]) == 2
    assert main(["audit", str(tmp_path / "missing.jsonl")]) == 2
    notlog = tmp_path / "x.json"
    notlog.write_text('{"a": 1}')
    assert main(["audit", "--tot-log", str(notlog)]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"idx": 1, "steps": [{"x": "1 2 3"}]}]))
    assert main(["audit", "--tot-log", str(bad)]) == 2
    bad.write_text(json.dumps([{"idx": 1, "steps": [{"x": "1 2 3 4", "new_ys": ["1 + 2 = 3 (left: 3 3 4)\n"],
                                                    "values": ["high"], "select_new_ys": []}]}]))
    assert main(["audit", "--tot-log", str(bad)]) == 2
    empty = tmp_path / "e.jsonl"
    empty.write_text('{"event": "x"}\n')
    assert main(["audit", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 6 and all(line.startswith("tot: error:") for line in err)


def test_json_output_is_one_object_with_the_documented_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _bfs_trace()))
    assert main(["audit", str(path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["schema"] == "tot-audit/1"
    (g,) = rep["groups"]
    assert {"source", "task", "method", "generator", "evaluator", "model", "runs", "puzzles_solvable", "answered",
            "answered_correct", "score_bins",
            "lost", "lost_rate", "refused_by_gate", "invalid_states", "depths"} <= set(g)
    assert {"evaluated", "solvable", "unsolvable", "invalid", "unknown", "kept", "cut", "beam_ties", "false_prune",
            "false_prune_pruned", "false_prune_beam", "false_prune_beam_tie", "false_prune_unvisited",
            "false_prune_beam_avoidable", "true_prune",
            "cut_other_solvable",
            "classes"} == set(g["depths"]["all"])


# ---- restore -----------------------------------------------------------------------------------

@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(1, 13), min_size=4, max_size=4), st.lists(st.integers(0, 10_000), max_size=3))
def test_game24_restore_inverts_describe(puzzle: list[int], picks: list[int]) -> None:
    task = Game24()
    text = " ".join(map(str, puzzle))
    state = task.root(text)
    for pick in picks:
        thoughts = find(task, LegalMoves).legal_thoughts(state)
        if not thoughts:
            break
        verdict = task.check(state, thoughts[pick % len(thoughts)])
        state = verdict.state  # type: ignore[union-attr]
        back = find(task, Restorable).restore(text, task.describe(state))
        assert back == state and find(task, HasOracle).oracle(back) == find(task, HasOracle).oracle(state)


def test_game24_restore_refuses_non_states() -> None:
    with pytest.raises(ValueError):
        find(Game24(), Restorable).restore("1 2 3 4", "1 2 3 4 5")
    with pytest.raises(ValueError):
        find(Game24(), Restorable).restore("1 2 3 4", "one two")
