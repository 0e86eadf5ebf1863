"""``tot audit`` on Countdown traces: each run's scored states are rebuilt from the trace and judged
by the exact oracle; the counts of solvable states it reports agree with the brute force of
tests/test_countdown_exact.py on the states the trace names, under both rules."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

from tests.test_countdown_exact import brute_once, brute_television


def tot(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "solver.tools.cli", *argv], capture_output=True, text=True,
                          timeout=300)


def _solvable(rules: str, state: str, target: int) -> bool:
    numbers = [Fraction(x) for x in state.split()]
    if rules == "once":
        return brute_once(tuple(numbers), target)
    if any(x.denominator != 1 or x <= 0 for x in numbers):
        return False
    return brute_television(tuple(int(x) for x in numbers), target) is not None


def test_the_audit_counts_agree_with_the_brute_force(tmp_path: Path) -> None:
    trace = tmp_path / "runs.jsonl"
    runs = {"once": ("2 5 10 25", 120), "television": ("25 50 75 100 3 6", 952)}
    for rules, (numbers, target) in runs.items():
        out = tot("solve", "countdown", numbers, "--target", str(target), "--rules", rules, "--method", "tot-bfs",
                  "--evaluator", "random", "--trace", str(trace))
        assert out.returncode == 0, out.stderr
    audit = tot("audit", "--json", str(trace))
    assert audit.returncode == 0, audit.stderr
    groups = {g["options"]["rules"]: g for g in json.loads(audit.stdout)["groups"]}
    assert set(groups) == set(runs)
    # the states each run scored, read from the trace: a score event names a node, its verdict the state
    runs_events: list[list[dict]] = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["event"] == "start":
            runs_events.append([])
        if runs_events:  # the file's header event comes before the first run's start
            runs_events[-1].append(event)
    for events in runs_events:
        rules = events[0]["options"]["rules"]
        target = runs[rules][1]
        states = {e["node"]: e["state"] for e in events if e["event"] == "verdict" and e.get("state")}
        scored = [states[e["node"]] for e in events if e["event"] == "score"]
        solvable = sum(_solvable(rules, s, target) for s in scored)
        got = groups[rules]["depths"]["all"]
        assert (got["evaluated"], got["solvable"]) == (len(scored), solvable), rules
        assert solvable > 0 and groups[rules]["puzzles_solvable"] == 1
