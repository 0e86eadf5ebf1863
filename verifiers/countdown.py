"""Exact layer for Countdown: reach a whole target from a handful of numbers with + - * /.

Two rule variants, chosen by ``rules``:

- ``"once"`` (the default; TinyZero's, reasoning-gym's and Game of 24's rule): one expression
  using every number exactly once; intermediate results are any rationals (negative, fractional).
  Game of 24 is this rule with four numbers and 24.
- ``"television"`` (the television show's rules): any subset of the numbers, each at most once,
  and every intermediate result a positive whole number.

What is here: the answer check (``report_answer``: one named check per rule, reading the answer
with Game of 24's whitelist parser ``verifiers.arithmetic.parse_expression``; nothing is
evaluated as code), the step form Game of 24 uses (``a op b = c (left: ...)``: ``check_step``,
``legal_steps``, ``step_text``), the exact oracle (``solvable``, a witness with ``solve``, the
fewest remaining steps with ``distance``) and a seeded puzzle generator (``generate``).

The oracle works on sorted multisets, memoised: for a multiset of at most four numbers it
builds every value the multiset makes (each number used once, or under television rules every
intermediate a positive whole number); for a larger one it splits the multiset into two parts in
every way and inverts the last operation (x op y = t), so it asks the smaller part for its values
and the larger part only whether it reaches each value y that would finish the job. Rationals are
(numerator, denominator) pairs in lowest terms, as in Game of 24's oracle, whose helpers it shares.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from itertools import combinations
from typing import Iterable, Literal, Sequence, TypeVar

from verifiers.arithmetic import FORM_CHECK, Policy, Step, _combine, _norm, _q, format_number, parse_expression
from verifiers.arithmetic import check_step as _check_step_once
from verifiers.arithmetic import legal_steps as _legal_steps_once
from verifiers.report import AnswerReport, Check, as_invalid
from verifiers.verdict import Invalid

__all__ = ["FORM_CHECK", "MAX_NUMBER", "MAX_NUMBERS", "MAX_TARGET", "RULES", "TELEVISION_POOL", "Puzzle", "Rules",
           "Solution", "after_step", "check_step", "clear_caches", "distance", "generate", "is_solved",
           "legal_step_texts", "legal_steps", "parse_numbers", "parse_target", "report_answer", "rules_text",
           "solvable", "solve", "step_text", "verify_answer"]

Rules = Literal["once", "television"]
RULES: tuple[Rules, ...] = ("once", "television")
MAX_NUMBERS = 7  # source numbers in one puzzle (docs/countdown.md: the oracle's time up to 7)
MAX_NUMBER = 1000  # largest source number
MAX_TARGET = 999_999  # largest target (the answer's stated result is read up to six digits)
# The television show's pool: two each of 1 to 10, one each of 25, 50, 75 and 100.
TELEVISION_POOL: tuple[int, ...] = tuple(sorted([n for n in range(1, 11) for _ in range(2)] + [25, 50, 75, 100]))

_SMALL = 4  # value sets are built for multisets of at most this many numbers; larger ones are split


def _check_rules(rules: str) -> Rules:
    if rules not in RULES:
        raise ValueError(f"unknown Countdown rules {rules!r}: choose one of {', '.join(RULES)}")
    return rules  # type: ignore[return-value]


# ---- the puzzle ----------------------------------------------------------------------------

def parse_numbers(text: str) -> tuple[int, ...]:
    """1 to 7 whole numbers 1..1000 separated by spaces or commas (``"25 50 75 100 3 6"``);
    ValueError with a one-line reason."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError('empty puzzle: give the numbers, e.g. "25 50 75 100 3 6"')
    if len(text) > 200:
        raise ValueError("a Countdown puzzle's numbers are longer than 200 characters")
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if len(parts) > MAX_NUMBERS:
        raise ValueError(f"a Countdown puzzle has at most {MAX_NUMBERS} numbers; got {len(parts)}")
    nums = []
    for p in parts:
        if not re.fullmatch(r"[0-9]{1,4}", p, re.ASCII) or not 1 <= int(p) <= MAX_NUMBER:
            raise ValueError(f"{p[:20]!r} is not a whole number between 1 and {MAX_NUMBER}")
        nums.append(int(p))
    return tuple(nums)


def parse_target(text: str | int) -> int:
    """A whole target 0..999999; ValueError with a one-line reason."""
    if isinstance(text, bool):
        raise ValueError("the target is a whole number")
    if isinstance(text, int):
        value = text
    elif isinstance(text, str) and re.fullmatch(r"\s*[0-9]{1,6}\s*", text, re.ASCII):
        value = int(text)
    else:
        raise ValueError(f"the target {str(text)[:20]!r} is not a whole number between 0 and {MAX_TARGET}")
    if not 0 <= value <= MAX_TARGET:
        raise ValueError(f"the target {value} is not between 0 and {MAX_TARGET}")
    return value


def rules_text(numbers: Sequence[int | Fraction], target: int, rules: Rules = "once") -> str:
    """The rule set an answer is checked under, in words."""
    shown = " ".join(format_number(Fraction(n)) for n in numbers)
    if _check_rules(rules) == "once":
        return (f"Countdown, each number once: one expression using each of the numbers {shown} exactly once, "
                f"with + - * / and brackets, equal to {target} exactly")
    return (f"Countdown, television rules: one expression using some of the numbers {shown}, each at most once, "
            f"with + - * / and brackets, every intermediate result a positive whole number, equal to {target}")


# ---- final answers -------------------------------------------------------------------------

def report_answer(numbers: Iterable[int | Fraction], answer: str, target: int,
                  rules: Rules = "once") -> AnswerReport:
    """Every exact check of a final expression, each named: well-formed under the whitelist;
    the numbers it uses (each exactly once, or under television rules each at most as often as
    the puzzle has it); under television rules every intermediate result a positive whole
    number (a unary minus is an intermediate result too); the value exactly ``target``. The
    answer is read whole: text around the expression, a power or a factorial make it no answer."""
    rules = _check_rules(rules)
    puzzle = [Fraction(n) for n in numbers]
    title = rules_text(puzzle, target, rules)
    parsed = parse_expression(answer, target)
    if isinstance(parsed, Invalid):
        return AnswerReport(title, (Check(FORM_CHECK, False, parsed.reason),))
    want, got = Counter(puzzle), Counter(parsed.leaves)
    used = " ".join(format_number(n) for n in parsed.leaves)
    need = " ".join(format_number(n) for n in sorted(want.elements()))
    checks = [Check(FORM_CHECK, True)]
    if rules == "once":
        ok = got == want
        checks.append(Check("uses each puzzle number exactly once", ok,
                            f"[{used}]" if ok else f"uses numbers [{used}] but the puzzle has [{need}]"))
    else:
        extra = got - want
        ok = not extra
        detail = f"[{used}] of [{need}]" if ok else (
            f"uses {' '.join(format_number(n) for n in sorted(extra.elements()))} more often than the puzzle "
            f"has it: uses [{used}], the puzzle has [{need}]")
        checks.append(Check("uses only puzzle numbers, each at most as often as given", ok, detail))
        bad = next((op for op in parsed.operations if op.result <= 0 or op.result.denominator != 1), None)
        checks.append(Check("every intermediate result is a positive whole number", bad is None,
                            _count(len(parsed.operations), "operation") if bad is None
                            else f"{bad.text()} is not a positive whole number"))
    value = parsed.value
    checks.append(Check(f"equals {target} exactly", value == target,
                        f"= {format_number(value)}" if value == target
                        else f"evaluates to {format_number(value)}, not {target}"))
    return AnswerReport(title, tuple(checks))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def verify_answer(numbers: Iterable[int | Fraction], answer: str, target: int,
                  rules: Rules = "once") -> Invalid | Fraction:
    """The exact value (the target) when every check of ``report_answer`` passes, else
    ``Invalid`` with the first failed check's reason."""
    problem = as_invalid(report_answer(numbers, answer, target, rules))
    return Fraction(target) if problem is None else problem


# ---- steps ---------------------------------------------------------------------------------

def legal_steps(numbers: tuple[Fraction, ...], rules: Rules = "once") -> list[tuple[int, int, str, Fraction]]:
    """Every legal ``numbers[i] op numbers[j]`` as ``(i, j, op, result)``, without duplicates:
    under ``once`` every defined one (Game of 24's enumeration); under television rules only
    those whose result is a positive whole number."""
    steps = _legal_steps_once(numbers)
    if _check_rules(rules) == "once":
        return steps
    return [s for s in steps if s[3] > 0 and s[3].denominator == 1]


def after_step(numbers: tuple[Fraction, ...], i: int, j: int, result: Fraction) -> tuple[Fraction, ...]:
    """The numbers left after combining ``numbers[i]`` and ``numbers[j]`` into ``result``, sorted."""
    return tuple(sorted([n for k, n in enumerate(numbers) if k not in (i, j)] + [result]))


def step_text(numbers: tuple[Fraction, ...], i: int, j: int, op: str, result: Fraction) -> str:
    """A step in the gate's form: ``a op b = c (left: ...)``, the left list sorted."""
    left = " ".join(format_number(n) for n in after_step(numbers, i, j, result))
    return f"{format_number(numbers[i])} {op} {format_number(numbers[j])} = {format_number(result)} (left: {left})"


def legal_step_texts(numbers: tuple[Fraction, ...], rules: Rules = "once") -> list[str]:
    """Every legal step, written as ``step_text`` writes it."""
    return [step_text(numbers, i, j, op, r) for i, j, op, r in legal_steps(numbers, rules)]


def check_step(numbers: tuple[Fraction, ...], text: str, rules: Rules = "once",
               policy: Policy = "reject") -> Step | Invalid:
    """Check one step ``a op b = c (left: ...)`` against the numbers still available, exactly
    (Game of 24's step check, ``policy`` as there); under television rules the result must also
    be a positive whole number, whatever the policy."""
    step = _check_step_once(numbers, text, policy)
    if isinstance(step, Invalid) or _check_rules(rules) == "once":
        return step
    r = step.result
    if r <= 0 or r.denominator != 1:
        a, b = numbers[step.i], numbers[step.j]
        return Invalid(f"{format_number(a)} {step.op} {format_number(b)} = {format_number(r)}: under television "
                       "rules every result is a positive whole number")
    return step


def is_solved(numbers: Iterable[Fraction | int], target: int, rules: Rules = "once") -> bool:
    """``once``: the target is the one number left; television rules: the target is among the numbers."""
    nums = [Fraction(n) for n in numbers]
    if _check_rules(rules) == "once":
        return len(nums) == 1 and nums[0] == target
    return Fraction(target) in nums


# ---- the oracle ----------------------------------------------------------------------------

_Q = tuple[int, int]
_ZERO: _Q = (0, 1)
T = TypeVar("T")


@cache
def _split_indices(n: int) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Each split of n positions into two non-empty parts, once (the first part holds position 0)."""
    out = []
    for mask in range(1, (1 << n) - 1, 2):
        out.append((tuple(i for i in range(n) if mask >> i & 1), tuple(i for i in range(n) if not mask >> i & 1)))
    return tuple(out)


def _splits(ms: tuple[T, ...]) -> list[tuple[tuple[T, ...], tuple[T, ...]]]:
    """Unordered splits of a sorted multiset into (smaller, larger) sorted parts, without repeats."""
    seen = set()
    out = []
    for ia, ib in _split_indices(len(ms)):
        a, b = tuple(ms[i] for i in ia), tuple(ms[i] for i in ib)
        small, big = (a, b) if len(a) <= len(b) else (b, a)
        if (small, big) not in seen:
            seen.add((small, big))
            out.append((small, big))
    return out


# Each number exactly once: rationals.

@lru_cache(maxsize=512)
def _values_once(ms: tuple[_Q, ...]) -> frozenset[_Q]:
    """Every value the sorted multiset makes, each number used once (at most ``_SMALL`` numbers)."""
    if len(ms) == 1:
        return frozenset(ms)
    out: set[_Q] = set()
    for a, b in _splits(ms):
        out |= _combine(_values_once(a), _values_once(b))
    return frozenset(out)


def _inverse_once(x: _Q, t: _Q) -> list[tuple[_Q, str, bool]]:
    """Each y with ``x op y = t`` (x first) or ``y op x = t`` (y first): (y, op, x_first). The
    case x = 0, t = 0 of ``0 * y`` (any y) is left to the caller."""
    a, b = x
    tn, td = t
    out = [(_norm(tn * b - a * td, td * b), "+", True),   # x + y = t
           (_norm(a * td - tn * b, b * td), "-", True),   # x - y = t
           (_norm(tn * b + a * td, td * b), "-", False)]  # y - x = t
    if a:
        out.append((_norm(tn * b, td * a), "*", True))  # x * y = t
        out.append((_norm(tn * a, td * b), "/", False))  # y / x = t
        if tn:
            out.append((_norm(a * td, b * tn), "/", True))  # x / y = t
    return out


def _needs_once(xs: frozenset[_Q], t: _Q) -> set[_Q]:
    return {y for x in xs for y, _op, _first in _inverse_once(x, t)}


@lru_cache(maxsize=1 << 16)
def _reach_once(ms: tuple[_Q, ...], t: _Q) -> bool:
    if len(ms) <= _SMALL:
        return t in _values_once(ms)
    for small, big in _splits(ms):
        xs = _values_once(small)
        if t == _ZERO and _ZERO in xs:
            return True  # 0 * (whatever the rest makes)
        needs = _needs_once(xs, t)
        if len(big) <= _SMALL:
            if not needs.isdisjoint(_values_once(big)):
                return True
        elif any(_reach_once(big, y) for y in needs):
            return True
    return False


# Television rules: positive whole numbers.

def _combine_tv(xs: frozenset[int], ys: frozenset[int]) -> set[int]:
    out: set[int] = set()
    add = out.add
    for a in xs:
        for c in ys:
            add(a + c)
            add(a * c)
            if a != c:
                add(a - c if a > c else c - a)
            if a % c == 0:
                add(a // c)
            if c % a == 0:
                add(c // a)
    return out


@lru_cache(maxsize=4096)
def _values_tv(ms: tuple[int, ...]) -> frozenset[int]:
    """Every value the sorted multiset makes using all of it, every intermediate a positive whole number."""
    if len(ms) == 1:
        return frozenset(ms)
    out: set[int] = set()
    for a, b in _splits(ms):
        out |= _combine_tv(_values_tv(a), _values_tv(b))
    return frozenset(out)


def _inverse_tv(x: int, t: int) -> list[tuple[int, str, bool]]:
    out = [(t + x, "-", False)]  # y - x = t
    if t > x:
        out.append((t - x, "+", True))  # x + y = t
    if x > t:
        out.append((x - t, "-", True))  # x - y = t
    if t % x == 0:
        out.append((t // x, "*", True))  # x * y = t
    if x % t == 0:
        out.append((x // t, "/", True))  # x / y = t
    out.append((t * x, "/", False))  # y / x = t
    return out


def _needs_tv(xs: frozenset[int], t: int) -> set[int]:
    return {y for x in xs for y, _op, _first in _inverse_tv(x, t)}


@lru_cache(maxsize=1 << 16)
def _reach_tv(ms: tuple[int, ...], t: int) -> bool:
    """Does the whole multiset make ``t`` (every intermediate a positive whole number)?"""
    if len(ms) <= _SMALL:
        return t in _values_tv(ms)
    for small, big in _splits(ms):
        needs = _needs_tv(_values_tv(small), t)
        if len(big) <= _SMALL:
            if not needs.isdisjoint(_values_tv(big)):
                return True
        elif any(_reach_tv(big, y) for y in needs):
            return True
    return False


def _tv_key(numbers: Iterable[Fraction | int]) -> tuple[int, ...]:
    out = []
    for n in numbers:
        f = Fraction(n)
        if f <= 0 or f.denominator != 1:
            raise ValueError(f"under television rules every number is a positive whole number, not {format_number(f)}")
        out.append(int(f))
    return tuple(sorted(out))


def _tv_subsets(ms: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
    """Distinct sub-multisets, smallest first."""
    for k in range(1, len(ms) + 1):
        yield from sorted(set(combinations(ms, k)))


def _key(numbers: Iterable[Fraction | int]) -> tuple[_Q, ...]:
    ms = tuple(sorted(_q(n) for n in numbers))
    if len(ms) > MAX_NUMBERS:
        raise ValueError(f"the oracle takes at most {MAX_NUMBERS} numbers; got {len(ms)}")
    return ms


def solvable(numbers: Iterable[Fraction | int], target: int | Fraction, rules: Rules = "once") -> bool:
    """Exact oracle: can ``numbers`` make ``target`` under ``rules``?"""
    return distance(numbers, target, rules) is not None


def distance(numbers: Iterable[Fraction | int], target: int | Fraction, rules: Rules = "once") -> int | None:
    """The fewest steps left to a solution, or None when there is none: under ``once`` every
    solution takes one step per number but one; under television rules the smallest subset that
    makes the target, less one (0 when the target is already among the numbers)."""
    ms = _key(numbers)
    if not ms:
        return None
    if _check_rules(rules) == "once":
        return len(ms) - 1 if _reach_once(ms, _q(Fraction(target))) else None
    t = Fraction(target)
    if t <= 0 or t.denominator != 1:
        return None
    tv = _tv_key(Fraction(n, d) for n, d in ms)
    for sub in _tv_subsets(tv):
        if _reach_tv(sub, int(t)):
            return len(sub) - 1
    return None


@dataclass(frozen=True, slots=True)
class Solution:
    """A witness: the expression (over the numbers given) and its steps in the gate's form."""

    expression: str
    steps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Tree:
    value: Fraction
    op: str = ""
    left: _Tree | None = None
    right: _Tree | None = None

    def text(self, top: bool = True) -> str:
        if self.left is None or self.right is None:
            s = format_number(self.value)
            return s if top or re.fullmatch(r"[0-9]+", s) else f"({s})"
        s = f"{self.left.text(False)} {self.op} {self.right.text(False)}"
        return s if top else f"({s})"


def _node(left: _Tree, op: str, right: _Tree) -> _Tree:
    a, b = left.value, right.value
    value = a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b
    return _Tree(value, op, left, right)


def _witness_once(ms: tuple[_Q, ...], t: _Q) -> _Tree:
    if len(ms) == 1:
        return _Tree(Fraction(*ms[0]))
    for small, big in _splits(ms):
        for x in sorted(_values_once(small)):
            if t == _ZERO and x == _ZERO:
                rest = _Tree(Fraction(*big[0]))
                for n in big[1:]:
                    rest = _node(rest, "+", _Tree(Fraction(*n)))
                return _node(_witness_once(small, x), "*", rest)
            for y, op, x_first in _inverse_once(x, t):
                if _reach_once(big, y):
                    xt, yt = _witness_once(small, x), _witness_once(big, y)
                    return _node(xt, op, yt) if x_first else _node(yt, op, xt)
    raise AssertionError("no witness for a multiset the oracle found solvable")


def _witness_tv(ms: tuple[int, ...], t: int) -> _Tree:
    if len(ms) == 1:
        return _Tree(Fraction(ms[0]))
    for small, big in _splits(ms):
        for x in sorted(_values_tv(small)):
            for y, op, x_first in _inverse_tv(x, t):
                if _reach_tv(big, y):
                    xt, yt = _witness_tv(small, x), _witness_tv(big, y)
                    return _node(xt, op, yt) if x_first else _node(yt, op, xt)
    raise AssertionError("no witness for a multiset the oracle found solvable")


def _steps(numbers: list[Fraction], tree: _Tree) -> list[str]:
    pool = sorted(numbers)
    out: list[str] = []

    def walk(node: _Tree) -> None:
        if node.left is None or node.right is None:
            return
        walk(node.left)
        walk(node.right)
        a, b = node.left.value, node.right.value
        if node.op in "+*" and b < a:
            a, b = b, a  # as ``legal_steps`` writes it: the smaller operand first
        pool.remove(a)
        pool.remove(b)
        pool.append(node.value)
        pool.sort()
        out.append(f"{format_number(a)} {node.op} {format_number(b)} = {format_number(node.value)} "
                   f"(left: {' '.join(format_number(n) for n in pool)})")

    walk(tree)
    return out


def solve(numbers: Iterable[Fraction | int], target: int | Fraction, rules: Rules = "once") -> Solution | None:
    """A witness (under television rules one with the fewest steps), or None when there is none."""
    nums = [Fraction(n) for n in numbers]
    steps = distance(nums, target, rules)
    if steps is None:
        return None
    t = Fraction(target)
    if rules == "once":
        tree = _witness_once(_key(nums), _q(t))
    else:
        tv = _tv_key(nums)
        sub = next(s for s in _tv_subsets(tv) if len(s) == steps + 1 and _reach_tv(s, int(t)))
        tree = _witness_tv(sub, int(t))
    return Solution(tree.text(), tuple(_steps(nums, tree)))


def clear_caches() -> None:
    """Forget every memoised multiset (for cold timings, and to give back their memory)."""
    for f in (_values_once, _reach_once, _values_tv, _reach_tv):
        f.cache_clear()


# ---- puzzles -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Puzzle:
    """Source numbers (in the order drawn) and a whole target."""

    numbers: tuple[int, ...]
    target: int

    def text(self) -> str:
        return " ".join(str(n) for n in self.numbers)

    def to_json(self) -> dict[str, object]:
        return {"numbers": list(self.numbers), "target": self.target}


def generate(count: int, seed: int, *, size: int | tuple[int, int] = 6,
             pool: Sequence[int] | None = TELEVISION_POOL, number_range: tuple[int, int] = (1, 100),
             large: int | None = None, targets: tuple[int, int] = (100, 999), rules: Rules = "once",
             solvable_only: bool | None = None, max_tries: int = 1000) -> list[Puzzle]:
    """``count`` puzzles, the same for the same arguments.

    Numbers: ``size`` of them (or a size drawn from an inclusive range), drawn without
    replacement from ``pool`` (default the television pool; with ``large`` given, exactly that
    many of the pool's numbers above 10), or, with ``pool=None``, uniformly from the inclusive
    ``number_range`` with replacement. The target is uniform in the inclusive ``targets``.
    ``solvable_only``: True keeps only puzzles solvable under ``rules``, False only unsolvable
    ones, None both; at most ``max_tries`` draws per puzzle, then ValueError.
    """
    rules = _check_rules(rules)
    lo_t, hi_t = targets
    if not 0 <= lo_t <= hi_t <= MAX_TARGET:
        raise ValueError(f"targets must satisfy 0 <= low <= high <= {MAX_TARGET}")
    lo_s, hi_s = (size, size) if isinstance(size, int) else size
    if not 1 <= lo_s <= hi_s <= MAX_NUMBERS:
        raise ValueError(f"sizes must be between 1 and {MAX_NUMBERS}")
    rng = random.Random(seed)
    small_pool = [n for n in pool if n <= 10] if pool is not None else []
    large_pool = [n for n in pool if n > 10] if pool is not None else []
    if pool is not None:
        if any(not 1 <= n <= MAX_NUMBER for n in pool) or len(pool) < hi_s:
            raise ValueError(f"the pool needs at least {hi_s} numbers, each between 1 and {MAX_NUMBER}")
        if large is not None and not (0 <= large <= min(lo_s, len(large_pool)) and hi_s - large <= len(small_pool)):
            raise ValueError(f"cannot draw {large} large numbers (above 10) from this pool for sizes {lo_s}-{hi_s}")
    elif not 1 <= number_range[0] <= number_range[1] <= MAX_NUMBER:
        raise ValueError(f"number_range must satisfy 1 <= low <= high <= {MAX_NUMBER}")
    out = []
    for _ in range(count):
        for _try in range(max_tries):
            n = rng.randint(lo_s, hi_s)
            if pool is None:
                nums = [rng.randint(*number_range) for _ in range(n)]
            elif large is None:
                nums = rng.sample(list(pool), n)
            else:
                nums = rng.sample(large_pool, large) + rng.sample(small_pool, n - large)
            puzzle = Puzzle(tuple(nums), rng.randint(lo_t, hi_t))
            if solvable_only is None or solvable(puzzle.numbers, puzzle.target, rules) == solvable_only:
                out.append(puzzle)
                break
        else:
            raise ValueError(f"no puzzle with solvable={solvable_only} in {max_tries} draws")
    return out
