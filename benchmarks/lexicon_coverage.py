"""The lexicon on this machine: build time, size, pattern-query speed, index memory, and how many
of the 1,560 answer words of the paper's 156 mini crosswords it holds per source set and floor.

    python benchmarks/lexicon_coverage.py                    # every figure
    python benchmarks/lexicon_coverage.py --queries 10000 --seed 0
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import tracemalloc
from pathlib import Path

from lexicon import build_lexicon
from lexicon.coverage import coverage
from lexicon.sources import system_words
from tasks.crosswords.data import default_data, load_puzzles

SOURCE_SETS = [("wordfreq",), ("wordfreq", "english-words"), ("wordfreq", "english-words", "system")]
FLOORS = (0.0, 1.0, 2.0, 3.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--length", type=int, default=5)
    p.add_argument("--data", default=None)
    args = p.parse_args()

    have_system = bool(system_words())
    print(f"system dictionaries (/usr/share/dict, wamerican-insane / wbritish-insane): "
          f"{'present' if have_system else 'absent'}")
    t0, c0 = time.perf_counter(), time.process_time()
    lex = build_lexicon()
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"build (all sources): {build_s:.2f} s wall, {build_cpu:.2f} s CPU, {len(lex):,} words")

    tracemalloc.start()
    t0 = time.perf_counter()
    idx = lex.index(args.length)
    index_s = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    strings = sum(sys.getsizeof(w) for w in idx.words) + sys.getsizeof(idx.words)
    print(f"{args.length}-letter index: {idx.size:,} words, built in {index_s * 1000:.0f} ms; "
          f"masks, letter matrix and word array {idx.nbytes() / 1e6:.2f} MB, word strings {strings / 1e6:.2f} MB, "
          f"peak while building {peak / 1e6:.2f} MB")

    rng = random.Random(args.seed)
    patterns = []
    for _ in range(args.queries):
        w = rng.choice(idx.words)
        k = rng.randint(1, args.length)  # known letters
        keep = set(rng.sample(range(args.length), k))
        patterns.append("".join(ch if i in keep else "?" for i, ch in enumerate(w)))
    # CPU time, so that other processes on a shared machine do not inflate the figure.
    t0 = time.process_time()
    total = 0
    for pat in patterns:
        total += len(idx.match(pat))
    q_s = time.process_time() - t0
    t0 = time.process_time()
    for pat in patterns:
        idx.match(pat, limit=20)
    q20_s = time.process_time() - t0
    print(f"{args.queries:,} random pattern queries (1-{args.length} known letters), CPU time: {q_s:.2f} s "
          f"returning every match ({total / args.queries:.0f} words per query on average), "
          f"{q20_s:.2f} s returning the top 20")

    puzzles = load_puzzles(args.data or default_data())
    groups = [pz.words() for pz in puzzles]
    sets = [s for s in SOURCE_SETS if "system" not in s or have_system]
    rows = coverage(lex, groups, FLOORS, sets)
    print(f"\ncoverage of the {sum(len(g) for g in groups):,} answer words of {len(groups)} puzzles "
          f"({Path(args.data or default_data()).name})")
    print(f"{'sources':38} {'min zipf':>8} {'words held':>14} {'puzzles complete':>17}")
    for r in rows:
        print(f"{'+'.join(r.sources):38} {r.min_zipf:8.1f} {r.words_held:6}/{r.words_total} {r.share:6.1%} "
              f"{r.groups_complete:9}/{r.groups_total}")


if __name__ == "__main__":
    main()
