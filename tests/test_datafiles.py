"""The papers' data ships inside the package (tasks/data/tot): the defaults of --data/--index, the
benchmarks and the tests need no ../shared beside the checkout; $TOT_DATA_DIR still overrides."""

import csv
import fnmatch
import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest

from tasks.crosswords.data import default_data as crosswords_default
from tasks.game24.data import default_csv, load_csv
from tasks.writing.data import default_data as writing_default

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = Path(str(files("tasks"))) / "data" / "tot"  # found by importlib, not by tasks.datafiles


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv("TOT_DATA_DIR", raising=False)


def test_the_defaults_are_the_packaged_files(no_override):
    assert default_csv() == PACKAGED / "24" / "24.csv"
    assert crosswords_default() == PACKAGED / "crosswords" / "mini0505.json"
    assert writing_default() == PACKAGED / "text" / "data_100_random_text.txt"
    for p in (default_csv(), crosswords_default(), writing_default()):
        assert p.is_file()


def test_the_packaged_files_are_the_papers_with_their_licence():
    assert (PACKAGED / "LICENSE").read_text().startswith("MIT License")
    assert "Shunyu Yao" in (PACKAGED / "LICENSE").read_text()
    readme = (PACKAGED / "README.md").read_text()
    assert "princeton-nlp/tree-of-thought-llm" in readme and "ab400345" in readme
    with (PACKAGED / "24" / "24.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 1362 and [int(r["Rank"]) for r in rows] == list(range(1, 1363))
    assert all(sorted(map(int, r["Puzzles"].split())) == list(map(int, r["Puzzles"].split())) for r in rows)
    minis = json.loads((PACKAGED / "crosswords" / "mini0505.json").read_text())
    assert len(minis) == 156 and all(len(c) == 10 and len(b) == 25 for c, b in minis)
    assert json.loads((PACKAGED / "crosswords" / "mini0505_0_100_5.json").read_text()) == minis[0:100:5]
    assert len((PACKAGED / "text" / "data_100_random_text.txt").read_text(encoding="utf-8").splitlines()) == 100


def test_tot_data_dir_overrides_and_falls_back_file_by_file(tmp_path, monkeypatch):
    (tmp_path / "24").mkdir()
    (tmp_path / "24" / "24.csv").write_text("Rank,Puzzles\n1,1 1 1 1\n")
    monkeypatch.setenv("TOT_DATA_DIR", str(tmp_path))
    assert load_csv(default_csv(), "1") == [(1, "1 1 1 1")]
    assert crosswords_default() == PACKAGED / "crosswords" / "mini0505.json"  # not in the override


def test_tot_solve_data_works_from_any_directory(tmp_path):
    """Run where no ../shared can be found (the working directory is an empty temporary one)."""
    env = {k: v for k, v in os.environ.items() if k != "TOT_DATA_DIR"}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([sys.executable, "-m", "solver.tools.cli", "solve", "game24", "--data", "--range", "901-902",
                        "--generator", "enumerate", "--evaluator", "oracle", "--json"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with (PACKAGED / "24" / "24.csv").open(newline="") as fh:
        expected = [row["Puzzles"] for row in csv.DictReader(fh)][900:902]
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert [g["puzzle"] for g in got] == expected and all(g["verified"] for g in got)


def test_pyproject_ships_every_data_file():
    tomllib = pytest.importorskip("tomllib")
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["tasks"]
    shipped = [p.relative_to(ROOT / "tasks").as_posix() for p in (ROOT / "tasks" / "data").rglob("*") if p.is_file()]
    assert len(shipped) == 6
    for rel in shipped:
        assert any(fnmatch.fnmatch(rel, g) for g in globs), rel
