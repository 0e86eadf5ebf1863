"""Progress of long runs: plain lines off a terminal, a live bar on one, nothing with --json."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from solver.tools.cli import main
from solver.tools.progress import RunProgress

ROWS = [{"verified": True, "calls": 5, "tokens": 100, "cost": 0.001},
        {"verified": False, "calls": 7, "tokens": 50, "cost": 0.002},
        {"verified": True, "calls": 1, "tokens": 10, "cost": None}]


def test_plain_lines_carry_done_solved_calls_tokens_cost_rate_eta() -> None:
    out = io.StringIO()
    with RunProgress(3, "game24 bench", stream=out, every=0, terminal=False) as p:
        for row in ROWS:
            p.finished(row)
    lines = out.getvalue().splitlines()
    assert [ln.split(",")[0] for ln in lines] == ["game24 bench: 1/3 done", "game24 bench: 2/3 done",
                                                  "game24 bench: 3/3 done"]
    assert "solved 2, calls 13, tokens 160, $0.0030" in lines[-1]
    assert "/min, ETA 0s" in lines[-1] and "ETA" in lines[0]


def test_plain_lines_are_throttled_but_the_last_always_shows() -> None:
    out = io.StringIO()
    with RunProgress(3, "x", stream=out, every=3600, terminal=False) as p:
        for row in ROWS:
            p.finished(row)
    assert [ln.split(",")[0] for ln in out.getvalue().splitlines()] == ["x: 1/3 done", "x: 3/3 done"]


def test_quiet_shows_nothing_and_a_terminal_gets_a_bar() -> None:
    out = io.StringIO()
    with RunProgress(3, "x", stream=out, every=0, terminal=False, quiet=True) as p:
        p.finished(ROWS[0])
    assert out.getvalue() == ""
    with RunProgress(3, "x", stream=out, terminal=True) as p:
        for row in ROWS:
            p.finished(row)
    shown = out.getvalue()
    assert "3/3" in shown and "solved 2, calls 13, tokens 160" in shown and "\x1b[" in shown


def test_solve_range_reports_progress_on_stderr_and_not_with_json(capsys: Any) -> None:
    argv = ["solve", "game24", "--generated", "--range", "1-3", "--evaluator", "oracle"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "game24 solve: 3/3 done, solved 3, calls 0" in err
    assert main([*argv, "--json"]) == 0
    assert "solve:" not in capsys.readouterr().err


def test_bench_reports_progress_and_not_with_json(tmp_path: Path, capsys: Any) -> None:
    argv = ["bench", "game24", "--generated", "--range", "1-2", "--methods", "tot-bfs", "--evaluator", "oracle",
            "--no-plots"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    assert "game24 bench: 2/2 done, solved 2" in capsys.readouterr().err
    assert main([*argv, "--out", str(tmp_path / "b"), "--json"]) == 0
    assert "bench:" not in capsys.readouterr().err
