"""Lexicon pattern queries and 5x5 crossword fillability checks on partial fills of real answers."""

from __future__ import annotations

import random
import statistics
import time

from perf_row import Row


def bench_lexicon(queries: int = 2000, states: int = 200) -> list[Row]:
    try:
        from lexicon import default_lexicon
        from tasks.crosswords.data import load_puzzles
        from verifiers.crossword import EMPTY, LAYOUT_5X5, Grid, fillability
    except ImportError as exc:
        return [Row("lexicon", "pattern queries, fillability", "n/a", "", "", f"not available yet: {exc}")]
    built_before = default_lexicon.cache_info().currsize > 0
    t0 = time.perf_counter()
    lex = default_lexicon()
    idx = lex.index(5)
    build = time.perf_counter() - t0
    rng = random.Random(0)
    # Patterns as crossword search meets them: 5-letter words with 1 to 4 letters known.
    words = [idx.words[rng.randrange(idx.size)] for _ in range(queries)]
    pats = []
    for w in words:
        known = set(rng.sample(range(5), rng.randint(1, 4)))
        pats.append("".join(ch if i in known else "?" for i, ch in enumerate(w)))
    t0 = time.perf_counter()
    hits = sum(idx.indices(p).size for p in pats)
    t_idx = (time.perf_counter() - t0) / len(pats)
    t0 = time.perf_counter()
    for p in pats:
        lex.match(p, limit=10)
    t_match = (time.perf_counter() - t0) / len(pats)
    rows = [Row("lexicon", "build the default lexicon + 5-letter index", round(build, 2), "s", "",
                f"{idx.size} five-letter words; once per process"
                + ("; already built earlier in this run" if built_before else "")),
            Row("lexicon", "pattern query (indices of all matches)", round(t_idx * 1000, 4), "ms (mean)", "< 0.1 ms",
                f"{len(pats)} patterns with 1-4 known letters; {hits / len(pats):.0f} matches on average"),
            Row("lexicon", "pattern query, top 10 words", round(t_match * 1000, 4), "ms (mean)", "< 0.1 ms")]
    # Partial fills of the real puzzles' answer boards: 5 to 20 of the 25 cells known.
    boards = [pz.answer for pz in load_puzzles() if pz.answer]
    grids = []
    for _ in range(states):
        b = list(rng.choice(boards))
        for c in rng.sample(range(25), rng.randint(5, 20)):
            b[c] = EMPTY
        grids.append(Grid(LAYOUT_5X5, "".join(b)))
    for level in ("slots", "arc", "full"):
        per = []
        verdicts = {True: 0, False: 0, None: 0}
        for g in grids:
            t0 = time.perf_counter_ns()
            res = fillability(g, lex, level)  # type: ignore[arg-type]
            per.append(time.perf_counter_ns() - t0)
            verdicts[res.ok] += 1
        rows.append(Row("lexicon", f"5x5 fillability check, level {level}", round(statistics.median(per) / 1e6, 3),
                        "ms (median)", "< 5 ms" if level == "arc" else "",
                        f"{len(grids)} partial fills; mean {statistics.mean(per) / 1e6:.2f} ms, "
                        f"max {max(per) / 1e6:.1f} ms; fillable {verdicts[True]}, not {verdicts[False]}, "
                        f"unknown {verdicts[None]}"))
    return rows
