"""Performance on this machine, as one table: concurrency, repeated work, exact layers, the model.

    python benchmarks/perf.py                    # everything: about 4 minutes on 2 busy cores
    python benchmarks/perf.py --json             # the same rows as JSON, for scripts
    python benchmarks/perf.py --only oracle,check --json

Each section is its own module (perf_oracle.py, perf_concurrency.py, perf_memo.py, perf_checks.py,
perf_lexicon.py, perf_model.py; the shared fake model is fake_game24_model.py); this script runs the
chosen ones and prints one table. Machines are noisy, so every comparison is measured side by side
in the same run and reported as a ratio; absolute times are context. Sections:

- oracle:      the fast Game-of-24 oracle against the plain memoized exhaustive search, all 1,820
               multisets of 1..13, each from cold caches.
- concurrency: the real ``bfs`` (propose + value) and sample batches through ``LMClient`` and
               ``OpenAIBackend`` against a fake OpenAI-compatible server on 127.0.0.1 that answers
               after a fixed delay; speed-up of one BFS level and of 16-sample batches at N = 1, 4,
               16, and the peak number of requests the server saw in flight.
- memo:        calls that the client's in-run memo saved on Game of 24 901-1000, with a
               deterministic in-process fake model (so repeats are exact) and the real search.
- check:       median time to check one proposed thought (parse + exact verify), per task.
- lexicon:     pattern queries and crossword fillability, when those modules exist.
- model:       the embedded model's tokens/s on repeated prompts with and without KV prefix reuse
               (a few seconds; skipped when the model is not installed, or with --no-model).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from perf_checks import bench_check  # noqa: E402
from perf_concurrency import bench_concurrency  # noqa: E402
from perf_lexicon import bench_lexicon  # noqa: E402
from perf_memo import bench_memo  # noqa: E402
from perf_model import bench_model  # noqa: E402
from perf_oracle import bench_oracle  # noqa: E402
from perf_row import Row, print_table  # noqa: E402

SECTIONS = ("oracle", "concurrency", "memo", "lexicon", "check", "model")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {', '.join(SECTIONS)}")
    p.add_argument("--delay", type=float, default=0.25, help="the fake server's answer delay, seconds")
    p.add_argument("--repeats", type=int, default=3, help="runs per concurrency measurement (the best counts)")
    p.add_argument("--range", default="901-1000", help="Game-of-24 ranks for the memo section")
    p.add_argument("--model-calls", type=int, default=4, help="prompts per embedded-model measurement")
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    p.add_argument("--no-model", action="store_true", help="skip the embedded model")
    args = p.parse_args(argv)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = [s for s in chosen if s not in SECTIONS]
    if bad:
        print(f"unknown section {bad[0]!r}; choose from {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    load0 = os.getloadavg()[0]
    rows: list[Row] = []
    for sec in chosen:
        if sec == "oracle":
            rows += bench_oracle()
        elif sec == "concurrency":
            rows += bench_concurrency(args.delay, args.repeats)
        elif sec == "memo":
            rows += bench_memo(args.range)
        elif sec == "check":
            rows += bench_check()
        elif sec == "lexicon":
            rows += bench_lexicon()
        elif sec == "model" and not args.no_model:
            rows += bench_model(args.model_calls, args.threads)
    rows.insert(0, Row("machine", "cores / load average (1 min) at start, at end",
                       f"{os.cpu_count()} / {load0:.1f}, {os.getloadavg()[0]:.1f}", "", "",
                       "load above the core count means other work shared the CPUs"))
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
