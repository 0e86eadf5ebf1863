"""Planner backends side by side on the LLM+P ground-truth problems: solved, proved optimal,
seconds (median and max over the solved ones) and peak memory, per domain and mode. Every plan
is validated by the project's simulator (``verifiers.planner.plan`` does it). Each (backend,
mode, domain) runs in its own child process so that its peak memory is its own.

    python benchmarks/planner_compare.py --planners fast-downward,pyperplan --modes optimal,satisficing \\
        --seconds 30 --out results.jsonl [--domains blocksworld,grippers] [--range 1-20] [--llmp-dir DIR]

Rows already in --out (same planner, mode, limit, problem) are skipped, so a cut run resumes.
``--jobs N`` runs N (backend, mode, domain) workers at once, for a machine with N cores to spare
(each planner call is single-threaded; run more jobs than free cores and the limits measure the
sharing, not the planner). ``--memory-mb M`` caps each worker's address space, and so each
planner process it starts (``RLIMIT_AS``, inherited): a search that runs out of it is a row with
status "unknown" and the limit in its detail, and the machine's other jobs go on.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tasks.planning.files import LLMP_DOMAINS, domain_file, llmp_dir, read_text
from verifiers.pddl_model import parse_problem
from verifiers.planner import PlanSearch, plan


def limit_memory(mb: int | None) -> None:
    """Cap this process's address space (and its children's) at ``mb`` megabytes; None: no cap."""
    if mb is not None:
        resource.setrlimit(resource.RLIMIT_AS, (mb * 1024 * 1024, mb * 1024 * 1024))


def worker(a: argparse.Namespace) -> None:
    limit_memory(a.memory_mb)
    folder = llmp_dir(a.llmp_dir) / a.domain
    dom = read_text(domain_file(folder), "domain")
    lo, hi = (int(x) for x in a.range.split("-"))
    skip = set(a.skip.split(",")) if a.skip else set()
    for i in range(lo, hi + 1):
        if str(i) in skip:
            continue
        prob = parse_problem(dom, read_text(folder / f"p{i:02d}.pddl", "problem"))
        start = time.monotonic()
        try:
            found = plan(prob, time_limit=a.seconds, mode=a.mode, planner=a.planner)
        except MemoryError:  # an in-process planner (pyperplan, pymimir) past --memory-mb
            found = PlanSearch(status="unknown", plan=None, expanded=0, seconds=time.monotonic() - start,
                               mode=a.mode, planner=a.planner, detail=f"out of memory (--memory-mb {a.memory_mb})")
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(json.dumps({"planner": a.planner, "mode": a.mode, "limit": a.seconds, "domain": a.domain,
                          "problem": i, "status": found.status, "optimal": found.optimal,
                          "length": len(found.plan) if found.plan is not None else None,
                          "cost": found.cost,  # the plan's total cost where the problem minimises costs
                          "seconds": round(found.seconds, 3), "expanded": found.expanded,
                          "detail": found.detail, "peak_kb_so_far": max(own, kids),
                          "planner_peak_kb": found.peak_kb, "memory_limit_mb": a.memory_mb}), flush=True)


def table(rows: list[dict]) -> str:
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
            # pyperplan and pymimir: the worker process's peak (the Python process with the planner in it).
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
    ap.add_argument("--jobs", type=int, default=1, help="(backend, mode, domain) workers run at once (default 1)")
    ap.add_argument("--worker", nargs=3, metavar=("PLANNER", "MODE", "DOMAIN"), help=argparse.SUPPRESS)
    ap.add_argument("--skip", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.planner, a.mode, a.domain = a.worker
        worker(a)
        return
    out = Path(a.out) if a.out else None
    rows = []
    if out is not None and out.is_file():
        rows = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    if not a.table_only:
        lock = threading.Lock()

        def run_worker(planner: str, mode: str, d: str, done: set[int]) -> None:
            cmd = [sys.executable, __file__, "--worker", planner, mode, d, "--seconds", str(a.seconds),
                   "--range", a.range, "--skip", ",".join(map(str, sorted(done)))]
            if a.memory_mb is not None:
                cmd += ["--memory-mb", str(a.memory_mb)]
            if a.llmp_dir:
                cmd += ["--llmp-dir", a.llmp_dir]
            with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
                assert proc.stdout is not None
                for line in proc.stdout:
                    r = json.loads(line)
                    with lock:  # one row at a time into the list, the screen and --out
                        rows.append(r)
                        print(f"{planner} {mode} {d} p{r['problem']:02d} {r['status']} len {r['length']} "
                              f"{r['seconds']} s", flush=True)
                        if out is not None:
                            with out.open("a") as fh:
                                fh.write(line)

        def done_in(planner: str, mode: str, d: str) -> set[int]:
            return {r["problem"] for r in rows if (r["planner"], r["mode"], r["limit"], r["domain"])
                    == (planner, mode, a.seconds, d)}

        # what each worker skips, read before any runs (the workers append to ``rows``)
        work = [(p, m, d, done_in(p, m, d))
                for p in a.planners.split(",") for m in a.modes.split(",") for d in a.domains.split(",")]
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            for fut in [pool.submit(run_worker, *w) for w in work]:
                fut.result()
    print(table(rows))


if __name__ == "__main__":
    main()
