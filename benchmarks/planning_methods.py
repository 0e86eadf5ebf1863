"""Every registered search over actions on LLM+P problems, one results directory that
``tot bench report DIR`` reads (verified, calls, tokens, seconds, states expanded: median and p90).

``tot bench planning --methods`` takes only its own five methods (llmp, llmp-no-example, direct,
tot-bfs-oracle, tot-bfs); this driver runs any ``SEARCH[:GENERATOR[:EVALUATOR]]`` label, as
``tot bench`` does for the other tasks, through the same ``solver.run.solve`` and the same
``Planning`` task as the planning bench's tot-bfs rows. A plan counts as verified only when it is
valid for the ground-truth problem (``verifiers.planning.report_plan``); optimal when it is no
longer than the optimal planner's plan (the planning bench's ``optimal_length``, remembered in
DIR/optimal.jsonl; unknown when the planner did not finish within --optimal-seconds).

    python benchmarks/planning_methods.py --domain blocksworld --range 1-20 \\
        --methods tot-complete:enumerate:oracle,best-first:enumerate:oracle --out DIR
    tot bench report DIR --no-plots

Rows already in DIR/results.jsonl (same id and method) are skipped, so a cut run resumes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from solver.budget import Budget, BudgetExhausted
from solver.run import Settings, make_client, solve
from solver.tools.bench import search_settings
from tasks.planning.bench import optimal_length
from tasks.planning.files import domain_file, join_puzzle, llmp_dir, read_text
from tasks.planning.state import read_problem
from tasks.planning.task import Planning
from verifiers.planner import resolve
from verifiers.planning import report_plan


async def one(a: argparse.Namespace, folder: Path, i: int, label: str, opt: int | None) -> dict[str, Any]:
    row: dict[str, Any] = {"task": "planning", "id": f"{folder.name}/p{i:02d}", "domain": folder.name,
                           "problem": i, "method": label, "optimal_length": opt}
    puzzle = join_puzzle(read_text(domain_file(folder), "domain"), read_text(folder / f"p{i:02d}.pddl", "p"))
    task = Planning(max_depth=a.max_steps, oracle_seconds=a.oracle_seconds)
    base = Settings(budget=Budget(seconds=a.budget_seconds))
    s = search_settings(base, label)
    s = dataclasses.replace(s, search=dataclasses.replace(s.search, seed=a.seed))
    client = make_client(s)
    start = time.monotonic()
    try:
        res = await solve(task, puzzle, s, client)
        rep = report_plan(read_problem(puzzle), res.answer, opt) if res.answer else None
        solved = bool(rep and rep.verified)
        length = len(res.answer.splitlines()) if res.answer else None
        u = res.usage
        row.update(status="done", verified=solved, plan_length=length, stopped_by=res.stopped_by,
                   expanded=res.expanded, proposed=res.proposed, rejected=res.rejected, exhausted=res.exhausted,
                   optimal=bool(solved and opt is not None and length is not None and length <= opt),
                   calls=u.calls, tokens=u.prompt_tokens + u.completion_tokens, prompt_tokens=u.prompt_tokens,
                   completion_tokens=u.completion_tokens,
                   reason=None if solved else (rep.reason if rep else f"no plan ({res.stopped_by or 'ended'})"))
    except BudgetExhausted as exc:
        row.update(status="done", verified=False, reason=f"the {exc.which} budget ran out")
    finally:
        if client is not None:
            await client.close()
    row["seconds"] = round(time.monotonic() - start, 2)
    return row


async def main_async(a: argparse.Namespace) -> None:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    done = set()
    if results.is_file():
        for line in results.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                done.add((r["id"], r["method"]))
    folder = llmp_dir(a.llmp_dir) / a.domain
    lo, hi = (int(x) for x in a.range.split("-"))
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    for i in range(lo, hi + 1):
        if not (folder / f"p{i:02d}.pddl").is_file():
            continue
        opt = optimal_length(out, folder, i, a.optimal_seconds, resolve(None))  # as tot bench planning
        for label in methods:
            if (f"{folder.name}/p{i:02d}", label) in done:
                continue
            row = await one(a, folder, i, label, opt)
            with results.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            print(f"p{i:02d} {label}: verified={row.get('verified')} expanded={row.get('expanded')} "
                  f"calls={row.get('calls')} {row['seconds']}s opt={opt} len={row.get('plan_length')}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--llmp-dir", default=None, help="LLM+P domains folder (default as tot bench planning)")
    p.add_argument("--domain", default="blocksworld")
    p.add_argument("--range", default="1-20", help="problem numbers A-B")
    p.add_argument("--methods", required=True, help="comma-separated SEARCH[:GENERATOR[:EVALUATOR]]")
    p.add_argument("--oracle-seconds", type=float, default=5.0, help="oracle evaluator: planner limit")
    p.add_argument("--optimal-seconds", type=float, default=20.0, help="limit for the optimal length")
    p.add_argument("--max-steps", type=int, default=40, help="longest plan a search builds")
    p.add_argument("--budget-seconds", type=float, default=None, help="per (problem, method)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
