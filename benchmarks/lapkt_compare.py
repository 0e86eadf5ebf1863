"""LAPKT on the LLM+P ground-truth problems, in the rows of ``planner_compare.py``: solved, proved
optimal, seconds, peak memory. LAPKT is measured, not a backend: its wheel exists for Linux
x86-64 (glibc 2.35) and Windows only, and its default grounder (tarski) needs clingo's ``gringo``.
It runs from its own interpreter (``--lapkt-python``, a virtual environment with ``pip install
lapkt==0.2.1 clingo``), one child process a problem, on the PDDL that ``verifiers/pddl_write.py``
writes for the compiled backends (no action costs: LAPKT's searches count actions). Every plan
is read with the project's plan grammar and replayed by its simulator; a plan that fails is a
row with status ``invalid``, never "solved".

    python benchmarks/lapkt_compare.py --lapkt-python /path/venv/bin/python --modes satisficing,optimal \\
        --seconds 30 --out lapkt.jsonl [--domains blocksworld] [--range 1-20] [--llmp-dir DIR]

Modes: satisficing is BFWS (``DUAL-BFWS``, LAPKT's default); optimal is its breadth-first search
(``BRFS_Planner``, blind: shortest plans in actions), where a plan counts as proved optimal only
when a breadth-first search finishes with it. ``--memory-mb M`` caps each LAPKT process's address
space (its breadth-first search held 3 GB after 30 s); a call that runs out of it ends without a
plan, a row with status "unknown" and its exit in the detail. Rows already in --out are skipped (resumable);
print the table with ``planner_compare.py --table-only --out lapkt.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tasks.planning.files import domain_file, llmp_dir, read_text
from verifiers.pddl_model import parse_problem
from verifiers.pddl_write import write_domain, write_problem
from verifiers.planning import parse_plan, simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planner_compare import add_problem_options, limit_memory  # noqa: E402  (the sibling script's run options, memory cap)

PLANNERS = {"satisficing": ["BFWS"], "optimal": ["BRFS_Planner"]}
MAX_PLAN_FILE = 2_000_000


def run_one(python: str, cli: str, mode: str, dom_text: str, prob_text: str, seconds: float,
            memory_mb: int | None = None) -> dict:
    """One LAPKT call in its own process group, killed at ``seconds`` of wall clock, its address
    space capped at ``memory_mb`` (None: no cap)."""
    problem = parse_problem(dom_text, prob_text)
    with tempfile.TemporaryDirectory(prefix="tot-lapkt-") as tmp:
        folder = Path(tmp)
        (folder / "domain.pddl").write_text(write_domain(problem), encoding="utf-8")
        (folder / "problem.pddl").write_text(write_problem(problem), encoding="utf-8")
        plan_file = folder / "plan.ipc"
        cmd = [python, cli, *PLANNERS[mode], "-d", str(folder / "domain.pddl"), "-p", str(folder / "problem.pddl"),
               "--plan_file", str(plan_file), "--log_file", str(folder / "log")]
        start = time.monotonic()
        with open(folder / "out", "wb") as out:
            proc = subprocess.Popen(cmd, cwd=folder, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=lambda: limit_memory(memory_mb))
            rusage = None
            while True:
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    rusage = ru
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    break
                if time.monotonic() - start > seconds:
                    os.killpg(proc.pid, signal.SIGKILL)
                    _, _, rusage = os.wait4(proc.pid, 0)
                    proc.returncode = -9
                    break
                time.sleep(0.02)
        secs = time.monotonic() - start
        row: dict = {"seconds": round(secs, 3), "planner_peak_kb": rusage.ru_maxrss if rusage else None,
                     "length": None, "optimal": False, "detail": ""}
        if proc.returncode == -9:
            return {**row, "status": "unknown", "detail": "the time limit ran out"}
        if proc.returncode != 0 or not plan_file.is_file():
            # LAPKT opens its plan file before it searches: after a failure (std::bad_alloc under
            # --memory-mb, exit 1) an empty file is there, and an empty plan is valid where the goal
            # already holds, so a failed exit is "unknown" whatever the file holds.
            tail = (folder / "out").read_bytes()[-300:].decode("utf-8", "replace").strip().splitlines()
            return {**row, "status": "unknown", "detail": f"exit {proc.returncode}, no plan: {tail[-1:]}"}
        if plan_file.stat().st_size > MAX_PLAN_FILE:
            return {**row, "status": "unknown", "detail": "plan file too large"}
        try:
            steps = parse_plan(plan_file.read_text(encoding="utf-8"))
        except ValueError as e:
            return {**row, "status": "invalid", "detail": f"plan does not parse: {e}"}
        check = simulate(problem, steps)
        if not check.valid:
            return {**row, "status": "invalid", "detail": f"plan failed validation: {check.reason}"}
        # Breadth-first proves the fewest actions, which is the problem's optimum only without action costs.
        optimal = mode == "optimal" and not problem.action_costs
        return {**row, "status": "solved", "length": len(steps), "optimal": optimal,
                "cost": check.cost if problem.action_costs else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lapkt-python", required=True, help="an interpreter with lapkt and clingo installed")
    add_problem_options(ap, "satisficing,optimal")
    ap.add_argument("--out", required=True, help="JSON lines of every problem's result (resumable)")
    a = ap.parse_args()
    cli = str(Path(a.lapkt_python).parent / "lapkt_cmd.py")
    if not Path(cli).is_file():
        sys.exit(f"lapkt_compare: no lapkt_cmd.py beside {a.lapkt_python} (pip install lapkt==0.2.1 clingo there)")
    out = Path(a.out)
    rows = [json.loads(x) for x in out.read_text().splitlines() if x.strip()] if out.is_file() else []
    done = {(r["mode"], r["limit"], r["domain"], r["problem"]) for r in rows}
    lo, hi = (int(x) for x in a.range.split("-"))
    for mode in a.modes.split(","):
        for d in a.domains.split(","):
            folder = llmp_dir(a.llmp_dir) / d
            dom = read_text(domain_file(folder), "domain")
            for i in range(lo, hi + 1):
                if (mode, a.seconds, d, i) in done:
                    continue
                prob = read_text(folder / f"p{i:02d}.pddl", "problem")
                r = {"planner": "lapkt", "mode": mode, "limit": a.seconds, "domain": d, "problem": i,
                     **run_one(a.lapkt_python, cli, mode, dom, prob, a.seconds, a.memory_mb),
                     "memory_limit_mb": a.memory_mb}
                r["peak_kb_so_far"] = r["planner_peak_kb"]
                print(f"lapkt {mode} {d} p{i:02d} {r['status']} len {r['length']} {r['seconds']} s {r['detail']}",
                      flush=True)
                with out.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
