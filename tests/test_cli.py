"""The ``tot`` command: exit codes, one-line errors, JSON output; no model is loaded here."""

import json
import subprocess
import sys

import pytest

from solver.tools.cli import main
from tests import references as ref


def tot(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.tools.cli", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("answer, code", [
    ("(10 - 4) * (13 - 9)", 0), ("(10 - 4) * (13 - 8)", 1), ("__import__('os').system('echo hi')", 1),
    ("9**9**9**9**9", 1), ("(" * 100000, 1),
])
def test_verify_exit_codes(answer, code, capfd):
    assert main(["verify", "game24", "4 9 10 13", answer]) == code
    # capfd, not capsys: a shell command run by os.system writes to file descriptor 1, which
    # capsys would never see, so only capfd can notice "echo hi" having run.
    out = capfd.readouterr().out
    assert out.startswith("verified" if code == 0 else "NOT verified")
    assert "hi\n" not in out


@pytest.mark.parametrize("puzzle", ["4 9 10", "4 9 10 x", "", "4 9 10 13.5", "1 2 3 4 5", "4 9 10 99999"])
def test_bad_puzzle_is_one_line_exit_2(puzzle):
    r = tot("solve", "game24", puzzle, "--generator", "enumerate", "--evaluator", "oracle")
    assert r.returncode == 2
    assert r.stderr.startswith("tot: error:") and r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


def test_bad_verify_puzzle_exit_2():
    r = tot("verify", "game24", "4 9", "4*9")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_unknown_option_exit_2():
    r = tot("solve", "game24", "4 9 10 13", "--breadth", "zero")
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_oracle_solve_json(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    assert main(["solve", "game24", "4 9 10 13", "--generator", "enumerate", "--evaluator", "oracle",
                 "--json", "--trace", str(trace)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] is True and out["answer"]
    assert {"answer", "verified", "calls", "tokens", "seconds"} <= set(out)
    assert main(["verify", "game24", "4 9 10 13", out["answer"]]) == 0
    assert ref.game24_ok("4 9 10 13", out["answer"])
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[0] == {"event": "trace", "format": "verified-tot-trace", "version": 2}  # the writer's header
    assert events[1]["event"] == "start" and events[-1]["event"] == "end"


def test_unsolvable_ends_with_no_answer(capsys):
    assert main(["solve", "game24", "1 1 1 1", "--generator", "enumerate", "--evaluator", "oracle"]) == 0
    assert capsys.readouterr().out.startswith("no solution exists: the complete search tried every legal step")
    assert main(["solve", "game24", "1 1 1 1", "--evaluator", "oracle", "--method", "tot-bfs"]) == 0
    assert "no verified solution found" in capsys.readouterr().out


def test_csv_range(capsys):
    assert main(["solve", "game24", "--data", "--range", "901-903", "--generator", "enumerate",
                 "--evaluator", "oracle", "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["901", "902", "903"] and all(r["verified"] for r in rows)


def test_missing_data_file_exit_2():
    r = tot("solve", "game24", "--data", "/nonexistent.csv", "--range", "1-2")
    assert r.returncode == 2 and "no such data file" in r.stderr


@pytest.mark.parametrize("extra, why", [(["--chat"], "no chat template"),
                                        (["--backend", "local", "--model", "/nope.gguf"], "no such GGUF file")])
def test_local_model_misuse_is_one_line_exit_2(extra, why):
    r = tot("solve", "game24", "4 9 10 13", *extra)
    assert r.returncode == 2 and why in r.stderr and r.stderr.count("\n") == 1
