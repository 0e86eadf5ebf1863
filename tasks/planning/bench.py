"""``tot bench planning``: LLM+P (with and without its example), the direct baseline and Tree of
Thoughts over actions (exact-oracle upper bound, and the model's own evaluator) across the LLM+P
domains. Success means the plan is valid for the ground-truth problem; optimal means it is no
longer than the optimal planner's plan (when that finished within its limit). Each finished
(problem, method) pair is appended to DIR/results.jsonl at once, and a rerun skips it. Rows carry
the common bench fields (task, id, verified, calls, tokens, seconds) and DIR/config.json the
options, so ``tot bench merge`` and ``tot bench report`` work on these directories too; the
per-domain table is the plugin's ``bench_table``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any, Callable

from solver.budget import BudgetExhausted
from solver.lm.base import LMError
from solver.lm.cache import CacheMiss
from solver.run import Settings, make_client, solve, usage_for
from solver.searches.tot import BfsOptions
from tasks.datafiles import parse_span
from tasks.planning.files import LLMP_DOMAINS, domain_file, join_puzzle, llmp_dir, read_text
from tasks.planning.llmp import Example, Inputs, Outcome, example_plan, run_direct, run_llmp
from tasks.planning.state import read_problem
from tasks.planning.task import Planning
from verifiers.pddl_model import parse_problem
from verifiers.planner import BACKENDS, PlanSearch, plan, planner_line, resolve
from verifiers.planning import plan_is_optimal, report_plan

# Its own methods: LLM+P with and without its example, the direct baseline, the planner alone on
# the ground-truth problem (LLM+P's upper bound, and what a planner costs) and ToT over actions
# (exact oracle, and the model's own evaluator). Any other label is a search,
# SEARCH[:GENERATOR[:EVALUATOR]], which the command line parses and hands over with its settings.
METHODS = ("llmp", "llmp-no-example", "direct", "planner", "tot-bfs-oracle", "tot-bfs")
DEFAULTS = {"methods": "llmp,llmp-no-example,direct,tot-bfs-oracle,tot-bfs"}


def add_bench_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llmp-dir", default=None, help="LLM+P domains folder (default $TOT_LLMP_DIR or "
                                                         "../shared/data/llmp beside the checkout)")
    parser.add_argument("--domains", default=",".join(LLMP_DOMAINS), help="comma-separated domain folders")
    parser.add_argument("--range", dest="ranks", default="1-3", help="problem numbers, e.g. 1-3 (default)")
    parser.add_argument("--repairs", type=int, default=1, help="llmp: repairs after a refused problem")
    parser.add_argument("--planner-seconds", type=float, default=20.0, help="planner limit for llmp's plan")
    parser.add_argument("--optimal-seconds", type=float, default=20.0, help="limit for the optimum")
    parser.add_argument("--oracle-seconds", type=float, default=5.0, help="oracle evaluator: planner limit")
    parser.add_argument("--max-steps", type=int, default=40, help="longest plan a search builds")
    parser.add_argument("--planner-mode", choices=["optimal", "satisficing"], default="optimal")
    parser.add_argument("--planner", default=None, metavar="NAME",
                        help=f"planner backend ({', '.join(BACKENDS)}; default: fast-downward when installed)")


def problems(args: argparse.Namespace) -> list[tuple[str, Path, int]]:
    root = llmp_dir(args.llmp_dir)
    lo, hi = parse_span(args.ranks, 1, "1-3", "problem range")
    out = []
    for name in (d.strip() for d in args.domains.split(",") if d.strip()):
        folder = root / name
        if not folder.is_dir():
            raise ValueError(f"unknown domain {name!r}: no folder {folder} (LLM+P has {', '.join(LLMP_DOMAINS)})")
        out += [(name, folder, i) for i in range(lo, hi + 1) if (folder / f"p{i:02d}.pddl").is_file()]
    if not out:
        raise ValueError("no problems in that range")
    return out


def _inputs(folder: Path, i: int, with_example: bool, need_plan: bool) -> Inputs:
    dom = read_text(domain_file(folder), "domain")
    ex_pddl = read_text(folder / "p_example.pddl", "example problem")
    example = Example(read_text(folder / "p_example.nl", "example"), ex_pddl,
                      example_plan(dom, ex_pddl) if need_plan else "") if with_example else None
    return Inputs(dom, read_text(folder / "domain.nl", "domain description"),
                  read_text(folder / f"p{i:02d}.nl", "problem description"), example,
                  read_text(folder / f"p{i:02d}.pddl", "problem"))


def optimal_run(out: Path, folder: Path, i: int, seconds: float,
                planner: str | None = None) -> tuple[int | None, PlanSearch | None]:
    """The problem's optimum, remembered in DIR/optimal.jsonl (None: not proved within the limit):
    the fewest actions, or the least total cost where the problem minimises action costs; and,
    when it ran the planner now (not read from there), that run, so that the ``planner`` method in
    optimal mode with the same limit does not run it twice. Only a finished optimal search of the
    problem's objective gives an optimum, so a remembered one holds whichever backend found it."""
    store = out / "optimal.jsonl"
    key = f"{folder.name}/p{i:02d}"
    if store.is_file():
        for line in store.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            # a record without "optimum" is from before action costs were honoured: run again
            if rec.get("key") == key and rec.get("seconds_limit") == seconds and "optimum" in rec:
                return rec["optimum"], None
    prob = parse_problem(read_text(domain_file(folder), "domain"), read_text(folder / f"p{i:02d}.pddl", "problem"))
    found = plan(prob, time_limit=seconds, mode="optimal", planner=planner)
    with store.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"key": key, "seconds_limit": seconds, "optimum": found.optimum,
                             "objective": "total cost" if prob.action_costs else "actions",
                             "length": len(found.plan) if found.plan is not None else None,
                             "status": found.status, "planner": found.planner,
                             "seconds": round(found.seconds, 2)}) + "\n")
    return found.optimum, found


def planner_row(args: argparse.Namespace, folder: Path, i: int, opt: int | None,
                fresh: PlanSearch | None) -> tuple[dict[str, Any], float]:
    """The ``planner`` method: the ground-truth problem straight to the planner (no model), and the
    seconds of a reused optimal run (0 when it ran its own). Its plan is validated twice: by
    ``plan`` (the simulator) and by the report against the problem."""
    prob = parse_problem(read_text(domain_file(folder), "domain"), read_text(folder / f"p{i:02d}.pddl", "problem"))
    if (fresh is not None and args.planner_mode == "optimal" and args.planner_seconds == args.optimal_seconds
            and fresh.planner == args.planner):
        found = fresh  # the optimal run was this very run: counted once, at its own time
    else:
        found = plan(prob, time_limit=args.planner_seconds, mode=args.planner_mode, planner=args.planner)
    steps = "\n".join(a.text() for a in found.plan) if found.plan is not None else None
    rep = report_plan(prob, steps, opt) if steps is not None else None
    solved = bool(rep and rep.verified)
    optimal = solved and (found.optimal or (rep is not None and plan_is_optimal(rep)))
    fields = {"solved": solved, "optimal": bool(optimal),
              "plan_length": len(found.plan) if found.plan is not None else None, "plan_cost": found.cost,
              "plan": steps.splitlines() if steps else ([] if steps is not None else None),
              "planner": found.summary(), "planner_seconds": round(found.seconds, 3),
              "expanded": found.expanded, "calls": 0, "tokens": 0,
              "reason": None if solved else (rep.reason if rep else found.detail or found.status)}
    return fields, (found.seconds if found is fresh else 0.0)


async def pair(args: argparse.Namespace, settings: Any, folder: Path, i: int, method: str,
               opt: int | None, search: Settings | None = None, fresh: PlanSearch | None = None) -> dict[str, Any]:
    """One (problem, method) row. ``search``: the settings of a search label (any registered
    search, its generator and evaluator); ``fresh``: the optimal-length run just made, which the
    ``planner`` method reuses when it asks for the same run."""
    row: dict[str, Any] = {"task": "planning", "id": f"{folder.name}/p{i:02d}", "domain": folder.name,
                           "problem": i, "method": method, "optimum": opt}
    start = time.monotonic()
    client = None
    usage: Any = None
    try:
        if method == "planner":
            fields, reused_seconds = planner_row(args, folder, i, opt, fresh)
            row.update(fields)
            start -= reused_seconds  # a reused run's time is this row's
        elif method in ("llmp", "llmp-no-example", "direct"):
            inp = _inputs(folder, i, method != "llmp-no-example", method == "direct")
            # No seconds budget here: the calls are bounded by --repairs and their token limits.
            s = dataclasses.replace(settings, search=dataclasses.replace(settings.search, generator="propose"),
                                    budget=dataclasses.replace(settings.budget, seconds=None))
            client = make_client(s)
            assert client is not None  # propose needs a model
            usage = usage_for(s, client)
            if method == "direct":
                out: Outcome = await run_direct(inp, client, seed=settings.model.seed, optimum=opt, usage=usage)
            else:
                out = await run_llmp(inp, client, repairs=args.repairs, planner_seconds=args.planner_seconds,
                                     planner_mode=args.planner_mode, seed=settings.model.seed, optimum=opt,
                                     usage=usage, grammar=settings.model.grammar, planner=args.planner)
            row.update(solved=out.solved, optimal=out.optimal, plan_length=len(out.plan) if out.plan else None,
                       accepted=out.accepted, grammar=out.grammar if method != "direct" else None,
                       attempts=out.attempts, refusals=len(out.refusals), error=out.error,
                       reason=out.report.reason if out.report else out.error)
        else:
            puzzle = join_puzzle(read_text(domain_file(folder), "domain"), read_text(folder / f"p{i:02d}.pddl", "p"))
            task = Planning(max_depth=args.max_steps, oracle_seconds=args.oracle_seconds,
                            planner=getattr(args, "oracle_planner", None))
            if search is not None:
                s = search
            else:
                o = dataclasses.replace(settings.search, method="tot-bfs")
                if method == "tot-bfs-oracle":
                    o = dataclasses.replace(o, generator="enumerate", evaluator="oracle",
                                            options=dataclasses.replace(o.own(BfsOptions), breadth=1))
                s = dataclasses.replace(settings, search=o)
            client = make_client(s)
            res = await solve(task, puzzle, s, client)
            usage = res.usage
            rep = report_plan(read_problem(puzzle), res.answer, opt) if res.answer else None
            solved = bool(rep and rep.verified)
            row.update(solved=solved, optimal=bool(solved and rep is not None and plan_is_optimal(rep)),
                       plan_length=len(res.answer.splitlines()) if res.answer else None,
                       plan=res.answer.splitlines() if res.answer else None,
                       stopped_by=res.stopped_by, expanded=res.expanded, proposed=res.proposed, rejected=res.rejected,
                       reason=None if solved else (rep.reason if rep else f"no plan ({res.stopped_by or 'ended'})"))
        if client is not None and usage is not None:
            row.update(calls=usage.calls, failed_calls=usage.failed_calls,
                       tokens=usage.prompt_tokens + usage.completion_tokens,
                       prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens)
        row["status"] = "done"
    except ValueError as exc:  # bad input of one pair (e.g. a data file) is that pair's result, not a crash
        row.update(status="done", solved=False, optimal=False, reason=f"bad input: {exc}")
    except BudgetExhausted as exc:  # a budget is part of the method: a failure, not an error to retry
        row.update(status="done", solved=False, optimal=False, reason=f"the {exc.which} budget ran out")
    except (LMError, CacheMiss) as exc:
        row.update(status="error", solved=False, optimal=False, error=f"{type(exc).__name__}: {exc}"[:300])
    finally:
        if client is not None:
            await client.close()
    row["seconds"] = round(time.monotonic() - start, 1)
    row["verified"] = bool(row.get("solved"))  # the common report's "solved" column
    return row


def bench_table(rows: list[dict[str, Any]]) -> str:
    """The per-domain table of finished rows, methods in their usual order (``tot bench report``)."""
    done = [r for r in rows if r.get("status") == "done" and "domain" in r]
    present = list(dict.fromkeys(r["method"] for r in done))
    return table(done, [m for m in METHODS if m in present] + [m for m in present if m not in METHODS]) if done else ""


def table(rows: list[dict[str, Any]], methods: list[str]) -> str:
    domains = sorted({r["domain"] for r in rows})
    head = "| domain | n | " + " | ".join(methods) + " |"
    lines = [head, "|" + "---|" * (len(methods) + 2)]
    for d in [*domains, "all"]:
        mine = [r for r in rows if d in ("all", r["domain"])]
        n = len({(r["domain"], r["problem"]) for r in mine})
        cells = []
        for m in methods:
            rs = [r for r in mine if r["method"] == m]
            cells.append(f"{sum(bool(r.get('solved', r.get('verified'))) for r in rs)}/{len(rs)} "
                         f"({sum(bool(r.get('optimal')) for r in rs)} opt)" if rs else "-")
        lines.append(f"| {d} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def run_bench(args: argparse.Namespace, settings: Settings, claim_out: Callable[[Path], None],
                    searches: dict[str, Settings] | None = None) -> int:
    """Every (problem, method) pair not yet in DIR/results.jsonl. ``settings`` are the run's (from
    the command line); ``claim_out(DIR)`` records the configuration there or refuses another one's;
    ``searches``: the ``--methods`` labels that are not this bench's own, parsed by the command line
    as searches (``SEARCH[:GENERATOR[:EVALUATOR]]``), with their settings."""
    searches = searches or {}
    methods = [m for m in (x.strip() for x in args.methods.split(",")) if m in METHODS]
    methods = list(dict.fromkeys(methods)) + [m for m in searches if m not in methods]
    if not methods:
        raise ValueError(f"--methods is empty; choose from {', '.join(METHODS)} or any search")
    for m in (x.strip() for x in args.methods.split(",")):
        if m and m not in METHODS and m not in searches and not any(k.startswith(m + ":") for k in searches):
            raise ValueError(f"unknown planning method {m!r}; choose from {', '.join(METHODS)} or any search")
    asked = getattr(args, "planner", None)
    args.planner = resolve(asked)  # llmp's planner and the optimal lengths'; recorded in config.json
    args.oracle_planner = asked  # the oracle's: the in-process default unless one was named
    todo = problems(args)
    print(planner_line(asked), flush=True)
    out = Path(args.out)
    claim_out(out)  # merge and report need the configuration; mixing configurations is refused
    results = out / "results.jsonl"
    done: dict[tuple[str, int, str], dict[str, Any]] = {}
    if results.is_file():
        for line in results.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill
            if r.get("status") == "done":
                done[(r["domain"], r["problem"], r["method"])] = r
    with results.open("a", encoding="utf-8") as fh:
        for _name, folder, i in todo:
            if all((folder.name, i, m) in done for m in methods):
                continue
            opt, fresh = optimal_run(out, folder, i, args.optimal_seconds, args.planner)
            for m in methods:
                if (folder.name, i, m) in done:
                    continue
                row = await pair(args, settings, folder, i, m, opt, searches.get(m), fresh)
                fh.write(json.dumps(row, default=str) + "\n")
                fh.flush()
                done[(folder.name, i, m)] = row
                print(f"{folder.name} p{i:02d} {m}: {'solved' if row.get('solved') else 'not solved'}"
                      f"{' (optimal)' if row.get('optimal') else ''} in {row['seconds']} s"
                      + (f" - {row.get('reason')}" if not row.get("solved") and row.get("reason") else ""), flush=True)
    wanted = {(f.name, i) for _n, f, i in todo}
    print(table([r for k, r in done.items() if (k[0], k[1]) in wanted], methods))
    print(f"tot bench report {out} prints this with the common table (calls, tokens, seconds, 95% intervals)")
    return 0
