"""One planner run on one LLM+P problem, in a child process of its own: the unit of the planner
comparison (``benchmarks/planner_compare.py``, its only user, which imports this sibling script),
wherever an executor runs it (this machine's processes or a Ray cluster's nodes: a node runs this
file by its path, so it needs this checkout at the same place).

    python benchmarks/planner_runs.py PLANNER MODE DOMAIN N --seconds S [--memory-mb M] [--llmp-dir DIR]

prints the run's row (one JSON line). The child is what keeps each run's peak memory its own and
``--memory-mb`` (``RLIMIT_AS``) on that run alone, whatever process or node asked for it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

Mode = Literal["optimal", "satisficing"]

__all__ = ["limit_memory", "run_problem"]


def limit_memory(mb: int | None) -> None:
    """Cap this process's address space (and its children's) at ``mb`` megabytes; None: no cap."""
    if mb is not None:
        resource.setrlimit(resource.RLIMIT_AS, (mb * 1024 * 1024, mb * 1024 * 1024))


def run_problem(planner: str, mode: Mode, domain: str, problem: int, seconds: float, memory_mb: int | None = None,
                llmp_dir: str | None = None) -> dict[str, Any]:
    """The row of one run, from a child process. A child that ends without one (killed, a data
    folder missing on this node, out of memory outside the planner) is no result: RuntimeError
    with the reason, which the executor records as the unit's failure and a rerun tries again."""
    cmd = [sys.executable, str(Path(__file__).resolve()), planner, mode, domain, str(problem),
           "--seconds", str(seconds)]
    if memory_mb is not None:
        cmd += ["--memory-mb", str(memory_mb)]
    if llmp_dir:
        cmd += ["--llmp-dir", llmp_dir]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 3 + 120, check=False)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            row: dict[str, Any] = json.loads(line)
            return row
    err = (proc.stderr.strip().splitlines() or [""])[-1][:200]
    raise RuntimeError(f"the run's process ended with code {proc.returncode} after "
                       f"{time.monotonic() - start:.1f} s and no result: {err}")


def _run_here(planner: str, mode: Mode, domain: str, problem: int, seconds: float, memory_mb: int | None,
              llmp_dir: str | None) -> dict[str, Any]:
    from tasks.planning.files import domain_file, read_text
    from tasks.planning.files import llmp_dir as find_llmp
    from verifiers.pddl_model import parse_problem
    from verifiers.planner import PlanSearch, plan

    limit_memory(memory_mb)
    folder = find_llmp(llmp_dir) / domain
    dom = read_text(domain_file(folder), "domain")
    prob = parse_problem(dom, read_text(folder / f"p{problem:02d}.pddl", "problem"))
    start = time.monotonic()
    try:
        found = plan(prob, time_limit=seconds, mode=mode, planner=planner)
    except MemoryError:  # an in-process planner (pyperplan, pymimir) past --memory-mb
        found = PlanSearch(status="unknown", plan=None, expanded=0, seconds=time.monotonic() - start,
                           mode=mode, planner=planner, detail=f"out of memory (--memory-mb {memory_mb})")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"planner": planner, "mode": mode, "limit": seconds, "domain": domain, "problem": problem,
            "status": found.status, "optimal": found.optimal,
            "length": len(found.plan) if found.plan is not None else None,
            "cost": found.cost,  # the plan's total cost where the problem minimises costs
            "seconds": round(found.seconds, 3), "expanded": found.expanded, "detail": found.detail,
            "peak_kb_so_far": max(own, kids), "planner_peak_kb": found.peak_kb, "memory_limit_mb": memory_mb}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("planner")
    ap.add_argument("mode", choices=("optimal", "satisficing"))
    ap.add_argument("domain")
    ap.add_argument("problem", type=int)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--memory-mb", type=int, default=None)
    ap.add_argument("--llmp-dir", default=None)
    a = ap.parse_args()
    row = _run_here(a.planner, a.mode, a.domain, a.problem, a.seconds, a.memory_mb, a.llmp_dir)
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
