"""The project's statistics, one implementation each: proportions with 95% Wilson score
intervals (``wilson``, ``Proportion``), the normal-approximation interval of a mean
(``mean_interval``) and the median with the 90th percentile by nearest rank (``quantiles``).

The one Wilson interval: ``tot bench`` tables and figures, the soft-score table and
``tot audit`` all call :func:`wilson` here.

With no trials (``n = 0``) the interval is the whole of [0, 1]: nothing was observed, so every
rate is possible. It is also the limit of the Wilson bounds as ``n`` goes to 0 (the centre tends
to 1/2 and the half-width to 1/2), so the function is continuous in the sense that matters for
pooled tables; the rate itself is undefined (``Proportion.rate`` is None, ``text`` prints ``-``).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal


@dataclass(frozen=True, slots=True)
class Proportion:
    """``k`` successes out of ``n`` trials, with the Wilson score interval at 95%.

    Wilson rather than the normal approximation because audit counts are often small and
    rates near 0 or 1, where the normal interval leaves [0, 1] or collapses to a point.
    """

    k: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.k, self.n)

    def as_dict(self) -> dict[str, float | int | None]:
        low, high = self.interval
        return {"k": self.k, "n": self.n, "rate": self.rate, "low": low, "high": high}

    def text(self, digits: int = 1) -> str:
        """``12.5% [4.1-30.2] (2/16)``, or ``- (0/0)`` when there were no trials."""
        if not self.n:
            return "- (0/0)"
        lo, hi = wilson(self.k, self.n)
        return f"{100 * self.k / self.n:.{digits}f}% [{100 * lo:.{digits}f}-{100 * hi:.{digits}f}] ({self.k}/{self.n})"


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval (95% by default) for ``k`` successes of ``n`` trials; the whole
    interval (0.0, 1.0) when ``n`` is 0 (see the module notes)."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # Clamp rounding noise: the exact bounds are 0 when k == 0 and 1 when k == n.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def mean_interval(xs: list[float]) -> tuple[float, float, float] | None:
    """(mean, low, high): the normal-approximation 95% interval of the mean (None for no data;
    the interval is the mean itself for one value)."""
    if not xs:
        return None
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, m, m
    half = Z95 * statistics.stdev(xs) / math.sqrt(len(xs))
    return m, m - half, m + half


def quantiles(values: list[float]) -> tuple[float, float]:
    """(median, 90th percentile by nearest rank) of per-puzzle values; (0, 0) when empty."""
    if not values:
        return 0.0, 0.0
    xs = sorted(float(v) for v in values)
    return float(statistics.median(xs)), xs[max(0, math.ceil(0.9 * len(xs)) - 1)]
