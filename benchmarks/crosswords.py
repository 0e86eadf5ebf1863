"""Mini crosswords on the paper's 20 test puzzles (every 5th of the first 100): DFS with pruning
and backtracking for each generator:evaluator pair. Per config: letter / word / game success of
the output (the complete grid, else the deepest state reached), of the oracle's best state seen,
LM calls and tokens per puzzle, time, and the evaluator's false-prune rate against the answers
(pruned states that were still solvable, over all still-solvable states it judged).

    python benchmarks/crosswords.py --configs enumerate:oracle,enumerate:fillable       # no model
    python benchmarks/crosswords.py --configs propose:clues,enumerate-rank:clues --limit 2 --steps 10
    python benchmarks/crosswords.py --audit --configs clues,fillable --limit 5   # false prunes only

``enumerate:oracle`` is the exact upper bound: lexicon candidates pruned by the answer board, a
complete grid judged like any state (``--keep-going``). Rows are appended to --out as JSON lines;
rerunning skips finished (puzzle, config) pairs, and the table is computed from that file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from lexicon import default_lexicon
from solver.budget import Budget
from solver.run import Settings, make_client, solve
from solver.trace import Trace
from tasks.crosswords import Crosswords
from tasks.crosswords.data import TEST_INDICES, default_data, load_puzzles
from verifiers.crossword import consistent, score_board


def false_prunes(trace: Trace, truth: str) -> tuple[int, int, int]:
    """(still-solvable states the evaluator pruned, still-solvable states it scored, states scored)."""
    states = {e["node"]: e["state"] for e in trace.of("verdict") if "node" in e and "state" in e}
    scored = {e["node"] for e in trace.of("score")}
    pruned = {e["node"] for e in trace.of("cut") if e.get("why") == "pruned"}
    solvable = {n for n in scored if n in states and consistent(states[n], truth)}
    return len(solvable & pruned), len(solvable), len(scored)


def best_seen(trace: Trace, truth: str) -> str:
    """The paper's oracle "best state": of every state that passed the gate, the one with the
    most words right (then letters)."""
    boards = [e["state"] for e in trace.of("verdict") if "state" in e] + [trace.of("root")[0]["state"]]
    return max(boards, key=lambda b: (score_board(b, truth).words_right, score_board(b, truth).letters_right))


async def run(args: argparse.Namespace) -> None:
    puzzles = load_puzzles(args.data or default_data())
    indices = [i for i in TEST_INDICES if i <= len(puzzles)][: args.limit or None]
    out = Path(args.out)
    done: set[tuple[int, str]] = set()
    if out.exists():
        for line in out.read_text().splitlines():
            try:
                r = json.loads(line)
                done.add((r["index"], r["config"]))
            except (json.JSONDecodeError, KeyError):
                continue
    lex = default_lexicon()
    backend = None
    configs = args.configs.split(",")
    with out.open("a") as fh:
        for cfg in configs:
            gen, ev = cfg.split(":")
            oracle = ev == "oracle"
            task = Crosswords(lex, candidates=args.oracle_candidates if oracle else args.candidates,
                              stop_when_full=not oracle, fill_level=args.fill_level)
            s = Settings(method="tot-dfs", generator=gen, evaluator=ev, seed=args.seed,
                         budget=Budget(steps=args.steps), model_free=("fillable",),
                         model=args.model, base_url=args.base_url, cache=args.cache,
                         backend="openai" if args.model or args.base_url else "local")
            client = make_client(s, backend)
            if client is not None:
                backend = client.backend
            for i in indices:
                if (i, cfg) in done:
                    continue
                p = puzzles[i - 1]
                assert p.answer is not None
                trace = Trace()
                t0 = time.perf_counter()
                res = await solve(task, p.text(), s, client, trace)
                secs = time.perf_counter() - t0
                node = res.solution or res.best
                board = node.state.board if node is not None else "_" * 25
                sc, bs = score_board(board, p.answer), score_board(best_seen(trace, p.answer), p.answer)
                fp, solvable, scored = false_prunes(trace, p.answer)
                summ = res.summary()
                row: dict[str, Any] = {
                    "index": i, "config": cfg, "steps_cap": args.steps, "board": board, **sc.as_dict(),
                    "best_letters": round(bs.letters, 4), "best_words": round(bs.words, 4), "best_game": bs.game,
                    "false_pruned": fp, "solvable_scored": solvable, "scored": scored,
                    "calls": summ["calls"], "tokens": summ["tokens"], "steps": summ["steps"],
                    "proposed": summ["proposed"], "rejected": summ["rejected"], "seconds": round(secs, 2)}
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(f"{cfg} #{i}: letters {sc.letters_right}/25 words {sc.words_right}/10 "
                      f"calls={row['calls']} steps={row['steps']} {secs:.1f}s", file=sys.stderr)
    table(out, set(configs), set(indices))


def table(path: Path, configs: set[str], indices: set[int]) -> None:
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["config"] in configs and r["index"] in indices:
            rows[r["config"]].append(r)
    head = (f"{'generator:evaluator':28} {'n':>3} {'letters':>8} {'words':>6} {'games':>6} {'best: l/w/g':>18} "
            f"{'calls/pz':>8} {'tok/pz':>8} {'s/pz':>7} {'false prunes':>18}")
    print(head)
    print("-" * len(head))
    for cfg in sorted(rows):
        rs = rows[cfg]
        n = len(rs)

        def mean(k: str, rs: list[dict[str, Any]] = rs) -> float:
            return sum(float(r[k]) for r in rs) / len(rs)

        fp, sol = sum(r["false_pruned"] for r in rs), sum(r["solvable_scored"] for r in rs)
        best = f"{mean('best_letters'):.0%}/{mean('best_words'):.0%}/{sum(r['best_game'] for r in rs)}"
        print(f"{cfg:28} {n:3} {mean('letters'):8.1%} {mean('words'):6.1%} {sum(r['game'] for r in rs):6} "
              f"{best:>18} {mean('calls'):8.1f} {mean('tokens'):8.0f} {mean('seconds'):7.1f} "
              f"{(fp / sol if sol else 0):7.1%} of {sol:<6}")


async def audit(args: argparse.Namespace) -> None:
    """False-prune rate on states known to be solvable: for each puzzle, states holding k of the
    true words (slots drawn at random, seeded), judged by each evaluator named in --configs."""
    import random

    from solver.node import NodeFactory
    from solver.task import Thought

    puzzles = load_puzzles(args.data or default_data())
    indices = [i for i in TEST_INDICES if i <= len(puzzles)][: args.limit or None]
    rng = random.Random(args.seed)
    lex = default_lexicon()
    task = Crosswords(lex, fill_level=args.fill_level)
    states = []
    for i in indices:
        p = puzzles[i - 1]
        names = [s.name for s in task.root(p.text()).grid.layout.slots]
        for k in args.audit_words:
            state = task.root(p.text())
            for name in rng.sample(names, k):
                word = p.words()[names.index(name)]
                verdict = task.check(state, Thought(f"{name}. {word}"))
                state = getattr(verdict, "state", state)
            if not state.grid.is_full():
                states.append((i, k, state))
    backend = None
    for ev_name in args.configs.split(","):
        ev_name = ev_name.split(":")[-1]
        s = Settings(method="tot-dfs", generator="propose", evaluator=ev_name, seed=args.seed,
                     model_free=("fillable", "oracle"), cache=args.cache, model=args.model, base_url=args.base_url,
                     backend="openai" if args.model or args.base_url else "local")
        s.generator = "enumerate"
        client = make_client(s, backend)
        if client is not None:
            backend = client.backend
        ev = task.make_evaluator(ev_name, s)
        if ev is None:
            from solver.evaluators import make_evaluator

            ev = make_evaluator(ev_name, n=s.n_evaluate, seed=s.seed)
        nodes = NodeFactory()
        model = client.session() if client is not None else None
        t0 = time.perf_counter()
        pruned: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        for _i, k, state in states:
            (score, _detail), = await ev(task, [nodes.make(state, None)], model)
            pruned[k][0] += score < ev.prune_below
            pruned[k][1] += 1
        calls = model.usage.calls if model is not None else 0
        total = [sum(v[0] for v in pruned.values()), sum(v[1] for v in pruned.values())]
        per_k = ", ".join(f"{k} words {v[0]}/{v[1]}" for k, v in sorted(pruned.items()))
        print(f"{ev_name:10} false prunes {total[0]}/{total[1]} = {total[0] / max(1, total[1]):.1%} "
              f"({per_k}); {calls} calls, {time.perf_counter() - t0:.1f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default="enumerate:oracle,enumerate:fillable")
    p.add_argument("--limit", type=int, default=None, help="only the first N of the 20 test puzzles")
    p.add_argument("--steps", type=int, default=100, help="DFS step cap (the paper: 100)")
    p.add_argument("--candidates", type=int, default=10, help="lexicon words per open slot")
    p.add_argument("--oracle-candidates", type=int, default=1000, help="lexicon words per slot for oracle runs")
    p.add_argument("--fill-level", default="arc", choices=["slots", "arc", "full"])
    p.add_argument("--data", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", default=None)
    p.add_argument("--base-url", default=None)
    p.add_argument("--cache", default=None, help="record/replay store (sqlite) for model outputs")
    p.add_argument("--out", default="benchmarks/results/crosswords.jsonl")
    p.add_argument("--audit", action="store_true",
                   help="instead of searching, measure each evaluator's false-prune rate on solvable states")
    p.add_argument("--audit-words", type=lambda t: [int(x) for x in t.split(",")], default=[1, 3, 5],
                   help="true words placed in the audited states (default 1,3,5)")
    args = p.parse_args()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(audit(args) if args.audit else run(args))


if __name__ == "__main__":
    main()
