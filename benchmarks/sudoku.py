"""Sudoku after Long (2023): generated puzzles per size, solved count, rounds, LM calls and tokens
per puzzle for Long's controller, the zero-/one-/few-shot baselines and the exact-oracle
controller (the upper bound), measured on this machine.

    python benchmarks/sudoku.py --sizes 3,4,5 --count 10                     # the full set (embedded model: hours)
    python benchmarks/sudoku.py --sizes 3,4,5,9 --count 10 --configs long:enumerate:oracle   # upper bound, no model
    python benchmarks/sudoku.py --sizes 3,4 --count 2 --configs long:propose,zero-shot,one-shot,few-shot

Configs: ``long:GENERATOR[:EVALUATOR]`` (Long's controller; only the ``oracle`` evaluator is used
by it, to rank proposals), ``tot-bfs:...``/``tot-dfs:...`` (the core searches), and the baselines
``zero-shot``, ``one-shot``, ``few-shot`` (one answer, gated). Puzzles are ``generate(size, seed)``
for seeds ``--seed`` .. ``--seed + count - 1`` (9x9 with boxes). Each finished (puzzle, config) is
appended to --out as one JSON line; rerunning skips them, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from solver.budget import Budget, Usage
from solver.lm.client import LMClient
from solver.run import Settings, make_backend, make_client, solve
from solver.trace import Trace
from tasks.sudoku.baselines import BASELINES, run_baseline
from tasks.sudoku.generator import generate
from tasks.sudoku.task import Sudoku


def settings_for(cfg: str, args: argparse.Namespace) -> Settings:
    parts = cfg.split("@")[0].split(":")
    if len(parts) not in (2, 3) or parts[0] not in ("long", "tot-bfs", "tot-dfs"):
        raise SystemExit(f"bad config {cfg!r}: use long:GENERATOR[:EVALUATOR], tot-bfs:G:E, or "
                         f"one of {', '.join(BASELINES)}")
    evaluator = parts[2] if len(parts) == 3 else ("prior" if parts[0] == "long" else "likelihood")
    return Settings(method=parts[0], generator=parts[1], evaluator=evaluator, seed=args.seed_model,
                    max_children=args.max_children, max_rounds=args.max_rounds,
                    budget=Budget(seconds=args.budget_seconds), model=args.model, base_url=args.base_url,
                    backend="openai" if args.model or args.base_url else "local")


async def run(args: argparse.Namespace) -> None:
    sizes = [int(x) for x in args.sizes.split(",")]
    puzzles = [(n, s, generate(n, s, args.blanks, boxes=not args.latin))
               for n in sizes for s in range(args.seed, args.seed + args.count)]
    out = Path(args.out)
    done: set[tuple[str, str]] = set()
    if out.exists():
        for line in out.read_text().splitlines():
            try:
                r = json.loads(line)
                done.add((r["puzzle"], r["config"]))
            except (json.JSONDecodeError, KeyError):
                continue
    backend: Any = None
    configs = args.configs.split(",")
    with out.open("a") as fh:
        for cfg in configs:
            baseline = cfg.split("@")[0] in BASELINES
            s = Settings(model=args.model, base_url=args.base_url,
                         backend="openai" if args.model or args.base_url else "local",
                         budget=Budget(seconds=args.budget_seconds)) if baseline else settings_for(cfg, args)
            todo = [(n, seed, p) for n, seed, p in puzzles if (p.text, cfg) not in done]
            if not todo:
                continue  # resumed: nothing left, so no model is loaded for this config
            if baseline:
                backend = backend or make_backend(s)
                client: LMClient | None = make_client(s, backend)
            else:
                client = make_client(s, backend)
                if client is not None:
                    backend = client.backend
            for n, seed, p in todo:
                task = Sudoku(boxes=not args.latin)
                trace = Trace()
                if baseline:
                    assert client is not None
                    usage = Usage(budget=s.budget, model=client.backend.model)
                    res = await run_baseline(task, p.text, cfg.split("@")[0], client, seed=args.seed_model,
                                             trace=trace, usage=usage)
                else:
                    res = await solve(task, p.text, s, client, trace)
                rounds = len(trace.of("round")) or len(trace.of("expand")) or 1
                row = {"size": n, "seed": seed, "puzzle": p.text, "config": cfg, "rounds": rounds,
                       "backtracks": len(trace.of("backtrack")), **res.summary()}
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(f"{cfg} {n}x{n} seed {seed}: {'solved' if res.verified else 'no answer'} rounds={rounds} "
                      f"calls={row['calls']} tokens={row['tokens']} {row['seconds']:.1f}s", file=sys.stderr)
    if backend is not None:
        await backend.close()
    table(out, set(configs), {p.text for _n, _s, p in puzzles})


def table(path: Path, configs: set[str], texts: set[str]) -> None:
    rows: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["config"] in configs and r["puzzle"] in texts:
            rows[(r["size"], r["config"])].append(r)
    head = (f"{'size':>4} {'config':32} {'solved':>8} {'rounds/pz':>9} {'calls/pz':>9} {'tok/pz':>8} "
            f"{'s/pz':>7} {'gate rejected':>16}")
    print(head)
    print("-" * len(head))
    for (n, cfg) in sorted(rows):
        rs = rows[(n, cfg)]
        k, solved = len(rs), sum(r["verified"] for r in rs)
        prop, rej = sum(r["proposed"] for r in rs), sum(r["rejected"] for r in rs)
        print(f"{n:>4} {cfg:32} {solved:>3}/{k:<4} {sum(r['rounds'] for r in rs) / k:9.1f} "
              f"{sum(r['calls'] for r in rs) / k:9.1f} {sum(r['tokens'] for r in rs) / k:8.0f} "
              f"{sum(r['seconds'] for r in rs) / k:7.2f} {(rej / prop if prop else 0):7.1%} of {prop:<5}")


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--sizes", default="3,4,5")
    p.add_argument("--count", type=int, default=10, help="puzzles per size")
    p.add_argument("--seed", type=int, default=1, help="first puzzle seed")
    p.add_argument("--blanks", type=int, default=None, help="blanks per puzzle (default: per size)")
    p.add_argument("--latin", action="store_true",
                   help="Long (2023)'s rows-and-columns variant (default: standard rules, boxes for 4, 6, 8, 9)")
    p.add_argument("--configs", default="long:propose,zero-shot,one-shot,few-shot,long:enumerate:oracle",
                   help="comma-separated; a suffix @LABEL keeps runs with other options apart")
    p.add_argument("--max-children", type=int, default=5, help="Long's C")
    p.add_argument("--max-rounds", type=int, default=100, help="Long's K")
    p.add_argument("--seed-model", type=int, default=0, help="sampling seed")
    p.add_argument("--budget-seconds", type=float, default=None, help="wall-time cap per puzzle")
    p.add_argument("--model", default=None)
    p.add_argument("--base-url", default=None)
    p.add_argument("--out", default="benchmarks/results/sudoku.jsonl")
    args = p.parse_args()
    if args.blanks is not None and len(args.sizes.split(",")) > 1:
        raise SystemExit("--blanks applies to one size at a time")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
