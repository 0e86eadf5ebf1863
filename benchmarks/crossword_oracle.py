"""The crossword oracle mode over the shipped puzzles: ``--generator enumerate --evaluator oracle``
with every lexicon word of the most constrained slot (``--candidates all``, the CLI's default for
this pair), DFS with the CLI's 100-step budget. For the paper's 20 test games and for every other
shipped puzzle whose ten answers are all lexicon words: solved or not, and seconds per puzzle
(median, worst). No model.

    python benchmarks/crossword_oracle.py                # the 20 test games, then every other in-lexicon puzzle
    python benchmarks/crossword_oracle.py --test-only
    python benchmarks/crossword_oracle.py --candidates 10   # the old capped enumeration, for comparison
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from lexicon import default_lexicon
from solver.budget import Budget
from solver.run import SearchSettings, Settings, solve
from solver.trace import Trace
from tasks.crosswords import Crosswords
from tasks.crosswords.data import TEST_INDICES, default_data, load_puzzles


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--candidates", default="all", help="'all' or N per slot")
    ap.add_argument("--test-only", action="store_true", help="only the 20 test games")
    args = ap.parse_args()
    candidates = None if args.candidates == "all" else int(args.candidates)
    lex = default_lexicon()
    puzzles = load_puzzles(default_data())
    task = Crosswords(lex, candidates=candidates)
    s = Settings(search=SearchSettings(method="tot-dfs", generator="enumerate", evaluator="oracle"),
                 budget=Budget(steps=100))
    groups = {"test": [i for i in TEST_INDICES if i <= len(puzzles)]}
    if not args.test_only:
        groups["other in-lexicon"] = [i for i in range(1, len(puzzles) + 1) if i not in TEST_INDICES
                                      and all(w in lex for w in puzzles[i - 1].words())]
    for name, indices in groups.items():
        solved, secs, in_lex = 0, [], 0
        for i in indices:
            p = puzzles[i - 1]
            all_in = all(w in lex for w in p.words())
            in_lex += all_in
            t0 = time.perf_counter()
            res = asyncio.run(solve(task, p.text(), s, None, Trace()))
            secs.append(time.perf_counter() - t0)
            ok = res.answer is not None and res.answer == p.answer
            solved += ok
            if all_in and not ok:
                print(f"  puzzle {i}: answers all in the lexicon but not solved ({res.stopped_by}, {res.limit})")
        print(f"{name}: {len(indices)} puzzles ({in_lex} with all answers in the lexicon): solved {solved}; "
              f"seconds median {statistics.median(secs):.2f}, worst {max(secs):.2f}")


if __name__ == "__main__":
    main()
