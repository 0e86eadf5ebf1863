"""The executor on a real Ray cluster of this machine (loopback nodes started with ``ray start``),
against the local executor, in one run (docs/cluster.md has the figures):

- ``planner``: the planner comparison (``planner_compare.py``: Fast Downward, optimal, ``--seconds``
  a problem, all LLM+P problems) with 1 Ray worker (a head node of 1 CPU) and then 2 (a second node
  of 1 CPU joins): wall time of each and the verdicts and plan lengths of both, problem by problem;
- ``oracle``: Game of 24 901-1000 with the exact oracle (``tot-complete:enumerate:oracle`` and
  ``tot-bfs:enumerate:oracle``) on the 2-node cluster and with the local executor: the results files
  compared row for row (all fields but ``seconds``);
- ``overhead``: 100 units on a 1-CPU cluster against the local executor in this process, wall time
  of the whole command (connecting to the cluster included): tiny units (Game of 24 ranks 1-100 by
  the exact oracle, milliseconds each) and small ones (the ``io`` baseline against a fake endpoint
  that answers after 0.2 s).

    python benchmarks/ray_cluster.py --parts planner,oracle,overhead --seconds 30 --out ray_cluster.json

Needs Ray (``pip install 'verified-tot[ray]'``) and, for ``planner``, the LLM+P data (``--llmp-dir``
or ``../shared/data/llmp``) and Fast Downward (the ``planners`` extra). Only the processes of the
cluster it starts are stopped at the end (a cluster of yours on this machine is left alone).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray") or "ray"


class LocalCluster:
    """Ray nodes on 127.0.0.1 under a temporary directory of their own; ``stop`` kills exactly them."""

    def __init__(self) -> None:
        self.temp = tempfile.mkdtemp(prefix="tot-ray-", dir="/tmp")
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        self.env.pop("RAY_ADDRESS", None)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.address = f"127.0.0.1:{self.port}"

    def _start(self, *args: str) -> float:
        t = time.monotonic()
        subprocess.run([RAY, "start", "--node-ip-address", "127.0.0.1", "--disable-usage-stats", *args],
                       env=self.env, check=True, capture_output=True, timeout=180)
        return time.monotonic() - t

    def head(self, cpus: int) -> float:
        return self._start("--head", "--port", str(self.port), "--temp-dir", self.temp, "--include-dashboard", "false",
                           "--num-cpus", str(cpus))

    def add_node(self, cpus: int) -> float:
        return self._start("--address", self.address, "--num-cpus", str(cpus))

    def stop(self) -> None:
        procs: dict[int, tuple[int, str]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                except OSError:
                    continue
                procs[int(entry)] = (ppid, cmd)
        ours = {p for p, (_, c) in procs.items() if self.temp in c}
        while True:
            more = {p for p, (pp, _) in procs.items() if pp in ours and p not in ours}
            if not more:
                break
            ours |= more
        for p in ours:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(1)
        shutil.rmtree(self.temp, ignore_errors=True)


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return time.monotonic() - t, proc


def bench_rows(d: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for line in (d / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if (r["id"], r["method"]) in out:
            raise SystemExit(f"{d}: {r['id']} {r['method']} written twice")
        out[(r["id"], r["method"])] = {k: v for k, v in r.items() if k != "seconds"}
    return out


def planner_part(a: argparse.Namespace, work: Path) -> dict[str, Any]:
    cluster = LocalCluster()
    base = [sys.executable, str(ROOT / "benchmarks" / "planner_compare.py"), "--planners", "fast-downward",
            "--modes", "optimal", "--seconds", str(a.seconds), "--range", a.range]
    if a.llmp_dir:
        base += ["--llmp-dir", a.llmp_dir]
    if a.domains:
        base += ["--domains", a.domains]
    out: dict[str, Any] = {}
    one, two = work / "planner-1-worker.jsonl", work / "planner-2-workers.jsonl"
    try:
        out["head_start_s"] = round(cluster.head(1), 1)
        if "1" in a.arms:
            secs, _ = timed([*base, "--out", str(one), "--ray", cluster.address], cluster.env)
            out["one_worker_s"] = round(secs, 1)
            print(f"planner: 1 worker {secs:.1f} s", flush=True)
        if "2" in a.arms:
            out["node_start_s"] = round(cluster.add_node(1), 1)
            secs, _ = timed([*base, "--out", str(two), "--ray", cluster.address], cluster.env)
            out["two_workers_s"] = round(secs, 1)
            print(f"planner: 2 workers {secs:.1f} s", flush=True)
    finally:
        cluster.stop()
    if a.arms != "1,2":
        return out  # one arm: compare with the other's file yourself (--work holds both)
    rows1 = {(r["domain"], r["problem"]): r for r in map(json.loads, one.read_text().splitlines())}
    rows2 = {(r["domain"], r["problem"]): r for r in map(json.loads, two.read_text().splitlines())}
    differ = sorted(f"{d} p{i:02d}: {rows1[(d, i)]['status']}/{rows1[(d, i)]['length']} vs "
                    f"{rows2[(d, i)]['status']}/{rows2[(d, i)]['length']}"
                    for d, i in rows1 if (rows1[(d, i)]["status"], rows1[(d, i)]["optimal"], rows1[(d, i)]["length"])
                    != (rows2[(d, i)]["status"], rows2[(d, i)]["optimal"], rows2[(d, i)]["length"]))
    out.update(problems=len(rows1), same_keys=rows1.keys() == rows2.keys(),
               solved=[sum(r["status"] == "solved" for r in rows.values()) for rows in (rows1, rows2)],
               proved=[sum(bool(r["optimal"]) for r in rows.values()) for rows in (rows1, rows2)],
               differ=differ, speedup=round(out["one_worker_s"] / out["two_workers_s"], 2))
    return out


def oracle_part(a: argparse.Namespace, work: Path) -> dict[str, Any]:
    cluster = LocalCluster()
    base = [sys.executable, "-m", "solver.tools.cli", "bench", "game24", "--range", "901-1000", "--methods",
            "tot-complete:enumerate:oracle,tot-bfs:enumerate:oracle", "--no-plots", "--json"]
    out: dict[str, Any] = {}
    try:
        cluster.head(1)
        cluster.add_node(1)
        secs, _ = timed([*base, "--out", str(work / "oracle-ray"), "--ray", cluster.address], cluster.env)
        out["ray_2_nodes_s"] = round(secs, 1)
    finally:
        cluster.stop()
    secs, _ = timed([*base, "--out", str(work / "oracle-local")], dict(os.environ))
    out["local_s"] = round(secs, 1)
    ray_rows, local_rows = bench_rows(work / "oracle-ray"), bench_rows(work / "oracle-local")
    out.update(rows=len(local_rows), identical=ray_rows == local_rows,
               verified=sum(bool(r["verified"]) for r in ray_rows.values()))
    return out


def overhead_part(a: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Two kinds of 100 units: tiny (Game of 24 ranks 1-100 by the exact oracle, milliseconds each)
    and small (the ``io`` baseline on ranks 1-100 against a local fake endpoint answering after
    0.2 s: a unit that waits on a model, as most do)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fake_openai_server import FakeOpenAIServer  # noqa: PLC0415 - a sibling script

    cluster = LocalCluster()
    kinds = {"tiny": ["--methods", "tot-complete:enumerate:oracle"],
             "small": ["--methods", "io", "--model", "fake"]}
    out: dict[str, Any] = {}
    with FakeOpenAIServer(delay=0.2, max_seconds=3600) as srv:
        kinds["small"] += ["--base-url", srv.base_url]
        try:
            cluster.head(1)
            for kind, extra in kinds.items():
                base = [sys.executable, "-m", "solver.tools.cli", "bench", "game24", "--range", "1-100", *extra,
                        "--no-plots", "--json"]
                res: dict[str, Any] = {"local_s": [], "ray_s": []}
                for rep in range(a.repeats):  # alternated, so a slow moment of the machine hits both
                    secs, _ = timed([*base, "--out", str(work / f"overhead-{kind}-local-{rep}")], dict(os.environ))
                    res["local_s"].append(round(secs, 2))
                    secs, _ = timed([*base, "--out", str(work / f"overhead-{kind}-ray-{rep}"), "--ray",
                                     cluster.address], cluster.env)
                    res["ray_s"].append(round(secs, 2))
                lo, ra = sorted(res["local_s"])[a.repeats // 2], sorted(res["ray_s"])[a.repeats // 2]
                res.update(local_median_s=lo, ray_median_s=ra, overhead=round(ra / lo - 1, 3),
                           identical=bench_rows(work / f"overhead-{kind}-local-0")
                           == bench_rows(work / f"overhead-{kind}-ray-0"))
                out[kind] = res
                print(f"overhead {kind}: {json.dumps(res)}", flush=True)
        finally:
            cluster.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--parts", default="planner,oracle,overhead")
    ap.add_argument("--seconds", type=float, default=30.0, help="the planner's limit a problem (default 30)")
    ap.add_argument("--range", default="1-20", help="problems of each domain (default 1-20)")
    ap.add_argument("--domains", default=None, help="default: all seven LLM+P domains")
    ap.add_argument("--llmp-dir", default=None)
    ap.add_argument("--repeats", type=int, default=3, help="runs of each side of the overhead part")
    ap.add_argument("--arms", default="1,2", help="planner part: 1 worker, 2 workers or both (default)")
    ap.add_argument("--work", default=None, help="where the runs' files go (default: a new temporary folder)")
    ap.add_argument("--out", default="ray_cluster.json")
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix="ray-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                                         f"{platform.python_version()}", "work": str(work),
                              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    parts = {"planner": planner_part, "oracle": oracle_part, "overhead": overhead_part}
    for name in a.parts.split(","):
        result[name] = parts[name](a, work)
        print(name, json.dumps(result[name]), flush=True)
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
