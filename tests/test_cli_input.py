"""Bad command-line input is the user's: one line on stderr and exit 2, before a model is
loaded, a process started or a file written (issue 59); never an internal error (exit 3) and never
a silent fall-back. No model is loaded here: every run is model-free or refused before one is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tools.cli import main

SOLVE = ["solve", "game24", "4 9 10 13", "--method", "tot-dfs", "--generator", "enumerate", "--evaluator", "prior"]
BENCH = ["bench", "game24", "--range", "1-1", "--methods", "tot-dfs:enumerate:prior", "--no-plots"]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], says: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error: ") and err.count("\n") == 1, err
    assert says in err, err


@pytest.fixture
def afile(tmp_path: Path) -> Path:
    f = tmp_path / "afile"
    f.write_text("not a directory\n")
    return f


def test_a_trace_that_cannot_be_a_file_is_one_line(tmp_path: Path, afile: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _refused([*SOLVE, "--trace", str(tmp_path)], capsys, "is a directory, not a file")
    _refused([*SOLVE, "--trace", str(afile / "run.jsonl")], capsys, "is not a directory")
    _refused([*SOLVE, "--trace", ""], capsys, "--trace is empty")
    _refused([*SOLVE, "--cache", str(afile / "cache.sqlite")], capsys, "is not a directory")
    _refused([*BENCH, "--out", str(tmp_path / "out"), "--trace", str(tmp_path)], capsys, "is a directory, not a file")
    assert not (tmp_path / "out").exists()


def test_a_bench_out_that_cannot_be_a_directory_is_one_line(tmp_path: Path, afile: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _refused([*BENCH, "--out", str(afile)], capsys, "is a file, not a results directory")
    _refused([*BENCH, "--out", str(afile / "sub")], capsys, "cannot make the results directory")
    monkeypatch.chdir(tmp_path)
    _refused([*BENCH, "--out", ""], capsys, "--out is empty")
    assert not (tmp_path / "config.json").exists() and not (tmp_path / "results.jsonl").exists()
    assert afile.read_text() == "not a directory\n"


@pytest.mark.parametrize("jobs", ["99999999999", "0", "-2", "513"])
def test_jobs_out_of_range_are_refused_before_anything_runs(jobs: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BENCH, "--out", str(tmp_path / "out"), "--jobs", jobs]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"tot: error: --jobs must be between 1 and 512, not {jobs}\n"  # and no "N processes"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("url, says", [
    ("http://[::1", "bad --base-url 'http://[::1': Invalid IPv6 URL"),
    ("http://localhost:99999/v1", "Port out of range"),
    ("http://localhost:port/v1", "bad --base-url"),
    ("http://", "use http://HOST:PORT/v1"),
    ("ftp://localhost/v1", "use http://HOST:PORT/v1"),
    ("", "--base-url is empty"),
    (" , ", "--base-url is empty"),
])
def test_a_bad_base_url_is_one_line_and_never_another_server(url: str, says: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """An empty --base-url used to fall back to api.openai.com; a bad port or bracket was an
    internal error (exit 3)."""
    _refused(["models", "--base-url", url], capsys, says)
    _refused([*SOLVE, "--base-url", url], capsys, says)


def test_bench_report_without_finished_results_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    errored, junk = tmp_path / "errored", tmp_path / "junk"
    errored.mkdir()
    junk.mkdir()
    (errored / "results.jsonl").write_text(json.dumps({"task": "game24", "id": "1", "method": "tot-dfs",
                                                       "status": "error", "error": "LMError: down"}) + "\n")
    (junk / "results.jsonl").write_text(json.dumps({"id": 1, "method": "x"}) + "\n")  # not a bench row
    _refused(["bench", "report", str(errored), "--no-plots"], capsys, "no finished results in")
    _refused(["bench", "report", str(junk), "--no-plots"], capsys, "no results in")
    _refused(["bench", "report", str(tmp_path), "--no-plots"], capsys, "no results in")
    assert not (errored / "summary.txt").exists()


def test_a_good_run_still_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The checks refuse only what is wrong: the same commands with good paths run (exit 0)."""
    trace = tmp_path / "new" / "run.jsonl"
    assert main([*SOLVE, "--trace", str(trace)]) == 0
    assert trace.is_file()
    out = tmp_path / "bench"
    assert main([*BENCH, "--out", str(out), "--trace", str(tmp_path / "bench.jsonl")]) == 0
    assert main(["bench", "report", str(out), "--no-plots"]) == 0
    capsys.readouterr()
