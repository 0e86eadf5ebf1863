"""The one Wilson interval (solver.tools.stats.wilson) against published values and against the
interval solved independently, with sympy, from its defining equation."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.tools.stats import Z95, Proportion, wilson


def _by_sympy(k: int, n: int) -> tuple[float, float]:
    """The Wilson interval is the set of p with n (k/n - p)^2 <= z^2 p (1 - p): solve for its ends."""
    p = sympy.symbols("p", real=True)
    z = sympy.Float(Z95, 30)
    roots = sympy.solve(sympy.Eq(n * (sympy.Rational(k, n) - p) ** 2, z**2 * p * (1 - p)), p)
    lo, hi = sorted(float(r) for r in roots)
    return max(0.0, lo), min(1.0, hi)


# Newcombe (1998), Statistics in Medicine 17:857-872, Table II, method 3 (score interval, no
# continuity correction), to the 4 decimals printed there.
NEWCOMBE = [((81, 263), (0.2553, 0.3662)), ((15, 148), (0.0624, 0.1605)),
            ((0, 20), (0.0, 0.1611)), ((1, 29), (0.0061, 0.1718))]


@pytest.mark.parametrize(("kn", "published"), NEWCOMBE)
def test_wilson_matches_published_values(kn: tuple[int, int], published: tuple[float, float]) -> None:
    lo, hi = wilson(*kn)
    assert lo == pytest.approx(published[0], abs=6e-5) and hi == pytest.approx(published[1], abs=6e-5)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_equals_the_roots_of_its_equation(kn: tuple[int, int]) -> None:
    k, n = kn
    lo, hi = wilson(k, n)
    ref_lo, ref_hi = _by_sympy(k, n)
    assert lo == pytest.approx(ref_lo, abs=1e-9) and hi == pytest.approx(ref_hi, abs=1e-9)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_no_trials_is_the_whole_interval_everywhere() -> None:
    """n = 0: (0, 1), the limit of the bounds as n -> 0 (centre -> 1/2, half-width -> 1/2)."""
    assert wilson(0, 0) == (0.0, 1.0)
    assert Proportion(0, 0).interval == (0.0, 1.0) and Proportion(0, 0).rate is None
    n = 1e-9  # the formula itself, for a vanishing number of trials with no successes
    centre = (Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * (Z95**2 / (4 * n * n)) ** 0.5 / (1 + Z95**2 / n)
    assert (centre - half, centre + half) == pytest.approx((0.0, 1.0), abs=1e-6)
    from solver.tools.report import summarize

    [s] = summarize([{"task": "t", "id": "1", "method": "io", "status": "error"}])  # no finished pair
    assert (s.n, s.lo, s.hi) == (0, 0.0, 1.0)


def test_bad_counts_are_refused() -> None:
    for k, n in ((4, 3), (-1, 3), (0, -1)):
        with pytest.raises(ValueError):
            wilson(k, n)
