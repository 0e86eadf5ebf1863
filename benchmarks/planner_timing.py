"""Time the planner on one LLM+P domain: each problem's status, plan length (checked by the
simulator), expanded states and seconds, then the totals.

    python benchmarks/planner_timing.py blocksworld --mode optimal --seconds 30 [--llmp-dir DIR]
"""

from __future__ import annotations

import argparse
import time

from tasks.planning.files import domain_file, llmp_dir, read_text
from verifiers.pddl_model import parse_problem
from verifiers.planner import plan
from verifiers.planning import simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("domain")
    ap.add_argument("--mode", choices=["optimal", "satisficing"], default="optimal")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--llmp-dir", default=None)
    a = ap.parse_args()
    folder = llmp_dir(a.llmp_dir) / a.domain
    dom = read_text(domain_file(folder), "domain")
    start, solved = time.monotonic(), 0
    for i in range(1, a.count + 1):
        prob = parse_problem(dom, read_text(folder / f"p{i:02d}.pddl", "problem"))
        found = plan(prob, time_limit=a.seconds, mode=a.mode)
        valid = simulate(prob, list(found.plan)).valid if found.plan is not None else None
        solved += bool(valid)
        length = len(found.plan) if found.plan is not None else "-"
        print(f"p{i:02d} {found.status:10} length {length!s:>3} valid {valid} "
              f"expanded {found.expanded} {found.seconds:.2f} s", flush=True)
    print(f"{a.domain} {a.mode} limit {a.seconds:g} s: {solved}/{a.count} solved, "
          f"{time.monotonic() - start:.1f} s in all")


if __name__ == "__main__":
    main()
