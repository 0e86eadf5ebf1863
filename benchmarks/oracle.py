"""Time the exact Game-of-24 oracle on all 1,820 four-number multisets of 1..13: the fast
memoised oracle (``can_reach``) against the plain exhaustive search, side by side, cold caches."""

from __future__ import annotations

import time

from tasks.game24.data import all_multisets
from verifiers import arithmetic
from verifiers.arithmetic import can_reach, can_reach_exhaustive


def _clear() -> None:
    for name in ("_solvable_sorted", "_values", "_needs", "_reaches"):
        fn = getattr(arithmetic, name, None)
        if fn is not None and hasattr(fn, "cache_clear"):
            fn.cache_clear()


def main() -> None:
    ms = all_multisets()
    rows = []
    for label, fn in (("fast (can_reach)", can_reach), ("exhaustive", can_reach_exhaustive)):
        _clear()
        t0 = time.perf_counter()
        solvable = sum(fn(m) for m in ms)
        rows.append((label, solvable, time.perf_counter() - t0))
    for label, solvable, secs in rows:
        print(f"{label:18} multisets {len(ms)}  solvable {solvable}  cold {secs:.3f} s")
    print(f"speed-up: {rows[1][2] / rows[0][2]:.0f}x")


if __name__ == "__main__":
    main()
