"""Speed of the exact Countdown oracle (``verifiers.countdown``): seconds to decide each of N
generated puzzles (default 1,000 six-number puzzles from the television pool, targets 100-999,
seed 0), each from cold caches unless ``--warm``, under each rule variant; prints the distribution
(median, p90, max, mean; wall-clock and CPU time) and the solvable share. No model.

    python benchmarks/countdown_oracle.py                      # 1,000 puzzles, both rule variants
    python benchmarks/countdown_oracle.py --puzzles 200 --size 7
    python benchmarks/countdown_oracle.py --witness            # time solve() (a witness) instead
    python benchmarks/countdown_oracle.py --set test --rows 1-100 --rules once   # a shipped set's rows
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from verifiers import countdown as cd


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--puzzles", type=int, default=1000, help="how many puzzles (default 1000)")
    ap.add_argument("--size", type=int, default=6, help="numbers per puzzle (default 6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", default="100-999", help="inclusive target range (default 100-999)")
    ap.add_argument("--range", dest="number_range", default=None,
                    help="draw numbers uniformly from LOW-HIGH instead of the television pool")
    ap.add_argument("--rules", choices=[*cd.RULES, "both"], default="both")
    ap.add_argument("--warm", action="store_true", help="keep the memo between puzzles (default: cold each)")
    ap.add_argument("--witness", action="store_true", help="time solve() (a witness) instead of solvable()")
    ap.add_argument("--set", dest="puzzle_set", default=None, help="a shipped set (train, val, test) instead")
    ap.add_argument("--rows", default=None, help="rows of --set, e.g. 1-100 (default all)")
    args = ap.parse_args(argv)
    lo, hi = (int(x) for x in args.targets.split("-"))
    kw: dict[str, object] = {"size": args.size, "targets": (lo, hi)}
    if args.number_range:
        a, b = (int(x) for x in args.number_range.split("-"))
        kw.update(pool=None, number_range=(a, b))
    if args.puzzle_set:
        from tasks.countdown.data import load_split
        from tasks.countdown.task import parse_puzzle

        puzzles = [cd.Puzzle(*parse_puzzle(p)) for _, p in load_split(args.puzzle_set, args.rows)]
        head = f"{len(puzzles)} puzzles, rows {args.rows or 'all'} of the shipped {args.puzzle_set} set"
    else:
        puzzles = cd.generate(args.puzzles, args.seed, **kw)  # type: ignore[arg-type]
        source = f"numbers {args.number_range}" if args.number_range else "the television pool"
        head = f"{len(puzzles)} puzzles of {args.size} numbers from {source}, targets {lo}-{hi}, seed {args.seed}"
    print(f"{head}; {'warm memo' if args.warm else 'cold caches for each puzzle'}; timing "
          f"{'solve() (witness)' if args.witness else 'solvable()'}; Python {sys.version.split()[0]}")
    rules_list = list(cd.RULES) if args.rules == "both" else [args.rules]
    for rules in rules_list:
        cd.clear_caches()
        wall, cpu, yes = [], [], 0
        for p in puzzles:
            if not args.warm:
                cd.clear_caches()
            w, c = time.perf_counter(), time.process_time()
            found = (cd.solve(p.numbers, p.target, rules) is not None if args.witness
                     else cd.solvable(p.numbers, p.target, rules))
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)
            yes += found
        print(f"rules {rules}: solvable {yes}/{len(puzzles)} ({100 * yes / len(puzzles):.1f}%)")
        for name, xs in (("wall", wall), ("cpu", cpu)):
            print(f"  {name:4} s: median {statistics.median(xs):.4f}  p90 {quantile(xs, 0.9):.4f}  "
                  f"max {max(xs):.4f}  mean {statistics.fmean(xs):.4f}  total {sum(xs):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
