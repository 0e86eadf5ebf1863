"""The one executor (``solver.tools.executor``) on this machine's processes: every unit once, a
unit's exception as its outcome, a killed worker's units tried again and then recorded as failed,
and the batches that use it (bench, export, the planner runs) giving what one process gives."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solver.tools.cli import main
from solver.tools.executor import InProcess, LocalProcesses, RayCluster, Unit, executor_from
from tests.fake_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


# --- units (module level: spawned workers import them) ----------------------------------------------


def square(x: int) -> int:
    return x * x


def fails(x: int) -> int:
    raise RuntimeError(f"unit {x} is broken\nsecond line")


def dies_once(marker: str, x: int) -> int:
    """Kills its own worker the first time (no marker yet), answers the second time."""
    path = Path(marker)
    if not path.exists():
        path.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return x + 100


def always_dies(x: int) -> int:
    os.kill(os.getpid(), signal.SIGKILL)
    return x


def pid_of(x: int) -> int:
    time.sleep(0.05)
    return os.getpid()


# --- the executor --------------------------------------------------------------------------------


def test_every_unit_runs_once_and_comes_back() -> None:
    ex = LocalProcesses(2)
    try:
        units = [Unit(str(i), (i,)) for i in range(9)]
        got = {o.unit.key: (o.value, o.error, o.attempts) for o in ex.run(square, units)}
    finally:
        ex.close()
    assert got == {str(i): (i * i, None, 1) for i in range(9)}


def test_a_units_exception_is_its_outcome_in_one_line_and_the_batch_goes_on() -> None:
    ex = LocalProcesses(2)
    try:
        outs = {o.unit.key: o for o in ex.run(fails, [Unit("a", (1,)), Unit("b", (2,))])}
        more = [o.value for o in ex.run(square, [Unit("c", (3,))])]
    finally:
        ex.close()
    assert outs["a"].error == "RuntimeError: unit 1 is broken" and outs["a"].value is None
    assert outs["b"].error == "RuntimeError: unit 2 is broken"
    assert more == [9]


def test_a_killed_worker_s_unit_is_tried_again_in_a_new_worker(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    ex = LocalProcesses(2, retries=1)
    try:
        outs = {o.unit.key: o for o in ex.run(dies_once, [Unit("x", (str(marker), 1))])}
    finally:
        ex.close()
    assert marker.exists()  # it did die once
    assert outs["x"].value == 101 and outs["x"].error is None and outs["x"].attempts == 2


def test_a_unit_whose_worker_always_dies_is_failed_after_its_retries_and_the_rest_finish() -> None:
    ex = LocalProcesses(2, retries=1)
    try:
        outs = {o.unit.key: o for o in ex.run(always_dies, [Unit("dead", (0,))])}
        rest = {o.unit.key: o.value for o in ex.run(square, [Unit(str(i), (i,)) for i in range(4)])}
    finally:
        ex.close()
    assert outs["dead"].value is None and outs["dead"].attempts == 2
    assert "died 2 time(s)" in (outs["dead"].error or "")
    assert rest == {str(i): i * i for i in range(4)}


def test_workers_are_separate_processes_kept_for_many_units() -> None:
    ex = LocalProcesses(2)
    try:
        pids = [o.value for o in ex.run(pid_of, [Unit(str(i), (i,)) for i in range(8)])]
    finally:
        ex.close()
    assert os.getpid() not in pids and 1 <= len(set(pids)) <= 2


def test_the_command_line_chooses_the_executor_and_refuses_bad_values(capsys: pytest.CaptureFixture[str]) -> None:
    class A:
        jobs, ray, unit_retries = 1, None, 2

    assert isinstance(executor_from(A()), InProcess)
    a = A()
    a.jobs = 0
    with pytest.raises(ValueError, match="at least 1"):
        executor_from(a)
    a.jobs, a.unit_retries = 2, -1
    with pytest.raises(ValueError, match="at least 0"):
        executor_from(a)
    a.jobs, a.unit_retries, a.ray = 2, 2, "auto"
    with pytest.raises(ValueError, match="not both"):
        executor_from(a)
    big = LocalProcesses((os.cpu_count() or 1) + 1)
    big.close()
    assert "more workers than this machine" in capsys.readouterr().err


def test_a_ray_address_where_nothing_listens_is_one_line_at_once() -> None:
    pytest.importorskip("ray") if not os.environ.get("CI") else None
    start = time.monotonic()
    with pytest.raises(ValueError, match="no Ray cluster answers at 127.0.0.1:1"):
        RayCluster("127.0.0.1:1")
    with pytest.raises(ValueError, match="bad --ray address"):
        RayCluster("nonsense")
    assert time.monotonic() - start < 30


# --- the batches ---------------------------------------------------------------------------------


TIMING = {"seconds"}


def rows(d: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for line in (d / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        assert (r["id"], r["method"]) not in out, f"{r['id']} {r['method']} written twice"
        out[(r["id"], r["method"])] = {k: v for k, v in r.items() if k not in TIMING}
    return out


def test_bench_in_worker_processes_writes_what_one_process_writes(tmp_path: Path) -> None:
    argv = ["bench", "game24", "--range", "1-12", "--methods",
            "tot-complete:enumerate:oracle,tot-bfs:enumerate:oracle", "--no-plots", "--json"]
    assert main([*argv, "--out", str(tmp_path / "one"), "--trace", str(tmp_path / "one.jsonl")]) == 0
    assert main([*argv, "--out", str(tmp_path / "two"), "--jobs", "2", "--trace", str(tmp_path / "two.jsonl")]) == 0
    one, two = rows(tmp_path / "one"), rows(tmp_path / "two")
    assert len(one) == 24 and one == two
    assert all(r["status"] == "done" and r["verified"] for r in two.values())

    def runs(path: Path) -> list[list[str]]:  # each run's events, without their times
        out: list[list[str]] = []
        for line in path.read_text().splitlines():
            e = json.loads(line)
            if e["event"] == "trace":
                continue
            if e["event"] == "start":
                out.append([])
            out[-1].append(json.dumps({k: v for k, v in e.items() if k not in ("t", "seconds")}, sort_keys=True))
        return sorted(out)

    assert runs(tmp_path / "one.jsonl") == runs(tmp_path / "two.jsonl")


def test_bench_through_an_endpoint_in_workers_equals_one_process(tmp_path: Path) -> None:
    with FakeOpenAIServer(["ok"]) as srv:
        argv = ["bench", "game24", "--range", "1-6", "--methods", "io,cot", "--no-plots", "--json",
                "--base-url", srv.url, "--model", "fake"]
        assert main([*argv, "--out", str(tmp_path / "one")]) == 0
        assert main([*argv, "--out", str(tmp_path / "two"), "--jobs", "2"]) == 0
    one, two = rows(tmp_path / "one"), rows(tmp_path / "two")
    assert len(one) == 12 and one == two and all(r["calls"] == 1 for r in one.values())


def test_a_bench_killed_mid_run_with_workers_resumes_only_what_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "b"
    with FakeOpenAIServer(["slow"], delay=0.3) as srv:
        cmd = [sys.executable, "-m", "solver.tools.cli", "bench", "game24", "--range", "1-10", "--methods", "io",
               "--no-plots", "--base-url", srv.url, "--model", "fake", "--out", str(out), "--jobs", "2"]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            results = out / "results.jsonl"
            if results.exists() and len(results.read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
        proc.kill()
        proc.wait()
        kept = [json.loads(x)["puzzle"] for x in (out / "results.jsonl").read_text().splitlines()]
        assert 3 <= len(kept) < 10
        before = len(srv.requests)
        assert subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=120).returncode == 0
        asked = [re.findall(r"Input: ([\d ]+)\n", r.body["prompt"])[-1].strip() for r in srv.requests[before:]
                 if r.body and "Input:" in str(r.body.get("prompt"))
                 and r.body.get("max_tokens") != 1]  # not a probe or a warm-up
    got = rows(out)  # fails on a pair written twice
    assert len(got) == 10 and all(r["status"] == "done" for r in got.values())
    assert sorted(asked) == sorted(r["puzzle"] for r in got.values() if r["puzzle"] not in kept)


def test_a_backend_given_from_python_is_refused_with_workers(tmp_path: Path) -> None:
    import asyncio

    from solver.tools import bench
    from solver.tools.cli import UsageError, build_parser
    from solver.tools.plugins import load_plugins
    from tests.fakes import ScriptedBackend

    plugins = load_plugins()
    args = build_parser(plugins).parse_args(["bench", "game24", "--range", "1-2", "--methods", "io", "--no-plots",
                                             "--out", str(tmp_path / "x"), "--jobs", "2"])
    with pytest.raises(UsageError, match="in this process only"):
        asyncio.run(bench.run_bench(args, plugins, backend=ScriptedBackend(lambda p, params, i: "1 + 1")))


@pytest.mark.parametrize("task_args", [["game24", "--limit", "25"],
                                       ["sudoku", "--size", "4", "--count", "6", "--val-count", "3"]])
def test_export_in_worker_processes_writes_the_same_files(tmp_path: Path, task_args: list[str]) -> None:
    task, rest = task_args[0], task_args[1:]
    assert main(["export", task, *rest, "--out", str(tmp_path / "one")]) == 0
    assert main(["export", task, *rest, "--out", str(tmp_path / "two"), "--jobs", "2"]) == 0
    files = sorted(p.name for p in (tmp_path / "one").glob("*.jsonl"))
    assert files and files == sorted(p.name for p in (tmp_path / "two").glob("*.jsonl"))
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name


def test_export_with_a_cut_walk_in_workers_still_writes_the_same_files(tmp_path: Path) -> None:
    # --max-states cuts every puzzle's own walk: those are walked again in order, with the split's seen states
    args = ["export", "game24", "--limit", "8", "--splits", "train", "--max-states", "30"]
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    assert main([*args, "--out", str(tmp_path / "two"), "--jobs", "2"]) == 0
    for p in (tmp_path / "one").glob("*.jsonl"):
        assert p.read_bytes() == (tmp_path / "two" / p.name).read_bytes(), p.name


# --- the planner comparison's runs, and planning's export, whose units call a planner -----------


def _llmp(tmp_path: Path) -> Path:
    from tests.test_export import DOMAIN, PROBLEMS, pddl_problem

    data = tmp_path / "llmp"
    (data / "blocksworld").mkdir(parents=True)
    (data / "blocksworld" / "domain.pddl").write_text(DOMAIN, encoding="utf-8")
    for i in PROBLEMS:
        (data / "blocksworld" / f"p{i:02d}.pddl").write_text(pddl_problem(i), encoding="utf-8")
    return data


def test_planner_runs_in_two_workers_give_one_process_s_verdicts_and_optimal_lengths(tmp_path: Path) -> None:
    from tests.test_export import PROBLEMS, atoms_of, shortest

    data = _llmp(tmp_path)
    script = ROOT / "benchmarks" / "planner_compare.py"
    base = [sys.executable, str(script), "--planners", "pyperplan", "--modes", "optimal", "--seconds", "20",
            "--domains", "blocksworld", "--range", f"1-{len(PROBLEMS)}", "--llmp-dir", str(data)]
    got = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}.jsonl"
        run = subprocess.run([*base, "--out", str(out), "--jobs", jobs], cwd=ROOT, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        rows_ = [json.loads(x) for x in out.read_text().splitlines()]
        assert sorted(r["problem"] for r in rows_) == sorted(PROBLEMS)  # each once
        got[jobs] = {r["problem"]: (r["status"], r["optimal"], r["length"]) for r in rows_}
        again = subprocess.run([*base, "--out", str(out), "--jobs", jobs], cwd=ROOT, capture_output=True, text=True,
                               timeout=300)
        assert "0 run(s) in" in again.stderr  # resumed: nothing left to do
        assert len(out.read_text().splitlines()) == len(PROBLEMS)
    assert got["1"] == got["2"]
    for i, (blocks, init, goal) in PROBLEMS.items():  # optimal lengths from a separately written search
        length = shortest(atoms_of("(arm-empty) " + init), atoms_of(goal), blocks.split())
        assert got["2"][i] == ("solved", True, length)


def test_planning_export_in_worker_processes_writes_the_same_files(tmp_path: Path) -> None:
    data = _llmp(tmp_path)
    args = ["export", "planning", "--llmp-dir", str(data), "--domains", "blocksworld", "--max-states", "40"]
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    assert main([*args, "--out", str(tmp_path / "two"), "--jobs", "2"]) == 0
    files = sorted(p.name for p in (tmp_path / "one").glob("*.jsonl"))
    assert files
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name


def test_workers_share_a_relative_cache_file_and_replay_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a relative --cache: the workers get it as an absolute path
    with FakeOpenAIServer(["ok"]) as srv:
        argv = ["bench", "game24", "--range", "1-6", "--methods", "io", "--no-plots", "--json", "--base-url", srv.url,
                "--model", "fake", "--cache", "store.sqlite"]
        assert main([*argv, "--out", "rec", "--jobs", "2"]) == 0
        asked = len(srv.requests)
        assert main([*argv, "--out", "rep", "--jobs", "2", "--cache-mode", "replay"]) == 0
        assert all(r.body is None or "Input:" not in str(r.body.get("prompt")) for r in srv.requests[asked:])
    rec, rep = rows(tmp_path / "rec"), rows(tmp_path / "rep")
    assert rec.keys() == rep.keys() and len(rep) == 6
    assert all(rep[k]["answer"] == rec[k]["answer"] and rep[k]["status"] == "done" for k in rec)


def test_planning_s_own_bench_refuses_workers_in_one_line(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    assert main(["bench", "planning", "--methods", "llmp", "--out", str(tmp_path / "p"), "--jobs", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "runs in this process only" in err[0]


def test_files_named_by_options_reach_workers_as_absolute_paths(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from solver.tools.executor import worker_options

    monkeypatch.chdir(tmp_path)
    (tmp_path / "store.sqlite").write_text("")
    (tmp_path / "io").write_text("")  # a file that happens to share a method's name is not a path option
    got = worker_options({"cache": "store.sqlite", "methods": "io", "data": "missing.csv", "trace": "t.jsonl",
                          "model": None}, leave_out=("trace",))
    assert got == {"cache": str(tmp_path / "store.sqlite"), "methods": "io", "data": "missing.csv", "model": None}


def unpicklable(x: int) -> object:
    return lambda: x  # a value that cannot travel back from a worker


def test_a_value_that_cannot_come_back_is_the_units_error_not_the_batchs() -> None:
    ex = LocalProcesses(2)
    try:
        outs = {o.unit.key: o for o in ex.run(unpicklable, [Unit("a", (1,))])}
        more = [o.value for o in ex.run(square, [Unit("b", (4,))])]
    finally:
        ex.close()
    assert outs["a"].value is None and outs["a"].error and "pickle" in outs["a"].error.lower()
    assert more == [16]


def test_a_planner_run_without_a_result_is_a_failed_row_that_a_rerun_tries_again(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "planner_compare.py"
    out = tmp_path / "runs.jsonl"
    base = [sys.executable, str(script), "--planners", "pyperplan", "--modes", "optimal", "--seconds", "10",
            "--domains", "blocksworld", "--range", "1-2", "--out", str(out), "--jobs", "2"]
    missing = subprocess.run([*base, "--llmp-dir", str(tmp_path / "nowhere")], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    rows_ = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["status"] for r in rows_] == ["failed", "failed"], missing.stderr
    assert all("no LLM+P data folder" in r["detail"] for r in rows_)
    assert "2 run(s) failed" in missing.stderr
    fixed = subprocess.run([*base, "--llmp-dir", str(_llmp(tmp_path))], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0, fixed.stderr
    rows_ = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["status"] for r in rows_[2:]] == ["solved", "solved"]  # only the failed ones ran again
    assert "| pyperplan | optimal | 10 s | blocksworld | 2 | 2 | 2 |" in fixed.stdout
