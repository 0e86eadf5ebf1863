"""``tot export``: the test sets never leak, whatever file or folder names them, and splits written
into one folder by separate runs are one export (issue 56); bad ``--out`` folders and manifests are
one-line errors with exit status 2, before anything is written (issue 59).

The shipped test puzzles are read here with ``csv`` alone (ranks 901-1000 of the package's 24.csv),
not through the project's loader."""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from solver.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "tasks" / "data" / "tot" / "24" / "24.csv"


def shipped_rows() -> list[dict[str, str]]:
    with open(SHIPPED, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def norm(puzzle: str) -> str:
    return " ".join(sorted(puzzle.split(), key=int))


TEST = {norm(r["Puzzles"]) for r in shipped_rows() if 901 <= int(r["Rank"]) <= 1000}
VAL = [norm(r["Puzzles"]) for r in shipped_rows() if 801 <= int(r["Rank"]) <= 900]


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def cut(tmp: Path, n: int = 800) -> Path:
    """The shipped 24.csv cut to its first ``n`` ranks (the issue's file)."""
    return write_csv(tmp / "F.csv", shipped_rows()[:n])


def shuffled(tmp: Path) -> Path:
    """The shipped puzzles under new ranks: the test puzzles at ranks 1-100, 801-900 and elsewhere."""
    rows = shipped_rows()
    order = list(range(len(rows)))
    random.Random(7).shuffle(order)
    return write_csv(tmp / "S.csv", [{**rows[j], "Rank": str(i + 1)} for i, j in enumerate(order)])


def run(*argv: str) -> int:
    return main(["export", *argv])


def puzzles_in(out: Path) -> dict[str, list[str]]:
    """split -> the puzzle of every record of its value file (with --max-states 1: one a puzzle)."""
    found: dict[str, list[str]] = {}
    for path in sorted(out.glob("*-value.jsonl")):
        split = path.name.split("-", 1)[0]
        found[split] = [json.loads(line)["puzzle"] for line in path.read_text(encoding="utf-8").splitlines()]
    return found


def one_line_exit_2(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert run(*argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1 and "internal" not in err, err
    return err


# ---- the test set cannot leak through --data or TOT_DATA_DIR --------------------------------------

def test_a_cut_data_file_puts_no_test_puzzle_in_any_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: 24.csv cut to its first 800 ranks. Every puzzle of every split is written
    (one value record a puzzle with --max-states 1) and none is a shipped test puzzle."""
    assert len(TEST) == 100
    out = tmp_path / "out"
    assert run("game24", "--data", str(cut(tmp_path)), "--formats", "value", "--max-states", "1",
               "--out", str(out)) == 0
    printed = capsys.readouterr().out
    found = puzzles_in(out)
    every = [norm(p) for ps in found.values() for p in ps]
    assert len(found["train"]) == 1820 - 100  # every multiset but the test puzzles
    assert found["val"] == []  # the file has no ranks 801-900
    assert not set(every) & TEST
    assert "ranks 901-1000 of the 24.csv shipped with the package" in printed
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"]["data_sha256"] == __import__("hashlib").sha256(
        (tmp_path / "F.csv").read_bytes()).hexdigest()


@pytest.mark.parametrize("make", [cut, shuffled, lambda tmp: cut(tmp, 950)])
@pytest.mark.parametrize("via", ["--data", "TOT_DATA_DIR"])
def test_no_data_file_puts_a_test_puzzle_in_a_split(make: Any, via: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks.game24.cli import PLUGIN

    path = make(tmp_path)
    args: Any = type("Args", (), {"data": None, "limit": None})()
    if via == "--data":
        args.data = str(path)
    else:
        (tmp_path / "dir" / "24").mkdir(parents=True)
        shutil.copy(path, tmp_path / "dir" / "24" / "24.csv")
        monkeypatch.setenv("TOT_DATA_DIR", str(tmp_path / "dir"))
    splits = {s: [norm(p) for _, p in PLUGIN.export_puzzles(s, args)] for s in PLUGIN.export_splits}
    assert not set(splits["train"]) & TEST and not set(splits["val"]) & TEST
    assert not set(splits["train"]) & set(splits["val"])
    assert TEST <= {norm(p) for p in PLUGIN.held_out_puzzles(args)}
    # the file's own ranks 901-1000 are held out too, and its ranks 801-900 are the validation puzzles
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    own_test = {norm(r["Puzzles"]) for r in rows if 901 <= int(r["Rank"]) <= 1000}
    own_val = [norm(r["Puzzles"]) for r in rows if 801 <= int(r["Rank"]) <= 900]
    assert not (set(splits["train"]) | set(splits["val"])) & own_test
    assert splits["val"] == [p for p in own_val if p not in TEST | own_test]
    assert len(splits["train"]) == len({" ".join(map(str, ms)) for ms in _multisets()} - TEST - own_test
                                       - set(own_val))


def _multisets() -> list[tuple[int, ...]]:
    import itertools

    return list(itertools.combinations_with_replacement(range(1, 14), 4))


def test_the_shipped_file_gives_the_splits_it_always_gave() -> None:
    from tasks.game24.cli import PLUGIN

    args: Any = type("Args", (), {"data": None, "limit": None})()
    val = PLUGIN.export_puzzles("val", args)
    assert [p for _, p in val] == VAL and val[0][0] == "csv:801"
    train = PLUGIN.export_puzzles("train", args)
    assert len(train) == 1820 - 200 and train[0] == ("multiset:1 1 1 1", "1 1 1 1")
    assert {norm(p) for p in PLUGIN.held_out_puzzles(args)} == TEST


# ---- planning: LLM+P's test problems are held out whatever the folder calls them -------------------

def _llmp_copy(tmp: Path) -> Path:
    from tests.test_export import DOMAIN, PROBLEMS, pddl_problem

    data = tmp / "llmp"
    (data / "blocksworld").mkdir(parents=True)
    (data / "blocksworld" / "domain.pddl").write_text(DOMAIN, encoding="utf-8")
    for i in PROBLEMS:
        (data / "blocksworld" / f"p{i:02d}.pddl").write_text(pddl_problem(i), encoding="utf-8")
    return data


def test_a_problem_with_a_recorded_test_goal_is_held_out_under_any_name(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks.planning import export
    from tasks.planning.state import read_problem

    data = _llmp_copy(tmp_path)
    args: Any = type("Args", (), {"llmp_dir": str(data), "domains": "blocksworld", "ranks": "5-20",
                                  "val_range": "3-4", "planner": None})()
    before = {pid for _, ps in export._splits(args)[0].items() for pid, _ in ps}
    assert "blocksworld/p06" in before
    p06 = read_problem(dict(export._splits(args)[0]["train"])["blocksworld/p06"])
    monkeypatch.setitem(export.LLMP_TEST_GOALS, export.goal_fingerprint(p06.domain_name, frozenset(p06.goal)),
                        "a test problem")
    splits, held = export._splits(args)
    assert "blocksworld/p06" not in {pid for ps in splits.values() for pid, _ in ps}
    assert any("(problem bw6)" in text for text in held)


LLMP = Path(os.environ.get("TOT_LLMP_DIR") or ROOT.parent / "shared" / "data" / "llmp")


@pytest.mark.skipif(not (LLMP / "blocksworld" / "p01.pddl").is_file(), reason="the LLM+P files are not installed")
def test_the_recorded_goals_are_llmp_s_test_problems_and_hold_them_out_renamed(tmp_path: Path) -> None:
    from tasks.planning import export
    from tasks.planning.files import LLMP_DOMAINS, domain_file, join_puzzle, read_text
    from tasks.planning.state import read_problem

    found = set()
    for name in LLMP_DOMAINS:
        dom = read_text(domain_file(LLMP / name), "domain")
        for i in (1, 2):
            prob = read_problem(join_puzzle(dom, read_text(LLMP / name / f"p{i:02d}.pddl", "problem")))
            found.add(export.goal_fingerprint(prob.domain_name, frozenset(prob.goal)))
    assert found == set(export.LLMP_TEST_GOALS)
    # a folder where p01 and p02 are renamed p07 and p08 (and the real p07, p08 dropped)
    folder = tmp_path / "renamed" / "grippers"
    folder.mkdir(parents=True)
    shutil.copy(domain_file(LLMP / "grippers"), folder / "domain.pddl")
    for src, dst in ((1, 7), (2, 8), (5, 5), (3, 3)):
        shutil.copy(LLMP / "grippers" / f"p{src:02d}.pddl", folder / f"p{dst:02d}.pddl")
    args: Any = type("Args", (), {"llmp_dir": str(tmp_path / "renamed"), "domains": "grippers", "ranks": "5-20",
                                  "val_range": "3-4", "planner": None})()
    splits, _ = export._splits(args)
    ids = {pid for ps in splits.values() for pid, _ in ps}
    assert "grippers/p07" not in ids and "grippers/p08" not in ids and "grippers/p05" in ids


# ---- splits written by separate runs into one folder -----------------------------------------------

def test_a_run_with_other_options_is_refused_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mix = str(tmp_path / "mix")
    assert run("sudoku", "--size", "3", "--splits", "train", "--count", "200", "--formats", "value", "--out", mix) == 0
    capsys.readouterr()
    err = one_line_exit_2(capsys, "sudoku", "--size", "3", "--splits", "val", "--count", "1", "--formats", "value",
                          "--out", mix)
    assert "count: 200 there, 1 here" in err
    assert not (tmp_path / "mix" / "val-value.jsonl").exists()
    err = one_line_exit_2(capsys, "sudoku", "--size", "9", "--splits", "val", "--count", "200", "--formats", "value",
                          "--out", mix)
    assert "size: 3 there, 9 here" in err
    for other in (["--latin"], ["--blanks", "4"], ["--seed", "1"], ["--val-count", "3"], ["--max-states", "5"]):
        one_line_exit_2(capsys, "sudoku", "--size", "3", "--count", "200", "--splits", "val", "--formats", "value",
                        "--out", mix, *other)
    assert not (tmp_path / "mix" / "val-value.jsonl").exists()
    # the same options: the split is added, and no puzzle is in both
    assert run("sudoku", "--size", "3", "--splits", "val", "--count", "200", "--formats", "value", "--out", mix) == 0
    found = puzzles_in(tmp_path / "mix")
    assert found["train"] and found["val"] and not set(found["train"]) & set(found["val"])
    assert "13*|**3|*21" not in set(found["train"]) & set(found["val"])
    manifest = json.loads((tmp_path / "mix" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"] == {"size": 3, "blanks": None, "latin": False, "count": 200, "val_count": 50,
                                   "max_states": 2000, "pairs": 2, "paths": 4, "limit": None, "seed": 0}
    # rewriting every split with other options starts the folder afresh
    assert run("sudoku", "--size", "4", "--count", "3", "--val-count", "2", "--formats", "value", "--out", mix) == 0
    manifest = json.loads((tmp_path / "mix" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"]["size"] == 4 and sorted(manifest["splits"]) == ["train", "val"]


def test_a_puzzle_already_in_another_split_of_the_folder_is_refused(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The check at adding a split reads the folder's manifest: a val puzzle listed under train there
    (as a folder mixed by hand would list it) stops the run."""
    from solver.tools.export import puzzle_hash

    out = tmp_path / "g"
    common = ["--formats", "value", "--max-states", "1", "--limit", "5", "--out", str(out)]
    assert run("game24", "--splits", "train", *common) == 0
    capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    manifest["splits"]["train"]["puzzle_hashes"][0] = puzzle_hash(VAL[2])
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    err = one_line_exit_2(capsys, "game24", "--splits", "val", *common)
    assert "csv:803 of split val is in split train" in err
    assert not (out / "val-value.jsonl").exists()


def test_an_older_manifest_without_options_is_refused_unless_every_split_is_rewritten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "g"
    common = ["--formats", "value", "--max-states", "1", "--limit", "3", "--out", str(out)]
    assert run("game24", *common) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["options"]
    for entry in manifest["splits"].values():
        del entry["puzzle_hashes"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    capsys.readouterr()
    assert "recorded no options" in one_line_exit_2(capsys, "game24", "--splits", "val", *common)
    assert run("game24", "--splits", "val,train", *common) == 0


def test_the_same_options_write_the_same_bytes_into_a_folder_again(tmp_path: Path) -> None:
    args = ["sudoku", "--size", "4", "--count", "4", "--val-count", "2"]
    assert run(*args, "--out", str(tmp_path / "a")) == 0
    assert run(*args, "--splits", "train", "--out", str(tmp_path / "b")) == 0
    assert run(*args, "--splits", "val", "--out", str(tmp_path / "b")) == 0
    names = sorted(p.name for p in (tmp_path / "a").glob("*.jsonl"))
    assert names == sorted(p.name for p in (tmp_path / "b").glob("*.jsonl")) and len(names) == 8
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


# ---- --out and the manifest: one line, exit 2, nothing written (issue 59) ----------------------------

def _file(tmp: Path) -> Path:
    (tmp / "f").write_text("a file\n", encoding="utf-8")
    return tmp / "f"


BAD_OUT = {
    "an existing file": lambda tmp: str(_file(tmp)),
    "under a file": lambda tmp: str(_file(tmp) / "sub"),
    "deeper under a file": lambda tmp: str(_file(tmp) / "a" / "b"),
}


@pytest.mark.parametrize("case", sorted(BAD_OUT))
def test_out_that_cannot_be_a_folder_is_one_line_exit_2(case: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = BAD_OUT[case](tmp_path)
    one_line_exit_2(capsys, "game24", "--limit", "1", "--out", out)
    assert (tmp_path / "f").read_text(encoding="utf-8") == "a file\n"


def test_an_empty_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for out in ("", "  "):
        assert "--out is empty" in one_line_exit_2(capsys, "game24", "--limit", "1", "--out", out)
    assert "--data is empty" in one_line_exit_2(capsys, "game24", "--data", "", "--limit", "1", "--out", "x")
    assert list(tmp_path.iterdir()) == []


BAD_MANIFEST: dict[str, Any] = {
    "a list": "[]",
    "splits [1]": json.dumps({"task": "game24", "splits": [1]}),
    "a split that is a number": json.dumps({"task": "game24", "options": {}, "splits": {"train": 1}}),
    "not JSON": "{",
    "NaN": '{"task": "game24", "splits": {}, "options": {"seed": NaN}}',
    "deeply nested": "[" * 100_000 + "]" * 100_000,
    "not UTF-8": b"\xff\xfe{}",
    "a number too long": '{"task": "game24", "splits": {}, "x": ' + "9" * 5000 + "}",
    "a directory": None,
}


@pytest.mark.parametrize("case", sorted(BAD_MANIFEST))
def test_a_manifest_that_is_not_one_is_one_line_exit_2_before_writing(case: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    content = BAD_MANIFEST[case]
    if content is None:
        (out / "manifest.json").mkdir()
    elif isinstance(content, bytes):
        (out / "manifest.json").write_bytes(content)
    else:
        (out / "manifest.json").write_text(content, encoding="utf-8")
    one_line_exit_2(capsys, "game24", "--limit", "1", "--formats", "value", "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]


def test_a_file_the_export_writes_that_is_a_folder_is_refused_first(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    (out / "val-value.jsonl").mkdir(parents=True)
    one_line_exit_2(capsys, "game24", "--limit", "1", "--formats", "value", "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["val-value.jsonl"]


def test_another_task_s_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert run("sudoku", "--size", "3", "--count", "2", "--val-count", "1", "--formats", "value", "--out", out) == 0
    capsys.readouterr()
    err = one_line_exit_2(capsys, "game24", "--limit", "1", "--out", out)
    assert "sudoku" in err and "not game24" in err
