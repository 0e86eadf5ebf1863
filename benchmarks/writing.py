"""Creative Writing on the paper's 100 inputs: how many raw model passages already end right, how
many are returned after the exact gate, mean coherence (1-10, n judged samples), LM calls, tokens
and time per input, for each method, measured on this machine.

    python benchmarks/writing.py --index 0-99                          # everything, the paper's k=5, n=5
    python benchmarks/writing.py --index 0 --k 2 --n-evaluate 2 --rounds 2 --score-samples 2

Methods: io, cot, refine (baselines, one gate on what they return), tot-plan (the paper's plan
then passage, sampled k, voted n, b=1) and tot-paragraphs (one gated paragraph per step).
Each finished (input, method) is appended to --out as one JSON line; rerunning skips it. Coherence
scoring calls are counted apart from the method's own calls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from solver.budget import Usage
from solver.lm.client import LMClient
from solver.run import Settings, make_client, solve
from solver.trace import Trace
from tasks.writing.baselines import BASELINES, run_baseline
from tasks.writing.coherence import coherence
from tasks.writing.data import default_data, load_lines
from tasks.writing.task import Writing
from verifiers.writing import check_passage, split_sentences

METHODS = (*BASELINES, "tot-plan", "tot-paragraphs")
OUT = Path(__file__).parent / "results" / "writing.jsonl"


def raw_counts(trace: Trace, leaf_depth: int) -> tuple[int, int, str | None]:
    """(thoughts proposed at ``leaf_depth`` (1 = every step counts), how many passed the gate,
    the first such thought's text) from a search trace."""
    depth = {}
    total = passed = 0
    first: str | None = None
    for ev in trace.events:
        if ev["event"] == "root":
            depth[ev["node"]] = 0
        elif ev["event"] == "proposal":
            d = ev["depth"] if "node" in ev else depth.get(ev["parent"], -2) + 1
            if "node" in ev:
                depth[ev["node"]] = d
            if leaf_depth == 1 or d == leaf_depth:
                total += 1
                passed += "node" in ev
                first = first if first is not None else ev["thought"]
    return total, passed, first


async def run_one(method: str, line: str, client: LMClient, args: argparse.Namespace) -> dict[str, Any]:
    sentences = split_sentences(line)
    usage = Usage(model=client.backend.model)
    started = time.monotonic()
    if method in BASELINES:
        kw: dict[str, Any] = {"rounds": args.rounds} if method == "refine" else {}
        if method == "refine":
            from tasks.writing.baselines import refine

            res = await refine(sentences, client, seed=args.seed, usage=usage, **kw)
        else:
            res = await run_baseline(method, sentences, client, seed=args.seed, usage=usage)
        row: dict[str, Any] = {"unit": "passage", "raw": len(res.raw), "raw_ok": sum(res.raw_valid),
                               "answer": res.passage, "first_raw": res.raw[0] if res.raw else None,
                               "reason": res.reason}
    else:
        decomposition = "plan" if method == "tot-plan" else "paragraphs"
        task = Writing(decomposition)  # type: ignore[arg-type]
        s = Settings(generator="sample", evaluator="vote", breadth=1, k=args.k, n_evaluate=args.n_evaluate,
                     seed=args.seed)
        trace = Trace()
        result = await solve(task, line, s, client, trace)
        usage = result.usage
        total, ok, first = raw_counts(trace, 2 if decomposition == "plan" else 1)
        reasons = [ev.get("reason") for ev in trace.events if ev["event"] == "verdict" and ev["verdict"] == "invalid"]
        row = {"unit": "passage" if decomposition == "plan" else "paragraph", "raw": total, "raw_ok": ok,
               "answer": result.answer, "first_raw": first if decomposition == "plan" else None,
               "reason": reasons[-1] if reasons and not result.answer else None, "stopped_by": result.stopped_by}
    seconds = time.monotonic() - started
    if row["answer"] is not None:
        assert check_passage(sentences, row["answer"]) is None  # the gate's promise, rechecked here
    # Each method is one run with its own session: an earlier method's answers are not reused
    # (except through --cache, whose hits count the tokens recorded with them).
    row.update(verified=row["answer"] is not None, calls=usage.calls, backend_calls=usage.backend_calls,
               cache_hits=usage.cache_hits,
               prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
               tokens=usage.tokens, seconds=round(seconds, 2))
    scoring = client.session()  # scoring is not the method's cost
    if args.score_samples > 0:
        for key in ("answer", "first_raw"):
            text = row[key]
            row[f"coherence_{key}"] = ((await coherence(scoring, text, args.score_samples, seed=args.seed)).mean
                                       if text else None)
        row["scoring_calls"] = scoring.usage.calls
    return row


def table(rows: list[dict[str, Any]]) -> str:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[r["method"]].append(r)
    head = (f"{'method':15} {'inputs':>6} {'raw ok':>12} {'returned':>9} {'coh(ret)':>8} {'coh(raw)':>8} "
            f"{'calls':>6} {'tokens':>7} {'s/input':>8}")
    lines = [head, "-" * len(head)]
    for m in METHODS:
        rs = by.get(m)
        if not rs:
            continue
        n = len(rs)
        raw, ok = sum(r["raw"] for r in rs), sum(r["raw_ok"] for r in rs)
        unit = rs[0]["unit"] + "s"
        ret = [r["coherence_answer"] for r in rs if r.get("coherence_answer") is not None]
        first = [r["coherence_first_raw"] for r in rs if r.get("coherence_first_raw") is not None]
        mean = (lambda xs: f"{sum(xs) / len(xs):.1f}" if xs else "-")  # noqa: E731
        lines.append(f"{m:15} {n:6} {f'{ok}/{raw} {unit[:4]}':>12} {sum(r['verified'] for r in rs):>5}/{n:<3} "
                     f"{mean(ret):>8} {mean(first):>8} {sum(r['calls'] for r in rs) / n:6.1f} "
                     f"{sum(r['tokens'] for r in rs) / n:7.0f} {sum(r['seconds'] for r in rs) / n:8.1f}")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    lines = load_lines(args.data or default_data(), args.index)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for m in methods:
        if m not in METHODS:
            raise SystemExit(f"unknown method {m!r}; choose from {', '.join(METHODS)}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    config = {"k": args.k, "n_evaluate": args.n_evaluate, "rounds": args.rounds,
              "score_samples": args.score_samples, "seed": args.seed}
    rows, done = [], set()
    if out.exists():
        for text in out.read_text().splitlines():
            try:
                r = json.loads(text)
            except json.JSONDecodeError:
                continue
            if r.get("config") == config:
                rows.append(r)
                done.add((r["index"], r["method"]))
    s = Settings(backend="openai" if args.model or args.base_url else "local", model=args.model,
                 base_url=args.base_url, cache=args.cache, cache_mode=args.cache_mode, generator="sample")
    client = make_client(s)
    assert client is not None
    try:
        with out.open("a") as fh:
            for index, line in lines:
                for m in methods:
                    if (index, m) in done:
                        continue
                    row = {"index": index, "method": m, "config": config, "input": line,
                           **(await run_one(m, line, client, args))}
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    fh.flush()
                    rows.append(row)
                    print(f"[{index}] {m}: verified={row['verified']} raw_ok={row['raw_ok']}/{row['raw']} "
                          f"calls={row['calls']} tokens={row['tokens']} {row['seconds']} s", flush=True)
    finally:
        await client.close()
    return [r for r in rows if any(r["index"] == i for i, _ in lines) and r["method"] in methods]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--index", default="0-99", help="0-based input lines, e.g. 0-99 or 5")
    p.add_argument("--data", default=None)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--k", type=int, default=5, help="sampled thoughts per step (the paper: 5)")
    p.add_argument("--n-evaluate", type=int, default=5, help="votes per step (the paper: 5)")
    p.add_argument("--rounds", type=int, default=5, help="refine: at most this many passages")
    p.add_argument("--score-samples", type=int, default=5, help="coherence samples per passage (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", default=None)
    p.add_argument("--base-url", default=None)
    p.add_argument("--cache", default=None, help="record/replay store (sqlite)")
    p.add_argument("--cache-mode", choices=["record", "replay", "off"], default="record")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args()
    rows = asyncio.run(run(args))
    print(table(rows))


if __name__ == "__main__":
    main()
