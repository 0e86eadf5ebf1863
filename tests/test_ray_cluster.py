"""A real Ray cluster on the loopback address: a head and worker nodes started with ``ray start``;
``tot export`` and a small ``tot bench`` sent to it with ``--ray``, and a worker node killed mid-run,
twice: with retries (the results must equal one process's, row for row, nothing written twice)
and without (the lost unit is an error row with the reason, and rerunning the command does only
that unit). The cluster is stopped at the end whatever happens (only its own processes: a cluster
the user runs on this machine is left alone).

Ray is an optional extra (``verified-tot[ray]``); CI installs it with the test extra, so there the
test runs (about 50 s, of which 2-3 s for each node to start); elsewhere it skips with one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from solver.tools.cli import main
from tests.fake_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")


def test_ci_has_ray() -> None:
    """CI installs the test extra, which includes Ray: the cluster test below runs there."""
    if not os.environ.get("CI"):
        pytest.skip("outside CI, Ray is optional (the cluster test skips with one line)")
    assert RAY is not None, "CI must install Ray (the test extra's ray)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process readable here."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        out[int(entry)] = (ppid, cmd)
    return out


def _with_descendants(roots: set[int]) -> set[int]:
    procs = _processes()
    found = set(roots)
    grew = True
    while grew:
        more = {p for p, (pp, _) in procs.items() if pp in found and p not in found}
        found |= more
        grew = bool(more)
    return found


def _kill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture
def cluster() -> Iterator[dict[str, Any]]:
    if RAY is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Ray (the test extra)")
        pytest.skip("Ray is not installed (pip install 'verified-tot[ray]')")
    temp = tempfile.mkdtemp(prefix="tot-ray-", dir="/tmp")  # short: Ray's socket paths must fit
    port = _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    try:
        subprocess.run([RAY, "start", "--head", "--port", str(port), "--temp-dir", temp, "--include-dashboard",
                        "false", *common], env=env, check=True, capture_output=True, timeout=120)

        def add_node() -> str:
            """A worker node of 1 CPU joins; the flag that finds its raylet among the processes."""
            node_port = _free_port()
            subprocess.run([RAY, "start", "--address", f"127.0.0.1:{port}", "--node-manager-port", str(node_port),
                            *common], env=env, check=True, capture_output=True, timeout=120)
            return f"--node_manager_port={node_port}"

        yield {"address": f"127.0.0.1:{port}", "add_node": add_node, "temp": temp, "env": env}
    finally:  # this cluster's processes only, and everything they started
        ours = _with_descendants({pid for pid, (_, cmd) in _processes().items() if temp in cmd})
        _kill(ours)
        deadline = time.monotonic() + 10
        while ours & set(_processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(temp, ignore_errors=True)


def _rows(d: Path) -> dict[tuple[str, str], dict]:
    """Each pair's last row (a rerun appends the pairs it tried again), without its seconds; a pair
    finished twice fails."""
    out: dict[tuple[str, str], dict] = {}
    for line in (d / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        key = (r["id"], r["method"])
        assert not (key in out and out[key]["status"] == "done"), f"{key} finished twice"
        out[key] = {k: v for k, v in r.items() if k != "seconds"}
    return out


def _bench_losing_the_node(cluster: dict[str, Any], argv: list[str], out: Path, retries: int) -> str:
    """``tot bench ARGV --ray`` with a worker node that joins first and is killed (SIGKILL, with
    everything it started) while one of its workers runs a unit (its process is titled
    ``ray::_call`` then; the units here take 0.4 s); the run's standard error."""
    flag = cluster["add_node"]()
    raylet = [pid for pid, (_, cmd) in _processes().items() if "raylet" in cmd and flag in cmd]
    assert len(raylet) == 1, "the new node's raylet is running"
    proc = subprocess.Popen([sys.executable, "-m", "solver.tools.cli", *argv, "--out", str(out), "--ray",
                             str(cluster["address"]), "--unit-retries", str(retries)], cwd=ROOT, env=cluster["env"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:  # until the node is busy with a unit
            procs = _processes()
            if any(procs[p][1].startswith("ray::_call") for p in _with_descendants(set(raylet)) if p in procs):
                break
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the new node never ran a unit"
            time.sleep(0.02)
        _kill(_with_descendants(set(raylet)))  # the node is lost, with the unit it was running
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    return stderr


def test_export_and_a_bench_on_a_two_node_cluster_equal_one_process_and_survive_a_lost_node(
        cluster: dict[str, Any], tmp_path: Path) -> None:
    env = cluster["env"]
    cluster["add_node"]()
    # the export's units, on both nodes: the same files as one process writes
    export = ["export", "game24", "--limit", "12", "--splits", "train", "--max-states", "200"]
    assert main([*export, "--out", str(tmp_path / "export-here")]) == 0
    run = subprocess.run([sys.executable, "-m", "solver.tools.cli", *export, "--out", str(tmp_path / "export-ray"),
                          "--ray", str(cluster["address"])], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "2 node(s)" in run.stderr
    names = sorted(p.name for p in (tmp_path / "export-here").glob("*.jsonl"))
    assert names == sorted(p.name for p in (tmp_path / "export-ray").glob("*.jsonl")) and names
    for name in names:
        assert (tmp_path / "export-here" / name).read_bytes() == (tmp_path / "export-ray" / name).read_bytes(), name

    # no node was told it may load the embedded model: a bench that needs it is refused before any unit is sent
    refused = subprocess.run([sys.executable, "-m", "solver.tools.cli", "bench", "game24", "--range", "1-2",
                              "--methods", "tot-bfs", "--no-plots", "--out", str(tmp_path / "embedded"), "--ray",
                              str(cluster["address"])], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    assert "no node of the cluster may" in refused.stderr and "tot_embedded_model" in refused.stderr
    written = tmp_path / "embedded" / "results.jsonl"
    assert not written.exists() or not written.read_text().strip()

    with FakeOpenAIServer(["slow"], delay=0.4) as srv:
        argv = ["bench", "game24", "--range", "1-16", "--methods", "io", "--no-plots", "--base-url", srv.url,
                "--model", "fake"]
        assert main([*argv, "--out", str(tmp_path / "here")]) == 0
        here = _rows(tmp_path / "here")
        assert len(here) == 16 and all(r["status"] == "done" for r in here.values())

        # retried: the lost node's unit runs again elsewhere, and the results equal one process's
        stderr = _bench_losing_the_node(cluster, argv, tmp_path / "retried", retries=3)
        assert "on ray at" in stderr and "3 node(s)" in stderr  # the head, the export's node, the one killed
        assert _rows(tmp_path / "retried") == here

        # not retried: the lost unit is an error row with the reason; the rerun does only what is missing
        stderr = _bench_losing_the_node(cluster, argv, tmp_path / "lost", retries=0)
        lost = {k: r for k, r in _rows(tmp_path / "lost").items() if r["status"] != "done"}
        assert lost and all("lost 1 times on the cluster" in r["error"] for r in lost.values()), lost
        assert "errored" in stderr
        before = len((tmp_path / "lost" / "results.jsonl").read_text().splitlines())
        rerun = subprocess.run([sys.executable, "-m", "solver.tools.cli", *argv, "--out", str(tmp_path / "lost"),
                                "--ray", str(cluster["address"])], cwd=ROOT, env=env, capture_output=True, text=True,
                               timeout=300)
        assert rerun.returncode == 0, rerun.stderr
        assert f"{len(lost)} pair(s) on ray" in rerun.stderr
        assert len((tmp_path / "lost" / "results.jsonl").read_text().splitlines()) == before + len(lost)
    assert _rows(tmp_path / "lost") == here
