"""The false-prune audit as a library call: ``audit_trace(task, trace)`` gives the figures ``tot
audit`` prints, for a user's own task; checked against the command on real traces and against an
expectation computed here, independently, on a hand-built trace of a small task of our own."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from solver.run import SearchSettings, Settings, solve
from solver.searches import get_search
from solver.tools.audit import DepthFigures, GroupAudit, TraceAudit, audit_trace
from solver.tools.cli import main
from solver.tools.stats import Proportion
from solver.trace import Trace
from tasks.game24 import Game24
from tasks.sudoku.task import Sudoku

# ---- the command and the call agree ----------------------------------------------------------------

@pytest.fixture(scope="module")
def game24_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """BFS runs with a narrow beam and a blind evaluator (false prunes), and DFS runs (prunes)."""
    path = tmp_path_factory.mktemp("audit") / "runs.jsonl"
    for method, evaluator, puzzles in (("tot-bfs", "random", ("4 9 10 13", "1 1 4 6", "2 5 8 11")),
                                       ("tot-dfs", "random", ("4 9 10 13", "3 3 8 8")),
                                       ("tot-bfs", "oracle", ("4 9 10 13",))):
        for puzzle in puzzles:
            s = Settings(search=SearchSettings(method=method, generator="enumerate", evaluator=evaluator,
                                               options=get_search(method).options_from({"breadth": 1,
                                                                                        "prune_below": 0.5})))
            trace = Trace(path)
            asyncio.run(solve(Game24(), puzzle, s, None, trace))
            trace.close()
    return path


def _same_rate(api: Proportion, cli: dict[str, Any]) -> None:
    assert (api.k, api.n, api.rate) == (cli["k"], cli["n"], cli["rate"])
    assert (api.interval or (None, None)) == (cli["low"], cli["high"])


def _same_depth(api: DepthFigures, cli: dict[str, Any]) -> None:
    for key in ("evaluated", "solvable", "unsolvable", "invalid", "unknown"):
        assert getattr(api, key) == cli[key], key
    for key in ("false_prune", "false_prune_pruned", "false_prune_beam", "false_prune_beam_tie",
                "cut_other_solvable", "true_prune"):
        _same_rate(getattr(api, key), cli[key])
    assert list(api.classes) == list(cli["classes"])
    for name, c in api.classes.items():
        want = cli["classes"][name]
        assert (c.solvable, c.unsolvable, c.invalid, c.unknown, c.solvable_cut, c.unsolvable_cut) == (
            want["solvable"], want["unsolvable"], want["invalid"], want["unknown"], want["solvable_cut"],
            want["unsolvable_cut"])
        _same_rate(c.p_solvable, want["p_solvable"])


def test_the_call_gives_the_figures_of_the_command(game24_trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["audit", str(game24_trace), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert main(["audit", str(game24_trace)]) == 0
    table = capsys.readouterr().out
    api = audit_trace(Game24(), game24_trace)
    assert len(api.groups) == len(cli["groups"]) == 3
    assert sum(g.overall.false_prune.k for g in api.groups) > 0  # the figures are not all zero
    for g, want in zip(api.groups, cli["groups"], strict=True):
        assert (g.source, g.task, g.method, g.generator, g.evaluator, g.model, g.runs) == tuple(
            want[k] for k in ("source", "task", "method", "generator", "evaluator", "model", "runs"))
        assert (g.puzzles_solvable, g.answered, g.answered_correct) == (
            want["puzzles_solvable"], want["answered"], want["answered_correct"])
        assert [(x.puzzle, x.step, x.cause) for x in g.lost] == [
            (x["puzzle"], x["step"], x["cause"]) for x in want["lost"]]
        _same_rate(g.lost_rate, want["lost_rate"])
        _same_depth(g.overall, want["depths"]["all"])
        assert [str(d) for d in g.by_depth] == [k for k in want["depths"] if k != "all"]
        for depth, figures in g.by_depth.items():
            _same_depth(figures, want["depths"][str(depth)])
    assert api.text() == table
    assert dict(api.report) == cli


def test_a_trace_object_or_its_events_give_the_same_figures(game24_trace: Path) -> None:
    from solver.trace_reader import read_trace

    from_file = audit_trace(Game24(), game24_trace, source="runs")
    from_events = audit_trace(Game24(), read_trace(game24_trace), source="runs")
    assert from_file == from_events
    trace = Trace()
    s = Settings(search=SearchSettings(method="tot-bfs", generator="enumerate", evaluator="random",
                                       options=get_search("tot-bfs").options_from({"breadth": 1})))
    asyncio.run(solve(Game24(), "4 9 10 13", s, None, trace))
    [g] = audit_trace(Game24(), trace).groups
    assert g.source == "trace" and g.runs == 1 and g.overall.evaluated > 0


# ---- a user's task, a hand-built trace, an expectation computed here --------------------------------

class TakeAway:
    """Reach exactly 0 from the puzzle's number by subtracting 2, 3 or 5 (a user's task)."""

    name = "takeaway"

    @staticmethod
    @cache
    def _reach(n: int) -> bool:
        return n == 0 or (n > 0 and any(TakeAway._reach(n - k) for k in (2, 3, 5)))

    def oracle(self, state: int) -> bool:
        return self._reach(state)

    def restore(self, puzzle: str, description: str) -> int:
        if not description.isdigit():
            raise ValueError(f"not a state: {description!r}")
        return int(description)


def solvable(n: int) -> bool:
    """Closed form, not a search: 2a + 3b (+ 5c) reaches every whole number except 1."""
    return n == 0 or n >= 2


# (node, parent, depth, state, score or None (not scored), fate) per run; fates as the trace says them
Node = tuple[int, int, int, int, "float | None", str]
BFS_NODES = [(1, 0, 1, 4, 0.2, "beam"), (2, 0, 1, 3, 0.9, "kept"), (3, 0, 1, 1, 0.5, "beam"),
             (4, 0, 1, 3, None, "duplicate"), (5, 2, 2, 1, 0.1, "open"), (6, 2, 2, 0, None, "solved")]
# a beam of two that kept an unsolvable state (1) over two solvable ones: one of them was avoidable
BFS_WRONG = [(1, 0, 1, 1, 0.9, "kept"), (2, 0, 1, 3, 0.8, "kept"), (3, 0, 1, 4, 0.5, "beam"),
             (4, 0, 1, 2, 0.4, "beam"), (5, 2, 2, 0, None, "solved")]
DFS_NODES = [(1, 0, 1, 5, 0.3, "pruned"), (2, 0, 1, 4, 0.8, "kept"), (3, 0, 1, 2, 0.6, "depth"),
             (4, 2, 2, 2, 0.7, "kept"), (5, 2, 2, 1, 0.4, "pruned"), (6, 4, 3, 0, None, "solved")]


def _events(method: str, puzzle: int, nodes: list[Node]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"event": "start", "task": "takeaway", "puzzle": str(puzzle), "method": method, "generator": "mine",
         "evaluator": "mine"},
        {"event": "search", "method": method, "breadth": 1},
        {"event": "root", "node": 0, "state": str(puzzle)},
        {"event": "proposal", "parent": 0, "thought": "minus 9"},  # refused by the gate: no node
        {"event": "verdict", "parent": 0, "thought": "minus 9", "verdict": "invalid", "reason": "below 0"},
    ]
    states = {0: puzzle}
    for nid, parent, depth, state, _score, fate in nodes:
        states[nid] = state
        out.append({"event": "proposal", "node": nid, "parent": parent, "depth": depth,
                    "thought": f"minus {states[parent] - state}"})
        out.append({"event": "verdict", "node": nid, "verdict": "solved" if fate == "solved" else "valid",
                    "state": str(state)})
        if fate == "duplicate":
            out.append({"event": "cut", "node": nid, "why": "duplicate"})
    out += [{"event": "score", "node": nid, "score": score, "detail": None}
            for nid, _p, _d, _s, score, _f in nodes if score is not None]
    for nid, _p, _d, _s, _score, fate in nodes:
        if fate == "kept":
            out.append({"event": "keep", "node": nid})
        elif fate in ("beam", "pruned", "depth"):
            out.append({"event": "cut", "node": nid, "why": fate, "tie": False})
    solved = next(nid for nid, *_rest, fate in nodes if fate == "solved")
    out += [{"event": "answer", "node": solved, "answer": "...", "verified": True, "accepted": True},
            {"event": "end", "verified": True, "stopped_by": None}]
    return out


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson interval as the roots of (k/n - p)^2 = z^2 p (1 - p) / n (the textbook form)."""
    a = 1 + z * z / n
    b = -(2 * k / n + z * z / n)
    c = (k / n) ** 2
    root = math.sqrt(max(0.0, b * b - 4 * a * c))
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def _best_beam(nodes: list[Node], depth: int) -> int:
    """The most solvable states any choice of as many states as the beam kept could have kept
    (every subset tried), less those it did keep."""
    rows = [(solvable(s), fate) for _n, _p, d, s, score, fate in nodes
            if score is not None and d == depth and fate in ("kept", "beam")]
    if all(f == "kept" for _ok, f in rows):
        return 0
    width = sum(1 for _ok, f in rows if f == "kept")
    best = max(sum(ok for ok, _f in pick) for pick in itertools.combinations(rows, width))
    return best - sum(1 for ok, f in rows if ok and f == "kept")


def _expect(nodes: list[Node], depth: int | None, bfs: bool = False) -> dict[str, tuple[int, int]]:
    scored = [(solvable(s), fate) for _n, _p, d, s, score, fate in nodes
              if score is not None and (depth is None or d == depth)]
    solv = sum(1 for ok, _f in scored if ok)
    unsolv = len(scored) - solv
    depths = {d for _n, _p, d, _s, score, _f in nodes if score is not None and (depth is None or d == depth)}
    return {"false_prune_beam_avoidable": (sum(_best_beam(nodes, d) for d in depths), solv) if bfs else (0, 0),
            "false_prune": (sum(1 for ok, f in scored if ok and f in ("pruned", "beam")), solv),
            "false_prune_pruned": (sum(1 for ok, f in scored if ok and f == "pruned"), solv),
            "false_prune_beam": (sum(1 for ok, f in scored if ok and f == "beam"), solv),
            "cut_other_solvable": (sum(1 for ok, f in scored if ok and f == "depth"), solv),
            "true_prune": (sum(1 for ok, f in scored if not ok and f in ("pruned", "beam")), unsolv),
            "evaluated": (len(scored), len(scored))}


def _check(g: GroupAudit, nodes: list[Node]) -> None:
    depths = sorted({d for _n, _p, d, _s, score, _f in nodes if score is not None})
    assert sorted(g.by_depth) == depths
    for depth, figures in [(None, g.overall)] + [(d, g.by_depth[d]) for d in depths]:
        want = _expect(nodes, depth, bfs=g.method == "tot-bfs")
        assert figures.evaluated == want.pop("evaluated")[0]
        assert figures.solvable + figures.unsolvable == figures.evaluated and figures.invalid == figures.unknown == 0
        for key, (k, n) in want.items():
            got: Proportion = getattr(figures, key)
            assert (got.k, got.n) == (k, n), (depth, key)
            if n:
                lo, hi = _wilson(k, n)
                assert got.interval == pytest.approx((lo, hi), abs=1e-12), (depth, key)
            else:
                assert got.interval == (0.0, 1.0) and got.rate is None  # no evidence: the whole interval
    assert (g.puzzles_solvable, g.answered, g.answered_correct, g.lost) == (1, 1, 1, ())


def test_a_users_task_and_a_hand_built_trace(tmp_path: Path) -> None:
    assert [solvable(n) for n in range(12)] == [TakeAway().oracle(n) for n in range(12)]
    events = _events("tot-bfs", 6, BFS_NODES) + _events("tot-dfs", 7, DFS_NODES)
    path = tmp_path / "takeaway.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    result = audit_trace(TakeAway(), path)
    assert isinstance(result, TraceAudit)
    bfs, dfs = result.groups
    assert (bfs.method, dfs.method) == ("tot-bfs", "tot-dfs")
    _check(bfs, BFS_NODES)
    _check(dfs, DFS_NODES)
    wrong_audit = audit_trace(TakeAway(), _events("tot-bfs", 6, BFS_WRONG))
    [wrong] = wrong_audit.groups
    _check(wrong, BFS_WRONG)
    assert (wrong.overall.false_prune_beam_avoidable.k, wrong.overall.false_prune_beam.k) == (1, 2)
    assert "avoidable [95% CI]" in wrong_audit.text()
    assert "avoidable" not in audit_trace(TakeAway(), _events("tot-dfs", 7, DFS_NODES)).text()  # no beam there
    # the hand-computed figures, spelled out once
    assert (bfs.overall.false_prune.k, bfs.overall.false_prune.n) == (1, 2)
    assert (dfs.by_depth[1].false_prune_pruned.k, dfs.by_depth[1].cut_other_solvable.k) == (1, 1)
    assert (dfs.by_depth[2].true_prune.k, dfs.by_depth[2].true_prune.n) == (1, 1)
    assert audit_trace(TakeAway(), events) == audit_trace(TakeAway(), path, source="trace")
    assert "false-prune" in result.text() and "| depth |" in result.text(markdown=True)


# ---- one-line errors ---------------------------------------------------------------------------------

def test_what_the_call_refuses_is_said_in_one_line(tmp_path: Path, game24_trace: Path) -> None:
    class NoRestore:
        name = "takeaway"

        def oracle(self, state: int) -> bool:
            return True

    with pytest.raises(ValueError, match=r"^the false-prune audit needs a task with states restorable from a trace "
                       r"\(Restorable: restore\(puzzle, description\)\); NoRestore has none$"):
        audit_trace(NoRestore(), game24_trace)
    with pytest.raises(ValueError, match="holds runs of task 'game24'; the task given is 'takeaway'"):
        audit_trace(TakeAway(), game24_trace)
    with pytest.raises(ValueError, match="holds no search"):
        audit_trace(TakeAway(), [{"event": "start", "task": "takeaway", "puzzle": "6"}])
    with pytest.raises(ValueError, match="event 1 has 'node' that is not a whole number"):
        audit_trace(TakeAway(), [{"event": "root", "node": "0", "state": "6"}])
    with pytest.raises(ValueError, match="trace file not found"):
        audit_trace(TakeAway(), tmp_path / "missing.jsonl")
    latin = tmp_path / "latin.jsonl"
    assert main(["solve", "sudoku", "--size", "4", "--seed", "1", "--latin", "--generator", "enumerate",
                 "--evaluator", "oracle", "--trace", str(latin)]) == 0
    with pytest.raises(ValueError, match=r'holds runs with task options \{"rules": "latin"\}; the task given has'):
        audit_trace(Sudoku(), latin)
    [g] = audit_trace(Sudoku(boxes=False), latin).groups
    assert g.puzzles_solvable == 1


# ---- the page's examples run as written and print what it says -------------------------------------

def test_the_examples_of_the_page_print_what_it_says(tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    page = (Path(__file__).resolve().parent.parent / "docs" / "false-prune-audit.md").read_text(encoding="utf-8")
    pairs = re.findall(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", page, re.S)
    assert len(pairs) == 2
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for i, (code, printed) in enumerate(pairs):
        script = tmp_path / f"example{i}.py"
        script.write_text(code, encoding="utf-8")
        run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300, env=env)
        assert run.returncode == 0, run.stderr
        assert run.stdout == printed, (run.stdout, printed)


def test_searches_called_directly_are_audited_like_runs_of_solve(tmp_path: Path) -> None:
    # run_search("tot-bfs", ...) called directly writes no ``start``; its ``search`` event names the task and the
    # puzzle, so the audit splits the runs and judges their states as it does solve's.
    from solver.evaluators import make_evaluator
    from solver.generators import make_generator
    from solver.searches import run_search

    puzzles = ("4 9 10 13", "1 1 4 6", "1 1 1 1")
    direct, solved = Trace(tmp_path / "direct.jsonl"), Trace(tmp_path / "solve.jsonl")
    s = Settings(search=SearchSettings(method="tot-bfs", generator="enumerate", evaluator="random",
                                       options=get_search("tot-bfs").options_from({"breadth": 1})))
    for p in puzzles:
        asyncio.run(run_search("tot-bfs", Game24(), p, make_generator("enumerate"), make_evaluator("random"), None,
                               breadth=1, trace=direct))
        asyncio.run(solve(Game24(), p, s, None, solved))
    direct.close()
    solved.close()
    a, b = audit_trace(Game24(), tmp_path / "direct.jsonl"), audit_trace(Game24(), tmp_path / "solve.jsonl")
    [ga], [gb] = a.groups, b.groups
    assert ga.runs == gb.runs == len(puzzles) and ga.task == "game24"
    assert ga.overall.evaluated == gb.overall.evaluated > 0 and ga.overall.unknown == 0
    for key in ("false_prune", "true_prune", "cut_other_solvable"):
        x, y = getattr(ga.overall, key), getattr(gb.overall, key)
        assert (x.k, x.n) == (y.k, y.n), key
    assert ga.puzzles_solvable == gb.puzzles_solvable == 2  # 1 1 1 1 has no solution
    with pytest.raises(ValueError, match="'game24'"):
        audit_trace(TakeAway(), tmp_path / "direct.jsonl")  # the direct runs name their task


def test_tot_audit_exits_1_when_nothing_could_be_audited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The user's task (takeaway) is no installed plugin, so the command cannot judge its runs (the API can).
    path = tmp_path / "takeaway.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _events("tot-bfs", 6, BFS_NODES)))
    assert main(["audit", str(path)]) == 1
    captured = capsys.readouterr()
    assert "not auditable: no installed task named 'takeaway'" in captured.out
    assert captured.err == "tot: no run in these files could be audited (each group above says why)\n"
    assert audit_trace(TakeAway(), path).groups[0].runs == 1


def test_a_perfect_judge_on_the_papers_beam_loses_solvable_states_but_none_avoidably(tmp_path: Path) -> None:
    # The exact oracle as the evaluator: a beam of 5 still cuts solvable states where a level has
    # more than 5 (its width), but never one it could have kept in place of an unsolvable state.
    # The seeded random judge, on the same beam, does lose some avoidably.
    puzzles = ("4 9 10 13", "1 2 4 7", "2 5 8 11", "6 7 8 9", "4 5 6 10")
    figures = {}
    for evaluator in ("oracle", "random"):
        trace = Trace(tmp_path / f"{evaluator}.jsonl")
        s = Settings(search=SearchSettings(method="tot-bfs", generator="enumerate", evaluator=evaluator))
        for p in puzzles:
            asyncio.run(solve(Game24(), p, s, None, trace))
        trace.close()
        [figures[evaluator]] = audit_trace(Game24(), tmp_path / f"{evaluator}.jsonl").groups
    perfect, blind = figures["oracle"].overall, figures["random"].overall
    assert perfect.false_prune_beam.k > 0 and perfect.false_prune_beam_avoidable.k == 0
    assert perfect.false_prune_beam_avoidable.n == perfect.solvable
    assert 0 < blind.false_prune_beam_avoidable.k <= blind.false_prune_beam.k
