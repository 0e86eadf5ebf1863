"""The fast Game-of-24 oracle against the plain exhaustive search, on every puzzle and on fractions.
Both live in verifiers/arithmetic.py, so each is also checked against the sympy reference
(tests/references.py)."""

from fractions import Fraction as F

from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.game24.data import all_multisets
from tests.profiles import examples
from tests.references import sym, sym_reaches, sym_values
from verifiers.arithmetic import can_reach, can_reach_exhaustive


def test_fast_oracle_agrees_on_all_1820_multisets():
    multisets = all_multisets()
    assert len(multisets) == 1820
    fast = [can_reach(m) for m in multisets]
    plain = [can_reach_exhaustive(m) for m in multisets]
    assert fast == plain == [sym_reaches(m) for m in multisets]
    assert sum(fast) == 1362


def test_fast_oracle_known_cases():
    assert can_reach([3, 3, 8, 8])  # 8 / (3 - 8/3)
    assert can_reach([1, 5, 5, 5])  # (5 - 1/5) * 5
    assert not can_reach([1, 1, 1, 1])
    assert can_reach([F(8, 3), 9]) and can_reach([F(-4), F(-6)])
    assert not can_reach([])
    assert can_reach([0, 0], target=0) and not can_reach([0], target=24)
    assert not can_reach([0, 0, 24], target=12)  # 24 / 0 is undefined, 0 / 0 too


rationals = st.builds(F, st.integers(-13, 13), st.integers(1, 6))


@settings(max_examples=examples(250), deadline=None)
@given(st.lists(rationals, min_size=1, max_size=4), st.integers(-30, 30))
def test_fast_oracle_agrees_on_fractions_and_targets(numbers, target):
    want = sym(target) in sym_values(tuple(sorted(sym((n.numerator, n.denominator)) for n in numbers)))
    assert can_reach(numbers, target) == can_reach_exhaustive(numbers, target) == want


@settings(max_examples=examples(8), deadline=None)
@given(st.lists(st.integers(0, 13), min_size=5, max_size=5), st.sampled_from([24, 7, -3, 100]))
def test_fast_oracle_agrees_on_five_numbers(numbers, target):
    assert can_reach(numbers, target) == can_reach_exhaustive(numbers, target)
