"""Planner backends side by side on the LLM+P ground-truth problems: solved, proved optimal,
seconds (median and max over the solved ones) and peak memory, per domain and mode. Every plan
is validated by the project's simulator (``verifiers.planner.plan`` does it). Each run (backend,
mode, problem) is one unit of the project's executor and runs in a child process of its own
(``benchmarks/planner_runs.py``), so that its peak memory and its ``--memory-mb`` are its own.

    python benchmarks/planner_compare.py --planners fast-downward,pyperplan --modes optimal,satisficing \\
        --seconds 30 --out results.jsonl [--domains blocksworld,grippers] [--range 1-20] [--llmp-dir DIR]
        [--jobs N | --ray auto|ADDRESS] [--unit-retries R]

Rows are appended to --out as runs finish; rows already there (same planner, mode, limit,
problem) are skipped, so a cut run resumes. ``--jobs N`` runs N problems at once on this machine,
for a machine with N cores to spare (each planner run is single-threaded; run more jobs than free
cores and the limits measure the sharing, not the planner); ``--ray`` sends them to a Ray cluster,
one CPU each. A run whose worker dies is tried again (``--unit-retries``), then written with status
``failed`` and the reason, and a rerun tries it again. ``--memory-mb M`` caps each run's address
space (``RLIMIT_AS``, inherited by the planner it starts): a search that runs out of it is a row
with status "unknown" and the limit in its detail, and the other runs go on.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from solver.tools.executor import Unit, add_executor_args, executor_from
from tasks.planning.files import LLMP_DOMAINS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import planner_runs  # noqa: E402 - the sibling script: one run in a child process of its own
from planner_runs import limit_memory, run_problem  # noqa: E402

__all__ = ["add_problem_options", "limit_memory", "table"]

FAILED = "failed"  # a run whose worker died more often than retried: not a result, a rerun tries it again


def table(rows: list[dict]) -> str:
    latest = {(r["planner"], r["mode"], r["limit"], r["domain"], r["problem"]): r for r in rows}  # a rerun's last
    rows = [r for r in latest.values() if r["status"] != FAILED]
    keys = sorted({(r["planner"], r["mode"], r["limit"]) for r in rows})
    out = ["| planner | mode | limit | domain | n | solved | proved optimal | s median | s max | peak MB |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for planner, mode, limit in keys:
        mine = [r for r in rows if (r["planner"], r["mode"], r["limit"]) == (planner, mode, limit)]
        for d in [*sorted({r["domain"] for r in mine}), "all"]:
            rs = [r for r in mine if d in ("all", r["domain"])]
            solved = [r for r in rs if r["status"] == "solved"]
            secs = [r["seconds"] for r in solved]
            med = f"{statistics.median(secs):.2f}" if secs else "-"
            mx = f"{max(secs):.2f}" if secs else "-"
            # Fast Downward: its own processes' peak (its log, or /proc when killed at the limit);
            # pyperplan and pymimir: the run's process's peak (the Python process with the planner in it;
            # rows written before the executor: the peak of the process that ran the domain so far).
            kb = [r.get("planner_peak_kb") if planner == "fast-downward" else r["peak_kb_so_far"] for r in rs]
            known = [k for k in kb if k]
            peak = f"{max(known) / 1024:.0f}" + ("" if len(known) == len(kb) else f" ({len(known)} of {len(kb)})") \
                if known else "not recorded"
            out.append(f"| {planner} | {mode} | {limit:g} s | {d} | {len(rs)} | {len(solved)} | "
                       f"{sum(bool(r['optimal']) for r in rs)} | {med} | {mx} | {peak} |")
    return "\n".join(out)


def add_problem_options(ap: argparse.ArgumentParser, modes: str) -> None:
    """The options that choose the runs, shared with ``lapkt_compare.py``."""
    ap.add_argument("--modes", default=modes)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--domains", default=",".join(LLMP_DOMAINS))
    ap.add_argument("--range", default="1-20")
    ap.add_argument("--memory-mb", type=int, default=None,
                    help="address-space limit of each planner process, in MB (default: none)")
    ap.add_argument("--llmp-dir", default=None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--planners", default="fast-downward,pyperplan")
    add_problem_options(ap, "optimal,satisficing")
    ap.add_argument("--out", default=None, help="JSON lines of every problem's result (resumable)")
    ap.add_argument("--table-only", action="store_true", help="print the table of --out and stop")
    add_executor_args(ap)
    a = ap.parse_args()
    out = Path(a.out) if a.out else None
    rows = []
    if out is not None and out.is_file():
        rows = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    if not a.table_only:
        done = {(r["planner"], r["mode"], r["limit"], r["domain"], r["problem"]) for r in rows
                if r.get("status") != FAILED}
        lo, hi = (int(x) for x in a.range.split("-"))
        units = [Unit(f"{p} {m} {d} p{i:02d}", (p, m, d, i, a.seconds, a.memory_mb, a.llmp_dir), cpus=1)
                 for p in a.planners.split(",") for m in a.modes.split(",") for d in a.domains.split(",")
                 for i in range(lo, hi + 1) if (p, m, a.seconds, d, i) not in done]
        try:
            executor = executor_from(a)
        except ValueError as exc:
            sys.exit(f"planner_compare: {exc}")
        if a.ray:  # Ray's workers cannot import a script of benchmarks/: its functions travel by value
            import ray.cloudpickle

            ray.cloudpickle.register_pickle_by_value(planner_runs)
        start = time.monotonic()
        print(f"{len(units)} run(s) on {executor.name}", file=sys.stderr, flush=True)
        try:
            for outcome in executor.run(run_problem, units):
                planner, mode, d, i, seconds, memory_mb, _ = outcome.unit.args
                r = outcome.value if outcome.error is None else {
                    "planner": planner, "mode": mode, "limit": seconds, "domain": d, "problem": i, "status": FAILED,
                    "optimal": False, "length": None, "cost": None, "seconds": None, "expanded": 0,
                    "detail": outcome.error, "attempts": outcome.attempts, "memory_limit_mb": memory_mb}
                rows.append(r)
                print(f"{planner} {mode} {d} p{i:02d} {r['status']} len {r['length']} {r['seconds']} s", flush=True)
                if out is not None:
                    with out.open("a") as fh:
                        fh.write(json.dumps(r) + "\n")
        finally:
            executor.close()
        print(f"{len(units)} run(s) in {time.monotonic() - start:.1f} s on {executor.name}", file=sys.stderr)
        lost = sum(1 for r in rows[-len(units):] if r["status"] == FAILED) if units else 0
        if lost:
            print(f"{lost} run(s) failed (their worker died more often than retried); rerun the same command "
                  "to try only those", file=sys.stderr)
    print(table(rows))


if __name__ == "__main__":
    main()
