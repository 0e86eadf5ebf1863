"""``tot export countdown``: every exported label agrees with the brute force of
tests/test_countdown_exact.py (written apart from the oracle that made the labels), under both
rules: each value label and distance, each good step, each preference pair and each stepwise label
(a solution still reachable after the step), with the
states and steps read back from the records' text by hand. The shipped test set is never in a split."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tasks.countdown import cli as countdown_cli
from tasks.countdown.data import load_split
from tests.test_countdown_exact import brute_once, brute_television

_STEP = re.compile(r"^(\S+) ([-+*/]) (\S+) = (\S+) \(left: ([^)]*)\)$")
_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}


def _numbers(text: str) -> list[Fraction]:
    return [Fraction(x) for x in text.split()]


def _after(numbers: list[Fraction], step: str) -> list[Fraction]:
    """The numbers after ``step``, worked out by hand (and the step's own left list must say so)."""
    m = _STEP.match(step.strip())
    assert m, step
    a, op, b, c = Fraction(m[1]), m[2], Fraction(m[3]), Fraction(m[4])
    assert _OPS[op](a, b) == c, step
    rest = Counter(numbers)
    rest.subtract([a, b])
    assert min(rest.values()) >= 0, step
    left = sorted((+rest + Counter([c])).elements())
    assert left == sorted(_numbers(m[5])), step
    return left


def _truth(rules: str, numbers: list[Fraction], target: int) -> int | None:
    """Steps to a solution by the brute force (None: none)."""
    if rules == "once":
        return len(numbers) - 1 if brute_once(tuple(numbers), target) else None
    if any(x.denominator != 1 or x <= 0 for x in numbers):
        return None
    return brute_television(tuple(int(x) for x in numbers), target)


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("rules", ["once", "television"])
def test_every_exported_label_agrees_with_the_brute_force(tmp_path: Path, rules: str) -> None:
    out = tmp_path / "export"
    run = subprocess.run([sys.executable, "-m", "solver.tools.cli", "export", "countdown", "--out", str(out),
                          "--rules", rules, "--limit", "3", "--max-states", "150"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"]["rules"] == rules and set(manifest["splits"]) == {"train", "val"}
    checked = Counter[str]()
    memo: dict[tuple[tuple[Fraction, ...], int], int | None] = {}

    def truth(numbers: list[Fraction], target: int) -> int | None:
        key = (tuple(sorted(numbers)), target)
        if key not in memo:
            memo[key] = _truth(rules, list(key[0]), target)
        return memo[key]

    for split in ("train", "val"):
        for rec in _read(out / f"{split}-value.jsonl"):
            target = int(rec["puzzle"].split("->")[1])
            want = truth(_numbers(rec["state"]), target)
            assert rec["solvable"] == (want is not None), rec
            assert rec["distance"] == want, rec
            assert rec["completion"] == (" sure" if want is not None else " impossible"), rec
            checked["value"] += 1
        for rec in _read(out / f"{split}-step.jsonl"):
            target = int(rec["puzzle"].split("->")[1])
            before = truth(_numbers(rec["state"]), target)
            after = truth(_after(_numbers(rec["state"]), rec["completion"]), target)
            assert before is not None and after == before - 1, rec  # keeps a solution, one step nearer
            checked["step"] += 1
        for rec in _read(out / f"{split}-preference.jsonl"):
            target = int(rec["puzzle"].split("->")[1])
            state = _numbers(rec["state"])
            chosen = truth(_after(state, rec["chosen"]), target)
            rejected = truth(_after(state, rec["rejected"]), target)
            assert chosen is not None and (rejected is None or rejected > chosen), rec
            checked["preference"] += 1
        for rec in _read(out / f"{split}-stepwise.jsonl"):
            target = int(rec["puzzle"].split("->")[1])
            state = _numbers(rec["state"])
            for step, label in zip(rec["completions"], rec["labels"], strict=True):
                state = _after(state, step)
                assert label == (truth(state, target) is not None), (rec, step)  # a solution still reachable
            checked["stepwise"] += 1
    assert all(checked[k] > 0 for k in ("value", "step", "preference", "stepwise")), checked


def test_the_test_set_is_held_out_of_every_split(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = countdown_cli.PLUGIN
    args = argparse.Namespace(rules="once")
    test = [p for _, p in load_split("test")]
    held = plugin.held_out_puzzles(args)
    assert len(held) == 120
    for split in plugin.export_splits:
        assert not {p for _, p in plugin.export_puzzles(split, args)} & held
    # a train set that holds a test puzzle (its numbers in another order): the puzzle is dropped
    numbers, target = test[0].split(" -> ")
    shuffled = " ".join(reversed(numbers.split())) + " -> " + target
    real = countdown_cli.load_split
    monkeypatch.setattr(countdown_cli, "load_split",
                        lambda name, ranks=None: [("train:0", shuffled), *real(name, ranks)] if name == "train"
                        else real(name, ranks))
    ids = [pid for pid, _ in plugin.export_puzzles("train", args)]
    assert "train:0" not in ids and len(ids) == 1999
