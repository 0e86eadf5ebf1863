"""Game of 24 over the paper's test ranks: solved count, calls, tokens, time and gate rejections
per (method, generator, evaluator), measured on this machine.

    python benchmarks/game24.py --range 901-1000 --configs tot-bfs:propose:value,tot-bfs:enumerate-rank:likelihood
    python benchmarks/game24.py --range 901-1000 --configs tot-bfs:enumerate:oracle   # exact upper bound, no model

Each finished (puzzle, config) is appended to --out as one JSON line; rerunning skips them, so an
interrupted benchmark resumes. The table is computed from that file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path

from solver.run import Settings, make_client, solve
from tasks.game24 import Game24
from tasks.game24.data import default_csv, load_csv


def parse_config(text: str) -> tuple[str, str, str]:
    parts = text.split(":")
    if len(parts) != 3:
        raise SystemExit(f"bad config {text!r}: use METHOD:GENERATOR:EVALUATOR, e.g. tot-bfs:propose:value")
    return parts[0], parts[1], parts[2]


async def run(args: argparse.Namespace) -> None:
    puzzles = load_csv(args.data or default_csv(), args.range)
    if args.limit:
        puzzles = puzzles[: args.limit]
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            try:
                r = json.loads(line)
                done.add((r["rank"], r["config"]))
            except (json.JSONDecodeError, KeyError):
                continue
    clients: dict[str, object] = {}
    with out.open("a") as fh:
        for cfg in args.configs.split(","):
            method, gen, ev = parse_config(cfg.split("@")[0])
            s = Settings(method=method, generator=gen, evaluator=ev, breadth=args.breadth, seed=args.seed,
                         model=args.model, base_url=args.base_url,
                         backend="openai" if args.model or args.base_url else "local")
            client = make_client(s, clients.get("backend"))  # type: ignore[arg-type]
            if client is not None:
                clients["backend"] = client.backend
            for rank, puzzle in puzzles:
                if (rank, cfg) in done:
                    continue
                res = await solve(Game24(policy=args.policy), puzzle, s, client)
                row = {"rank": rank, "puzzle": puzzle, "config": cfg, **res.summary()}
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(f"{cfg} {rank} {puzzle}: {'solved' if res.verified else 'no answer'} "
                      f"calls={row['calls']} tokens={row['tokens']} {row['seconds']:.1f}s", file=sys.stderr)
    table(out, {c for c in args.configs.split(",")}, {r for r, _ in puzzles})


def table(path: Path, configs: set[str], ranks: set[int]) -> None:
    rows = defaultdict(list)
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["config"] in configs and r["rank"] in ranks:
            rows[r["config"]].append(r)
    head = (f"{'method:generator:evaluator':40} {'solved':>9} {'calls/pz':>9} {'tok/pz':>9} "
            f"{'calls/solved':>12} {'tok/solved':>10} {'s/pz':>7} {'gate rejected':>14}")
    print(head)
    print("-" * len(head))
    for cfg in sorted(rows):
        rs = rows[cfg]
        n, solved = len(rs), sum(r["verified"] for r in rs)
        calls, toks = sum(r["calls"] for r in rs), sum(r["tokens"] for r in rs)
        secs = sum(r["seconds"] for r in rs)
        prop, rej = sum(r["proposed"] for r in rs), sum(r["rejected"] for r in rs)
        per_solved = (f"{calls / solved:12.1f} {toks / solved:10.0f}" if solved else f"{'-':>12} {'-':>10}")
        print(f"{cfg:40} {solved:>4}/{n:<4} {calls / n:9.1f} {toks / n:9.0f} {per_solved} {secs / n:7.2f} "
              f"{(rej / prop if prop else 0):8.1%} of {prop:<5}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--range", default="901-1000")
    p.add_argument("--limit", type=int, default=None, help="only the first N puzzles of the range")
    p.add_argument("--data", default=None)
    p.add_argument("--configs", default="tot-bfs:enumerate:oracle,tot-bfs:propose:value",
                   help="METHOD:GENERATOR:EVALUATOR[@LABEL],... (a label keeps runs with other options apart)")
    p.add_argument("--breadth", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--policy", choices=["reject", "repair"], default="reject")
    p.add_argument("--model", default=None)
    p.add_argument("--base-url", default=None)
    p.add_argument("--out", default="benchmarks/results/game24.jsonl")
    args = p.parse_args()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
