"""``tot bench planning`` against Fast Downward alone, side by side in one run (issue: planning at
planner speed). For each LLM+P domain in turn: Fast Downward's own driver on the ground-truth PDDL
files (the wheel's ``fast-downward.py``, the same search as the project's backend, killed at the
same wall-clock limit), problem by problem; then ``tot bench planning --methods planner`` on the
same domain (one process: reads the files, rewrites the PDDL for the backend, runs the planner,
validates the plan twice, writes its rows). Prints per domain: solved by each, the problems where
they differ, whether every plan's value agrees (its total cost where the problem minimises action
costs, as floortile does, else its length: Fast Downward's plan file says "; cost = N"), and the
wall-clock seconds of each and their ratio.

    python benchmarks/planner_overhead.py --mode optimal --seconds 30 --out /tmp/overhead [--llmp-dir DIR]

Finished domains (their JSON line in OUT/side_by_side.jsonl) are skipped, so a cut run resumes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tasks.planning.files import LLMP_DOMAINS, domain_file, llmp_dir
from verifiers.planner_fd import CONFIGS, driver


def fd_alone(domain: Path, problem: Path, seconds: float, mode: str) -> tuple[int | None, float]:
    """(plan cost or None, wall seconds) of Fast Downward's driver on the files themselves: the cost
    its plan file states (the number of actions where the problem has no action costs)."""
    script = driver()
    if script is None:
        sys.exit("Fast Downward is not installed: pip install 'verified-tot[planners]'")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fd-alone-") as tmp:
        plan_file = Path(tmp) / "plan"
        cmd = [sys.executable, str(script), "--plan-file", str(plan_file),
               "--overall-time-limit", f"{max(1, math.ceil(seconds))}s", *CONFIGS[mode][0],  # type: ignore[index]
               str(domain), str(problem), *CONFIGS[mode][1]]  # type: ignore[index]
        proc = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            code = proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None, time.monotonic() - start
        cost = None
        if code == 0 and plan_file.is_file():
            text = plan_file.read_text()
            cost = int(text.split("; cost = ")[1].split()[0]) if "; cost = " in text else \
                sum(1 for line in text.splitlines() if line.strip().startswith("("))
        return cost, time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["optimal", "satisficing"], default="optimal")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--domains", default=",".join(LLMP_DOMAINS))
    ap.add_argument("--range", default="1-20")
    ap.add_argument("--llmp-dir", default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "side_by_side.jsonl"
    rows = [json.loads(x) for x in store.read_text().splitlines() if x.strip()] if store.is_file() else []
    done = {r["domain"] for r in rows}
    root = llmp_dir(a.llmp_dir)
    lo, hi = (int(x) for x in a.range.split("-"))
    for d in a.domains.split(","):
        if d in done:
            continue
        folder = root / d
        fd: dict[int, int | None] = {}
        fd_seconds = 0.0
        for i in range(lo, hi + 1):
            prob = folder / f"p{i:02d}.pddl"
            if prob.is_file():
                fd[i], s = fd_alone(domain_file(folder), prob, a.seconds, a.mode)
                fd_seconds += s
                print(f"{d} p{i:02d} fast-downward alone: {fd[i]} in {s:.1f} s", flush=True)
        bench_out = out / d
        cmd = ["tot", "bench", "planning", "--llmp-dir", str(root), "--domains", d, "--range", a.range,
               "--methods", "planner", "--planner", "fast-downward", "--planner-mode", a.mode,
               "--planner-seconds", str(a.seconds), "--optimal-seconds", str(a.seconds), "--out", str(bench_out)]
        start = time.monotonic()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        bench_seconds = time.monotonic() - start
        bench = {}
        for line in (bench_out / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            value = r["plan_cost"] if r.get("plan_cost") is not None else r["plan_length"]
            bench[r["problem"]] = value if r["solved"] else None
        row = {"domain": d, "mode": a.mode, "limit": a.seconds, "n": len(fd),
               "fd_solved": sum(v is not None for v in fd.values()),
               "bench_solved": sum(v is not None for v in bench.values()),
               "differ": sorted(i for i in fd if fd[i] != bench.get(i)),
               "fd_values": fd, "bench_values": bench,
               "fd_seconds": round(fd_seconds, 1), "bench_seconds": round(bench_seconds, 1)}
        with store.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        rows.append(row)
        print(f"{d}: fast-downward alone {row['fd_solved']}/{row['n']} in {row['fd_seconds']} s; "
              f"tot bench planning {row['bench_solved']}/{row['n']} in {row['bench_seconds']} s; "
              f"differ on {row['differ'] or 'none'}", flush=True)
    print("| domain | n | FD alone solved | bench solved | same plan costs | FD alone s | bench s | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    total = {"domain": "all", "n": sum(x["n"] for x in rows), "fd_solved": sum(x["fd_solved"] for x in rows),
             "bench_solved": sum(x["bench_solved"] for x in rows),
             "differ": [i for x in rows for i in x["differ"]],
             "fd_seconds": round(sum(x["fd_seconds"] for x in rows), 1),
             "bench_seconds": round(sum(x["bench_seconds"] for x in rows), 1)}
    for r in [*rows, total]:
        same = "yes" if not r["differ"] else f"no: {len(r['differ'])} differ"
        ratio = r["bench_seconds"] / r["fd_seconds"] if r["fd_seconds"] else float("nan")
        print(f"| {r['domain']} | {r['n']} | {r['fd_solved']} | {r['bench_solved']} | {same} | "
              f"{r['fd_seconds']} | {r['bench_seconds']} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
