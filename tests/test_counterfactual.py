"""Counterfactual replays on small hand-made Game-of-24 traces whose outcomes are worked out by hand."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from solver.tools.audit.figures import audit
from solver.tools.cli import main
from solver.tools.counterfactual import parse_policies
from solver.tools.plugins import load_plugins

PLUGINS = load_plugins()


def _reach24(nums: list[Fraction]) -> bool:
    """Independent brute force: can these numbers make 24 with + - * /?"""
    if len(nums) == 1:
        return nums[0] == 24
    for i, j in itertools.permutations(range(len(nums)), 2):
        rest = [n for k, n in enumerate(nums) if k not in (i, j)]
        a, b = nums[i], nums[j]
        outs = [a + b, a - b, a * b] + ([a / b] if b != 0 else [])
        if any(_reach24(rest + [o]) for o in outs):
            return True
    return False


def test_the_hand_made_states_are_what_the_tests_assume() -> None:
    def ok(s: str) -> bool:
        return _reach24([Fraction(int(x)) for x in s.split()])
    assert ok("1 1 4 6") and ok("1 4 6") and ok("4 6") and ok("24")
    assert not ok("2 4 6") and not ok("5 6") and not ok("10") and not ok("6 6") and not ok("12")


def _ev(node: int, parent: int, depth: int, state: str | None, verdict: str = "valid") -> list[dict[str, Any]]:
    v: dict[str, Any] = {"event": "verdict", "node": node, "verdict": verdict}
    if state is not None:
        v["state"] = state
    return [{"event": "proposal", "node": node, "parent": parent, "depth": depth, "thought": "t"}, v]


def _score(node: int, score: float) -> dict[str, Any]:
    return {"event": "score", "node": node, "score": score}


def _bfs_log() -> list[dict[str, Any]]:
    """Beam 1; the run keeps a wrong answer over the right one at the last level (as an
    official log that ranks final answers by value does) and breaks a tie at level 3."""
    ev: list[dict[str, Any]] = [
        {"event": "start", "task": "game24", "puzzle": "1 1 4 6", "method": "tot-bfs", "generator": "g",
         "evaluator": "value", "model": "m"},
        {"event": "search", "method": "tot-bfs", "breadth": 1, "depth": 4},
        {"event": "root", "node": 0, "state": "1 1 4 6"},
    ]
    ev += _ev(1, 0, 1, "1 4 6") + _ev(2, 0, 1, "2 4 6")
    ev += [_score(1, 20), _score(2, 1), {"event": "keep", "node": 1}, {"event": "cut", "node": 2, "why": "beam"}]
    ev += _ev(3, 1, 2, "4 6") + _ev(4, 1, 2, "5 6")
    ev += [_score(3, 20), _score(4, 1), {"event": "keep", "node": 3}, {"event": "cut", "node": 4, "why": "beam"}]
    ev += _ev(5, 3, 3, "24") + _ev(6, 3, 3, "10")
    ev += [_score(5, 20), _score(6, 20), {"event": "keep", "node": 5},
           {"event": "cut", "node": 6, "why": "beam", "tie": True}]
    ev += _ev(7, 5, 4, "24", "solved") + _ev(8, 5, 4, None, "invalid")
    ev += [_score(7, 0.001), _score(8, 1.0), {"event": "keep", "node": 8}, {"event": "cut", "node": 7, "why": "beam"}]
    ev += [{"event": "end", "verified": False, "stopped_by": None}]
    return ev


def _dfs_solved() -> list[dict[str, Any]]:
    """DFS (prune below 0.5): a dead subtree first, then the solvable branch."""
    ev: list[dict[str, Any]] = [
        {"event": "start", "task": "game24", "puzzle": "1 1 4 6", "method": "tot-dfs", "generator": "g",
         "evaluator": "likelihood", "model": "m"},
        {"event": "search", "method": "tot-dfs", "depth": 4, "prune_below": 0.5},
        {"event": "root", "node": 0, "state": "1 1 4 6"},
    ]
    ev += _ev(1, 0, 1, "2 4 6") + _ev(2, 0, 1, "1 4 6") + [_score(1, 0.9), _score(2, 0.8)]
    ev += [{"event": "keep", "node": 1}] + _ev(3, 1, 2, "6 6") + [_score(3, 0.6), {"event": "keep", "node": 3}]
    ev += _ev(4, 3, 3, "12") + [_score(4, 0.7), {"event": "keep", "node": 4}]
    ev += [{"event": "keep", "node": 2}] + _ev(6, 2, 2, "4 6") + [_score(6, 0.9), {"event": "keep", "node": 6}]
    ev += _ev(7, 6, 3, "24", "solved") + [{"event": "answer", "node": 7, "answer": "1*1*4*6", "verified": True}]
    ev += [{"event": "end", "verified": True, "stopped_by": None}]
    return ev


def _dfs_lost() -> list[dict[str, Any]]:
    """DFS that prunes its solvable child: the run never saw that child's children."""
    ev: list[dict[str, Any]] = [
        {"event": "start", "task": "game24", "puzzle": "1 1 4 6", "method": "tot-dfs", "generator": "g",
         "evaluator": "likelihood", "model": "m"},
        {"event": "search", "method": "tot-dfs", "depth": 4, "prune_below": 0.5},
        {"event": "root", "node": 0, "state": "1 1 4 6"},
    ]
    ev += _ev(1, 0, 1, "2 4 6") + _ev(2, 0, 1, "1 4 6") + [_score(1, 0.9), _score(2, 0.4)]
    ev += [{"event": "keep", "node": 1}] + _ev(3, 1, 2, "6 6") + [_score(3, 0.3)]
    ev += [{"event": "cut", "node": 3, "why": "pruned"}, {"event": "cut", "node": 2, "why": "pruned"}]
    ev += [{"event": "end", "verified": False, "stopped_by": None}]
    return ev


POLICIES = parse_policies("original,oracle,ties=reverse,beam=2")


def _cf(events: list[dict[str, Any]]) -> dict[str, Any]:
    (g,) = audit([("t", events)], PLUGINS, POLICIES)["groups"]
    return dict(g["counterfactual"])


def test_bfs_replays() -> None:
    cf = _cf(_bfs_log())
    # The run kept the wrong answer: lost, 8 states scored.
    assert cf["original"]["solved"] == 0
    assert (cf["original"]["run_lost"], cf["original"]["cost"], cf["original"]["run_cost"]) == (1, 8, 8)
    # A perfect judge picks the solvable state at every level and keeps the right answer.
    assert (cf["oracle"]["lost_now_solved"], cf["oracle"]["cost"], cf["oracle"]["extra_cost"]) == (1, 8, 0)
    # Reverse ties keep "10" at level 3, whose children the run never generated.
    assert (cf["ties=reverse"]["undecidable"], cf["ties=reverse"]["solved"]) == (1, 0)
    # A wider beam keeps "2 4 6" too, which the run never expanded: undecidable, not guessed.
    assert cf["beam=2"]["lost_undecidable"] == 1


def test_dfs_replays() -> None:
    cf = _cf(_dfs_solved())
    assert (cf["original"]["solved"], cf["original"]["cost"], cf["original"]["run_cost"]) == (1, 5, 5)
    # The perfect judge skips the dead subtree: 2 fewer states scored.
    assert (cf["oracle"]["solved"], cf["oracle"]["cost"], cf["oracle"]["extra_cost"]) == (1, 3, -2)
    assert cf["ties=reverse"]["solved"] == 1
    lost = _cf(_dfs_lost())
    assert (lost["original"]["run_lost"], lost["original"]["solved"], lost["original"]["cost"]) == (1, 0, 3)
    # The oracle would expand the pruned "1 4 6", whose children are unknown.
    assert (lost["oracle"]["lost_undecidable"], lost["oracle"]["solved"]) == (1, 0)


def test_cli_flag_and_bad_policies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _bfs_log()))
    assert main(["audit", str(path), "--counterfactual", "oracle,ties=reverse"]) == 0
    out = capsys.readouterr().out
    assert "undecidable from the log" in out and "oracle" in out
    assert main(["audit", str(path), "--counterfactual", "beam=0"]) == 2
    assert main(["audit", str(path), "--counterfactual", "psychic"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("tot: error:") for line in err)


def test_markdown_writes_readable_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_audit import _bfs_trace

    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _bfs_trace()))
    md = tmp_path / "out" / "audit.md"
    assert main(["audit", str(path), "--markdown", str(md)]) == 0
    pngs = sorted(md.parent.glob("audit_*.png"))
    names = [p.name for p in pngs]
    assert any(n.startswith("audit_reliability_") for n in names)
    assert any(n.startswith("audit_false_prune_by_depth_") for n in names)
    for p in pngs:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
        assert f"]({p.name})" in md.read_text()


def test_thoughts_scored_before_they_are_nodes_are_audited() -> None:
    """Long's controller scores proposals before a round makes them nodes: the score event
    carries the state, so the audit judges it (Sudoku 3x3, solution 321|132|213)."""
    events = [
        {"event": "start", "task": "sudoku", "puzzle": "*2*|*32|*13", "method": "long", "generator": "propose",
         "evaluator": "value", "model": "m"},
        {"event": "root", "node": 0, "state": "*2*|*32|*13 (4 blank)"},
        {"event": "score", "parent": 0, "thought": "a", "score": 0.1, "state": "32*|*32|*13 (3 blank)",
         "detail": {"labels": ["impossible"]}},
        {"event": "cut", "parent": 0, "thought": "a", "why": "pruned", "score": 0.1},
        {"event": "score", "parent": 0, "thought": "b", "score": 0.9, "state": "12*|*32|*13 (3 blank)",
         "detail": {"labels": ["sure"]}},
        {"event": "end", "verified": False, "stopped_by": "rounds"},
    ]
    (g,) = audit([("s", events)], PLUGINS, parse_policies("oracle"))["groups"]
    a = g["depths"]["all"]
    assert (a["evaluated"], a["solvable"], a["unsolvable"]) == (2, 1, 1)
    assert (a["false_prune"]["k"], a["false_prune"]["n"]) == (1, 1)
    assert "counterfactual_unsupported" in g


def test_tot_show_marks_the_false_prunes_tot_audit_counts(tmp_path: Path) -> None:
    from solver.tools.show import load_trees
    from tests.test_audit import _bfs_trace, _dfs_trace

    for events in (_bfs_trace(), _dfs_trace(), _bfs_log()):
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        (g,) = audit([("t", events)], PLUGINS)["groups"]
        shown = sum(len(t.false_prunes()) for t in load_trees(str(path), plugins=PLUGINS))
        assert shown == g["depths"]["all"]["false_prune"]["k"]
