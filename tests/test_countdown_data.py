"""Countdown's puzzle sets and files: the shipped train / val / test sets are what their seeds make,
hold no puzzle twice across sets, and have the documented sizes and solvability (the brute force of
tests/test_countdown_exact.py on the test set's 6-number puzzles); ``--data FILE`` reads JSON lines
and CSV with ``--range``, and every bad file or flag is one line on stderr with exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tasks.countdown.data import SPLITS, generate_split, load_file, load_split, normalise, split_path
from tasks.countdown.task import parse_puzzle
from tests.test_countdown_exact import brute_once, reference_ok


def tot(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "solver.tools.cli", *argv], capture_output=True, text=True,
                          timeout=300)


def _rows(name: str) -> list[tuple[tuple[int, ...], int]]:
    return [parse_puzzle(p) for _, p in load_split(name)]


@pytest.mark.parametrize("name", list(SPLITS))
def test_the_shipped_sets_are_what_their_seeds_make(name: str) -> None:
    made = generate_split(name)
    assert _rows(name) == made
    lines = split_path(name).read_text(encoding="utf-8").splitlines()
    assert [tuple(json.loads(ln)["numbers"]) for ln in lines] == [n for n, _ in made]


def test_no_puzzle_is_in_two_sets_and_the_sizes_are_as_documented() -> None:
    keys = {name: [normalise(*r) for r in _rows(name)] for name in SPLITS}
    for name, ks in keys.items():
        assert len(set(ks)) == len(ks), name
    assert not set(keys["test"]) & set(keys["val"])
    assert not set(keys["train"]) & (set(keys["test"]) | set(keys["val"]))
    assert len(keys["test"]) == len(keys["val"]) == 120 and len(keys["train"]) == 1999
    for name in ("test", "val"):
        rows = _rows(name)
        assert all(len(n) == 6 and 100 <= t <= 999 for n, t in rows)
    assert {len(n) for n, _ in _rows("train")} == {3, 4, 5, 6}


@pytest.mark.skipif(os.environ.get("TOT_COUNTDOWN_TEST_SET") != "1",
                    reason="the brute force over the 120 test puzzles takes minutes: TOT_COUNTDOWN_TEST_SET=1")
def test_the_test_set_is_100_solvable_then_20_unsolvable_by_the_brute_force() -> None:
    assert [brute_once(n, t) for n, t in _rows("test")] == [True] * 100 + [False] * 20


def test_a_few_test_puzzles_by_the_brute_force() -> None:
    rows = _rows("test")
    assert [brute_once(*rows[k]) for k in (0, 1, 100, 101)] == [True, True, False, False]


def test_data_files_in_both_formats_with_a_range(tmp_path: Path) -> None:
    jl = tmp_path / "p.jsonl"
    jl.write_text('{"numbers": [25, 50, 75, 100, 3, 6], "target": 952}\n\n{"nums": [1, 2, 3], "target": 6}\n'
                  '{"numbers": "4 9 10 13", "target": "24"}\n', encoding="utf-8")
    assert load_file(jl) == [("1", "25 50 75 100 3 6 -> 952"), ("2", "1 2 3 -> 6"), ("3", "4 9 10 13 -> 24")]
    assert load_file(jl, "2-3") == [("2", "1 2 3 -> 6"), ("3", "4 9 10 13 -> 24")]
    csv = tmp_path / "p.csv"
    csv.write_text('numbers,target\n"25 50 75 100 3 6",952\n1 2 3,6\n', encoding="utf-8")
    assert load_file(csv, "2") == [("2", "1 2 3 -> 6")]
    assert load_split("test", "1-2")[1][0] == "test:2"


BAD = [('{"numbers": [1, 2], "target": -1}', "line 1: the target -1"),
       ('{"numbers": [1, 2.5], "target": 3}', "line 1: 'numbers' must be"),
       ('{"numbers": [1, 2]}', "line 1: 'target' must be"),
       ("[1, 2]", "line 1: expected an object"),
       ('{"numbers": [1, 2], "target": 3}\nnot json', "line 2: not JSON"),
       ('{"numbers": [1, 2, 3, 4, 5, 6, 7, 8], "target": 3}', "line 1: "),
       ("", "holds no puzzles")]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        load_file(path)
    assert "\n" not in str(info.value)


def test_the_command_line(tmp_path: Path) -> None:
    out = tot("solve", "countdown", "--set", "test", "--range", "1-2")
    assert out.returncode == 0 and out.stdout.startswith("[test:1] answer: "), out.stdout + out.stderr
    assert "\n[test:2] answer: " in out.stdout and out.stdout.count("[verified]") == 2
    csv = tmp_path / "p.csv"
    csv.write_text("numbers,target\n1 2 3,7\n1 1 1 1,24\n", encoding="utf-8")
    out = tot("solve", "countdown", "--data", str(csv))  # the default settings: no model
    assert out.returncode == 0 and out.stdout.startswith("[1] answer: ") and "[verified]" in out.stdout, out.stdout
    assert "[2] no solution exists" in out.stdout and "calls 0" in out.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("numbers,goal\n1 2 3,7\n", encoding="utf-8")
    for argv, message in ((["--data", str(bad)], "has no 'numbers' and 'target' columns"),
                          (["--data", str(tmp_path / "none.jsonl")], "none.jsonl"),
                          (["--set", "test", "--range", "121"], "no puzzles in rows 121 of the test set"),
                          (["--set", "test", "--range", "x"], "bad range 'x'"),
                          (["--set", "test", "--target", "5"], "--target is for one puzzle"),
                          (["1 2 3", "--target", "6", "--range", "1"], "--range picks rows"),
                          (["1 2 3", "--set", "test"], "give one of a puzzle, --set or --data"),
                          ([], "give a puzzle")):
        out = tot("solve", "countdown", *argv)
        assert out.returncode == 2 and message in out.stderr, (argv, out.stderr)
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr


def test_bench_runs_on_a_shipped_set(tmp_path: Path) -> None:
    out = tot("bench", "countdown", "--set", "test", "--range", "1-2", "--methods", "tot-complete:enumerate:oracle",
              "--out", str(tmp_path / "bench"), "--no-plots", "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in (tmp_path / "bench" / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["test:1", "test:2"] and all(r["verified"] for r in rows)
    # the answers by the test's own reader, not the task's
    for r in rows:
        numbers, target = parse_puzzle(r["puzzle"])
        assert reference_ok(numbers, r["answer"], target, "once"), r["answer"]
