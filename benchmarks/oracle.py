"""Time the exact Game-of-24 oracle on all 1,820 four-number multisets of 1..13."""

from __future__ import annotations

import time

from tasks.game24.data import all_multisets
from verifiers.arithmetic import _solvable_sorted, can_reach


def main() -> None:
    ms = all_multisets()
    _solvable_sorted.cache_clear()
    t0 = time.perf_counter()
    solvable = sum(can_reach(m) for m in ms)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    sum(can_reach(m) for m in ms)
    warm = time.perf_counter() - t0
    print(f"multisets: {len(ms)}, solvable: {solvable}, cold: {cold:.3f} s, warm (memoized): {warm:.4f} s")


if __name__ == "__main__":
    main()
