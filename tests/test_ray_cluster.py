"""A real Ray cluster on the loopback address: a head and a second worker node started with
``ray start``, a small benchmark sent to it with ``tot bench --ray``, the worker node killed
mid-run. The results must equal one process's, row for row, with nothing lost and nothing
written twice; the cluster is stopped at the end whatever happens (only its own processes: a
cluster the user runs on this machine is left alone).

Ray is an optional extra (``verified-tot[ray]``); CI installs it with the test extra, so there the
test runs (about 20 s: 5 s to start the two nodes); elsewhere it skips with one line."""

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
def cluster() -> Iterator[dict[str, object]]:
    if RAY is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Ray (the test extra)")
        pytest.skip("Ray is not installed (pip install 'verified-tot[ray]')")
    temp = tempfile.mkdtemp(prefix="tot-ray-", dir="/tmp")  # short: Ray's socket paths must fit
    port, worker_port = _free_port(), _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    try:
        subprocess.run([RAY, "start", "--head", "--port", str(port), "--temp-dir", temp, "--include-dashboard",
                        "false", *common], env=env, check=True, capture_output=True, timeout=120)
        subprocess.run([RAY, "start", "--address", f"127.0.0.1:{port}", "--node-manager-port", str(worker_port),
                        *common], env=env, check=True, capture_output=True, timeout=120)
        yield {"address": f"127.0.0.1:{port}", "worker_flag": f"--node_manager_port={worker_port}", "temp": temp,
               "env": env}
    finally:  # this cluster's processes only, and everything they started
        ours = _with_descendants({pid for pid, (_, cmd) in _processes().items() if temp in cmd})
        _kill(ours)
        deadline = time.monotonic() + 10
        while ours & set(_processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(temp, ignore_errors=True)


def _rows(d: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for line in (d / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        assert (r["id"], r["method"]) not in out, f"{r['id']} {r['method']} written twice"
        out[(r["id"], r["method"])] = {k: v for k, v in r.items() if k != "seconds"}
    return out


def test_a_bench_on_a_two_node_cluster_survives_a_lost_node_and_equals_one_process(
        cluster: dict[str, object], tmp_path: Path) -> None:
    with FakeOpenAIServer(["slow"], delay=0.4) as srv:
        argv = ["bench", "game24", "--range", "1-12", "--methods", "io,tot-complete:enumerate:oracle", "--no-plots",
                "--base-url", srv.url, "--model", "fake"]
        assert main([*argv, "--out", str(tmp_path / "here")]) == 0
        out = tmp_path / "ray"
        env = cluster["env"]
        assert isinstance(env, dict)
        proc = subprocess.Popen([sys.executable, "-m", "solver.tools.cli", *argv, "--out", str(out), "--ray",
                                 str(cluster["address"]), "--unit-retries", "3"], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # a few io rows written: the worker node is busy with another
                results = out / "results.jsonl"
                text = results.read_text() if results.exists() else ""
                done = [x for x in text.splitlines() if '"method": "io"' in x]
                if len(done) >= 3:
                    break
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.05)
            raylet = [pid for pid, (_, cmd) in _processes().items()
                      if "raylet" in cmd and str(cluster["worker_flag"]) in cmd]
            assert len(raylet) == 1, "the worker node's raylet is running"
            _kill(_with_descendants(set(raylet)))  # the node is lost, with the unit it was running
            stdout, stderr = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, stderr
    assert "on ray at" in stderr and "2 node(s)" in stderr
    here, there = _rows(tmp_path / "here"), _rows(out)  # fails on a row written twice
    assert len(here) == 24 and all(r["status"] == "done" for r in there.values())
    assert here == there
