"""Exact rational arithmetic for Game of 24: step parsing, step checking, answer checking, oracle.

Model text is only ever tokenised and parsed under a whitelist; it is never evaluated.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from math import gcd
from operator import itemgetter
from typing import Callable, Iterable, Literal

from verifiers.answers import Found, find_answer
from verifiers.report import AnswerReport, Check, as_invalid
from verifiers.verdict import Invalid

__all__ = ["FORM_CHECK", "MAX_ANSWER_CHARS", "MAX_NUMBER_CHARS", "MAX_PAREN_DEPTH", "MAX_PUZZLE_NUMBER", "Expression",
           "Operation", "Policy", "RULES_24", "Step", "apply_op", "can_reach", "can_reach_exhaustive", "check_step",
           "format_number", "legal_steps", "parse_expression", "parse_number", "parse_puzzle", "parse_step",
           "before_answer_line", "read_expression", "report_answer", "stated_answer", "unbracket", "verify_answer",
           "wrap"]

Policy = Literal["reject", "repair"]
MAX_NUMBER_CHARS = 24
MAX_ANSWER_CHARS = 300
MAX_PAREN_DEPTH = 40

# Operator spellings people and models write, mapped to the four canonical ones: the minus sign
# and dashes (U+2212, en dash, figure dash, small and fullwidth hyphen-minus), times (x, the
# multiplication sign, middle and dot operators, asterisk operator), divided by (the division
# sign and slash, the colon).
_OPS = {"+": "+", "-": "-", "\u2212": "-", "\u2013": "-", "\u2012": "-", "\ufe63": "-", "\uff0d": "-",
        "*": "*", "\u00d7": "*", "x": "*", "X": "*", "\u22c5": "*", "\u00b7": "*", "\u2217": "*",
        "/": "/", "\u00f7": "/", "\u2215": "/", ":": "/"}
# ASCII digits only: ``\d`` (and ``int``/``Fraction``) would also take other scripts' digits.
_NUM = r"-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+(?:\.[0-9]+)?)?"
_OP = r"[+\-\u2212\u2013\u2012\ufe63\uff0d*\u00d7xX\u22c5\u00b7\u2217/\u00f7\u2215:]"
_STEP_RE = re.compile(
    rf"^\s*(?P<a>{_NUM})\s*(?P<op>{_OP})\s*(?P<b>{_NUM})\s*=\s*(?P<c>{_NUM})"
    r"\s*(?:\(\s*left\s*:?\s*(?P<left>[^()]*)\)\s*)?[.,;]?\s*$", re.ASCII
)


def parse_number(text: str) -> Fraction:
    """Parse ``12``, ``-5``, ``2.5`` or ``8/3`` exactly; raise ValueError otherwise."""
    text = text.strip().replace("\u2212", "-")
    if not text or len(text) > MAX_NUMBER_CHARS or not re.fullmatch(_NUM, text, re.ASCII):
        raise ValueError(f"not a number: {text[:30]!r}")
    if "/" in text:
        num, den = text.split("/", 1)
        d = Fraction(den)
        if d == 0:
            raise ValueError(f"zero denominator in {text!r}")
        return Fraction(num) / d
    return Fraction(text)


def format_number(value: Fraction) -> str:
    """Canonical text of an exact number: ``5``, ``-5`` or ``8/3``."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def apply_op(a: Fraction, op: str, b: Fraction) -> Fraction | None:
    """Exact ``a op b``; None for division by zero."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return None if b == 0 else a / b
    raise ValueError(f"unknown operator {op!r}")


@dataclass(frozen=True, slots=True)
class Step:
    """A checked step: operands (by position in the current numbers), operator and result."""

    i: int
    j: int
    op: str
    result: Fraction
    left: tuple[Fraction, ...]
    note: str = ""


def parse_step(text: str) -> tuple[Fraction, str, Fraction, Fraction, tuple[Fraction, ...] | None]:
    """Split ``a op b = c (left: x y z)`` into exact parts; raise ValueError on bad syntax."""
    if len(text) > 200:
        raise ValueError("step text is too long")
    m = _STEP_RE.match(text.replace("\u2212", "-"))
    if not m:
        lhs = text.partition("=")[0]
        if _MULTI_OP_RE.match(lhs.replace("\u2212", "-")):
            raise ValueError(f"a step is one operation on two numbers; {lhs.strip()[:40]!r} writes more than one")
        raise ValueError(f"not of the form 'a op b = c (left: ...)': {text.strip()[:60]!r}")
    for key in ("a", "b", "c"):
        _one_number(m[key])
    a, b, c = parse_number(m["a"]), parse_number(m["b"]), parse_number(m["c"])
    left: tuple[Fraction, ...] | None = None
    if m["left"] is not None:
        parts = [p for p in re.split(r"[\s,]+", m["left"].strip(), flags=re.ASCII) if p]
        left = tuple(parse_number(p) for p in parts)
    return a, _OPS[m["op"]], b, c, left


_MULTI_OP_RE = re.compile(rf"^\s*\(?\s*{_NUM}\s*(?:{_OP}\s*\(?\s*{_NUM}\s*\)?\s*){{2,}}$", re.ASCII)


def _one_number(text: str) -> None:
    """A step's operand or result is one number: a fraction in lowest terms (``8/3``), not an
    operation written as one (``6/2`` is 6 / 2, a second operation inside the step)."""
    if "/" not in text:
        return
    num, den = text.split("/", 1)
    if "." in text or Fraction(den) == 1 or gcd(int(num), int(den)) != 1:
        raise ValueError(f"{text!r} is an operation, not a number of the state: a step is one operation "
                         "on two numbers (write a fraction in lowest terms, e.g. 8/3)")


def _remove(numbers: tuple[Fraction, ...], a: Fraction, b: Fraction) -> tuple[int, int] | None:
    try:
        i = numbers.index(a)
    except ValueError:
        return None
    for j, v in enumerate(numbers):
        if j != i and v == b:
            return i, j
    return None


def check_step(numbers: tuple[Fraction, ...], text: str, policy: Policy = "reject") -> Step | Invalid:
    """Check one step against the numbers still available, exactly.

    ``reject`` refuses any wrong fact. ``repair`` trusts only ``a op b`` (the operands must still
    be available and the operation defined), recomputes the result and the left list, and says so
    in ``note``.
    """
    try:
        a, op, b, c, left = parse_step(text)
    except ValueError as exc:
        return Invalid(str(exc))
    pos = _remove(numbers, a, b)
    if pos is None:
        have = " ".join(format_number(n) for n in numbers)
        return Invalid(f"operands {format_number(a)} and {format_number(b)} are not both available in [{have}]")
    i, j = pos
    true_c = apply_op(a, op, b)
    if true_c is None:
        return Invalid("division by zero")
    rest = tuple(n for k, n in enumerate(numbers) if k not in (i, j))
    true_left = rest + (true_c,)
    notes = []
    if c != true_c:
        msg = f"{format_number(a)} {op} {format_number(b)} is {format_number(true_c)}, not {format_number(c)}"
        if policy == "reject":
            return Invalid(msg)
        notes.append(msg)
    if left is None:
        if policy == "reject":
            return Invalid("missing '(left: ...)' list")
        notes.append("left list missing")
    elif Counter(left) != Counter(true_left):
        msg = (f"left list [{' '.join(format_number(n) for n in left)}] should be "
               f"[{' '.join(format_number(n) for n in sorted(true_left))}]")
        if policy == "reject":
            return Invalid(msg)
        notes.append(msg)
    note = ("repaired: " + "; ".join(notes)) if notes else ""
    return Step(i, j, op, true_c, tuple(sorted(true_left)), note)


def legal_steps(numbers: tuple[Fraction, ...]) -> list[tuple[int, int, str, Fraction]]:
    """Every defined ``numbers[i] op numbers[j]`` (both orders for - and /), without duplicates."""
    seen: set[tuple[Fraction, str, Fraction]] = set()
    out = []
    for i in range(len(numbers)):
        for j in range(len(numbers)):
            if i == j:
                continue
            a, b = numbers[i], numbers[j]
            for op in "+-*/":
                if op in "+*" and i > j:
                    continue
                key = (a, op, b) if op in "-/" or a <= b else (b, op, a)
                if key in seen:
                    continue
                r = apply_op(a, op, b)
                if r is None:
                    continue
                seen.add(key)
                out.append((i, j, op, r))
    return out


@cache
def _solvable_sorted(numbers: tuple[Fraction, ...], target: Fraction) -> bool:
    if len(numbers) == 1:
        return numbers[0] == target
    for i, j, _op, r in legal_steps(numbers):
        rest = [n for k, n in enumerate(numbers) if k not in (i, j)]
        if _solvable_sorted(tuple(sorted(rest + [r])), target):
            return True
    return False


def can_reach_exhaustive(numbers: Iterable[Fraction | int], target: int = 24) -> bool:
    """The plain memoized exhaustive search over ``legal_steps`` (the reference for ``can_reach``)."""
    return _solvable_sorted(tuple(sorted(Fraction(n) for n in numbers)), Fraction(target))


# ---- fast oracle ---------------------------------------------------------------------------
# Combining two numbers at a time until one is left builds exactly the binary expression trees
# over the multiset, so the values a multiset can make are the union, over its splits into two
# parts, of x op y for x, y made by the parts. Those value sets are memoized per sorted
# sub-multiset (shared by every puzzle), and the last combination is inverted: the top split
# (A, B) reaches t iff V(B) meets {y : x op y = t or y op x = t, x in V(A)}, one C-level set
# test instead of building the value set of the whole multiset. Rationals are (num, den)
# pairs in lowest terms with den > 0: hashing and comparing int tuples is far cheaper than
# Fraction's, and gcd keeps them exact.

_Q = tuple[int, int]


def _q(value: Fraction | int) -> _Q:
    if type(value) is int:
        return value, 1
    f = Fraction(value)
    return f.numerator, f.denominator


def _norm(n: int, d: int) -> _Q:
    if d < 0:
        n, d = -n, -d
    g = gcd(n, d)
    return (n // g, d // g) if g > 1 else (n, d)


def _combine(xs: frozenset[_Q], ys: frozenset[_Q]) -> set[_Q]:
    """Every defined x op y and y op x for x in xs, y in ys."""
    out: set[_Q] = set()
    add = out.add
    for a, b in xs:
        for c, d in ys:
            if b == 1 and d == 1:  # two integers, the common case: no gcd but for division
                add((a + c, 1))
                add((a - c, 1))
                add((c - a, 1))
                add((a * c, 1))
                if c:
                    add(_norm(a, c))
                if a:
                    add(_norm(c, a))
                continue
            bd = b * d
            ad, cb = a * d, c * b
            add(_norm(ad + cb, bd))
            add(_norm(ad - cb, bd))
            add(_norm(cb - ad, bd))
            add(_norm(a * c, bd))
            if c:
                add(_norm(ad, b * c))
            if a:
                add(_norm(cb, d * a))
    return out


@cache
def _split_getters(n: int) -> tuple[tuple[Callable[[tuple[_Q, ...]], tuple[_Q, ...]], ...], ...]:
    """For multisets of n items: index pickers of each split into two non-empty parts, each split
    once (the first part holds item 0)."""
    def picker(idx: tuple[int, ...]) -> Callable[[tuple[_Q, ...]], tuple[_Q, ...]]:
        if len(idx) == 1:
            i = idx[0]
            return lambda ms: (ms[i],)
        return itemgetter(*idx)  # type: ignore[return-value]

    out = []
    for mask in range(1, (1 << n) - 1, 2):
        a = tuple(i for i in range(n) if mask >> i & 1)
        b = tuple(i for i in range(n) if not mask >> i & 1)
        out.append((picker(a), picker(b)))
    return tuple(out)


def _splits(ms: tuple[_Q, ...]) -> set[tuple[tuple[_Q, ...], tuple[_Q, ...]]]:
    """Unordered splits of a sorted multiset into two non-empty sorted parts, without repeats."""
    return {(pa(ms), pb(ms)) for pa, pb in _split_getters(len(ms))}


@lru_cache(maxsize=1 << 16)
def _values(ms: tuple[_Q, ...]) -> frozenset[_Q]:
    """Every value the sorted multiset ``ms`` can make, each number used once."""
    if len(ms) == 1:
        return frozenset(ms)
    out: set[_Q] = set()
    for a, b in _splits(ms):
        out |= _combine(_values(a), _values(b))
    return frozenset(out)


@lru_cache(maxsize=1 << 16)
def _needs(ms: tuple[_Q, ...], t: _Q) -> frozenset[_Q]:
    """Every y with x op y = t or y op x = t for some x made by ``ms``; ``t`` is not zero."""
    tn, td = t
    out: set[_Q] = set()
    for a, b in _values(ms):
        out.add(_norm(tn * b - a * td, td * b))  # x + y = t
        out.add(_norm(a * td - tn * b, b * td))  # x - y = t
        out.add(_norm(tn * b + a * td, td * b))  # y - x = t
        if a:
            out.add(_norm(tn * a, td * b))  # y / x = t
            out.add(_norm(tn * b, td * a))  # x * y = t
            out.add(_norm(a * td, b * tn))  # x / y = t (y is then non-zero)
    return frozenset(out)


@lru_cache(maxsize=1 << 16)
def _reaches(ms: tuple[_Q, ...], t: _Q) -> bool:
    if len(ms) == 1:
        return ms[0] == t
    for a, b in _splits(ms):
        small, big = (a, b) if len(a) <= len(b) else (b, a)
        if not _needs(small, t).isdisjoint(_values(big)):
            return True
    return False


def can_reach(numbers: Iterable[Fraction | int], target: int = 24) -> bool:
    """Exact oracle: can these numbers, each used once with + - * /, make ``target``?"""
    ms = tuple(sorted(_q(n) for n in numbers))
    if not ms:
        return False
    if target == 0:  # x * y = 0 and x / y = 0 do not invert to one y; use the plain search
        return can_reach_exhaustive((Fraction(n, d) for n, d in ms), target)
    return _reaches(ms, _q(target))


# ---- the puzzle ----------------------------------------------------------------------------

MAX_PUZZLE_NUMBER = 1000


def parse_puzzle(text: str) -> tuple[int, ...]:
    """Four whole numbers 0..1000 separated by spaces or commas ("4 9 10 13"); ValueError with a
    one-line reason. The one reader of a Game-of-24 puzzle: the task, ``tot verify`` and the rewards."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty puzzle: give four whole numbers, e.g. \"4 9 10 13\"")
    if len(text) > 200:
        raise ValueError("a Game-of-24 puzzle is four numbers; this text is longer than 200 characters")
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if len(parts) != 4:
        raise ValueError(f"a Game-of-24 puzzle has four numbers; got {len(parts)} in {text.strip()[:40]!r}")
    nums = []
    for p in parts:
        if not re.fullmatch(r"[0-9]{1,4}", p, re.ASCII):
            raise ValueError(f"{p[:20]!r} is not a whole number between 0 and {MAX_PUZZLE_NUMBER}")
        v = int(p)
        if v > MAX_PUZZLE_NUMBER:
            raise ValueError(f"{v} is larger than {MAX_PUZZLE_NUMBER}")
        nums.append(v)
    return tuple(nums)


# ---- final answers -------------------------------------------------------------------------

_ANSWER_PREFIX = re.compile(r"^\s*(?:answer\s*:)?\s*", re.IGNORECASE)
# Punctuation that ends a sentence, not the expression: "(10 - 4) * (13 - 9) = 24." ("!" is a
# factorial, ":" a division and "?" no statement: each makes the text not an answer).
_TRAILING = re.compile(r"[\s.,;\u3002]+$")
# TeX's operators, as in ``\boxed{(10 - 4) \times (13 - 9)}``; a command another letter follows is not one.
_TEX = re.compile(r"\\(times|div|cdot)(?![A-Za-z])")
_TEX_OPS = {"times": "*", "div": "/", "cdot": "*"}
# The stated result after the expression: "= 24", "== 24", "= 24.0" (a decimal equal to it exactly).
_RESULT = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,6})?", re.ASCII)
_OPENERS, _CLOSERS = "([{", ")]}"


def _one_kind_of_bracket(text: str) -> str | Invalid:
    """Square and curly brackets mean what round ones do, each closed by its own kind: the text
    with every bracket round, or Invalid naming the first one closed by another kind."""
    stack: list[str] = []
    for ch in text:
        if ch in _OPENERS:
            stack.append(ch)
            if len(stack) > MAX_PAREN_DEPTH:
                return Invalid("brackets nested too deeply")
        elif ch in _CLOSERS:
            if not stack:
                return Invalid("unbalanced brackets")
            opener = stack.pop()
            if _OPENERS.index(opener) != _CLOSERS.index(ch):
                return Invalid(f"bracket {opener!r} closed by {ch!r}")
    if stack:
        return Invalid("unbalanced brackets")
    return text.translate(str.maketrans("[{]}", "(())"))


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of a parsed expression: ``left op right = result``; ``left`` is None for a
    unary minus (``op`` is then ``"neg"``)."""

    left: Fraction | None
    op: str
    right: Fraction
    result: Fraction

    def text(self) -> str:
        if self.left is None:
            return f"-({format_number(self.right)}) = {format_number(self.result)}"
        return f"{format_number(self.left)} {self.op} {format_number(self.right)} = {format_number(self.result)}"


@dataclass(frozen=True, slots=True)
class Expression:
    """A final expression read under the whitelist: its exact value, its numbers (leaves, left to
    right) and its operations in the order they are computed (every intermediate result)."""

    value: Fraction
    leaves: tuple[Fraction, ...]
    operations: tuple[Operation, ...]


class _Eval(ast.NodeVisitor):
    """Evaluates a whitelisted arithmetic tree with Fractions and collects its leaves and operations."""

    _SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}

    def __init__(self) -> None:
        self.leaves: list[Fraction] = []
        self.operations: list[Operation] = []

    def value(self, node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return self.value(node.body)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            self.leaves.append(Fraction(node.value))
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and type(node.op) is ast.USub:
            operand = self.value(node.operand)  # "-(4 - 13)", "-4 + 13": the minus of arithmetic
            self.operations.append(Operation(None, "neg", operand, -operand))
            return -operand
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(node.op, ast.Add):
                result = left + right
            elif isinstance(node.op, ast.Sub):
                result = left - right
            elif isinstance(node.op, ast.Mult):
                result = left * right
            elif right == 0:
                raise ZeroDivisionError
            else:
                result = left / right
            self.operations.append(Operation(left, self._SYMBOL[type(node.op)], right, result))
            return result
        raise ValueError(f"'{type(node).__name__}' is not allowed; only integers, + - * / and brackets"
                         + (" (write * between a number and a bracket)" if isinstance(node, ast.Call) else ""))


def parse_expression(answer: str, target: int) -> Expression | Invalid:
    """Read a final expression whole under the whitelist (integers, + - * /, brackets of three
    kinds, the operator spellings of ``_OPS``, an optional ``Answer:`` prefix and stated result
    ``= target``) and compute it exactly on rationals, or say why it is not one. Nothing is
    evaluated as code: the text is tokenised, parsed by ``ast`` only after every character outside
    the notation is refused, and the tree is walked under a whitelist. Game of 24's and
    Countdown's answer checks both read answers here."""
    if not isinstance(answer, str):
        return Invalid("answer is not text")
    text = _ANSWER_PREFIX.sub("", answer.strip(), count=1)
    if len(text) > MAX_ANSWER_CHARS:
        return Invalid(f"answer longer than {MAX_ANSWER_CHARS} characters")
    text = _TEX.sub(lambda m: f" {_TEX_OPS[m.group(1)]} ", _TRAILING.sub("", text))
    # The same operator spellings as steps (_OPS), so the gate and the answer check read one language.
    text = "".join(_OPS.get(ch, ch) if ch not in "xX" else ch for ch in text)
    round_only = _one_kind_of_bracket(text)
    if isinstance(round_only, Invalid):
        return round_only
    text = re.sub(r"(?<=[0-9)\s])[xX](?=[\s0-9(])", "*", round_only, flags=re.ASCII)
    if "=" in text:
        lhs, _, rhs = text.partition("==") if "==" in text else text.partition("=")
        stated = rhs.strip()
        if stated and not (_RESULT.fullmatch(stated) and Fraction(stated) == target):
            return Invalid(f"the stated result {stated[:20]!r} is not {target}")
        text = lhs
    if not re.fullmatch(r"[0-9 \t\n+\-*/().]*", text) or not text.strip():
        bad = next((ch for ch in text if not re.match(r"[0-9 \t\n+\-*/().]", ch)), None)
        return Invalid(f"unexpected character {bad!r}" if bad else "empty answer")
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth > MAX_PAREN_DEPTH:
            return Invalid("brackets nested too deeply")
        if depth < 0:
            return Invalid("unbalanced brackets")
    if "**" in text or "//" in text:
        return Invalid("only + - * / are allowed")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Invalid("not a well-formed arithmetic expression")
    ev = _Eval()
    try:
        value = ev.value(tree)
    except ZeroDivisionError:
        return Invalid("division by zero")
    except (ValueError, RecursionError) as exc:
        return Invalid(str(exc) or "expression too deep")
    return Expression(value, tuple(ev.leaves), tuple(ev.operations))


# Reading the answer out of a model's text (verifiers.answers finds where it is).
_ARITH = re.compile(rf"[0-9][ \t)\]}}]*{_OP}[ \t(\[{{\-\u2212]*[0-9]")  # two numbers joined by an operator
_STEP_LINE = re.compile(r"\(\s*left\s*:", re.IGNORECASE)  # "4 + 9 = 13 (left: 10 13 13)" is a step
_LIST_MARK = re.compile(r"^(?:[-*+\u2022][ \t]+|[0-9]{1,3}[.)][ \t]+)")  # "- ", "* ", "• ", "1. ", "1) "
# A neighbouring line that carries the expression on: it starts with an operator, a power, a
# factorial, a closing bracket or "="; or the line before ends with an operator or an opening bracket.
_GOES_ON = re.compile(rf"^[ \t]*(?:{_OP}|[=^!%\u00b2\u00b3)\]}}]|mod\b|\*\*)", re.IGNORECASE)
_LEFT_OPEN = re.compile(rf"(?:{_OP}|[(\[{{^=])[ \t]*$")


def _answer_line(found: Found) -> str | None:
    """The one line that is the answer (tags and boxes: all of it on one line)."""
    lines = list(found.lines)
    nonblank = [k for k, line in enumerate(lines) if line]
    if not nonblank:
        return None
    if found.marker in ("tag", "boxed"):
        return " ".join(lines[k] for k in nonblank)
    if found.marker == "line":
        at = nonblank[0]
    else:
        shaped = [k for k in nonblank if _ARITH.search(lines[k]) and not _STEP_LINE.search(lines[k])]
        if not shaped:
            return None
        at = shaped[-1]
    before = [k for k in nonblank if k < at]
    after = [k for k in nonblank if k > at]
    if after and _GOES_ON.match(lines[after[0]]):
        return None  # "2 *" then "(10 - 4) * (13 - 9)": the answer goes on over two lines
    if found.marker == "none" and before and _LEFT_OPEN.search(lines[before[-1]]):
        return None
    return lines[at]


def read_expression(text: str) -> str | None:
    """The answer of a model's text, whole, for the Game-of-24 check (``report_answer``), or None
    when it has none. Where it is: ``verifiers.answers.find_answer`` (tags, box, ``Answer:`` line);
    unmarked, the last line holding arithmetic (two numbers joined by an operator) that is not a
    step (``... (left: ...)``). The line is the answer whole, its markdown and a leading list mark
    (``- ``, ``* ``, ``1. ``) dropped; a neighbouring line that carries it on (an operator, a power,
    a factorial first, or the line before ending in an operator) makes it no answer. Nothing is
    evaluated here: the check reads what this returns, and anything on it outside its notation
    (a word, ``^``, ``!``, ``sqrt``, ``mod``) fails there."""
    if not isinstance(text, str):
        return None
    found = find_answer(text)
    line = _answer_line(found)
    if line is None:
        return None
    if found.marker in ("none", "line"):  # a list's mark; inside tags or a box, "- " is a minus
        line = _LIST_MARK.sub("", line.strip(), count=1)
    line = line.strip()
    return line[:MAX_ANSWER_CHARS + 1] or None


FORM_CHECK = "a well-formed expression (integers, + - * /, brackets; nothing evaluated as code)"
RULES_24 = ("Game of 24: one expression using each of the four numbers exactly once, "
            "with + - * / and brackets, equal to {target} exactly")


def wrap(expr: str) -> str:
    """An expression as an operand: bare when it is a number, else in parentheses."""
    return expr if re.fullmatch(r"[0-9]+", expr) else f"({expr})"


def stated_answer(text: str, target: int) -> str | None:
    """The answer ``read_expression`` finds, with a stated result equal to ``target`` dropped (a
    wrong stated result kept, so that the check can say so); at most 300 characters; None when
    there is none. Unchecked: the caller verifies."""
    found = read_expression(text)
    if found is None:
        return None
    lhs, eq, rhs = found.partition("=")
    expr = lhs.strip() if eq and rhs.strip() == str(target) else found
    return expr[:300] or None


_ANSWER_LINE = re.compile(r"^answer\s*:\s*(.*)$", re.IGNORECASE)


def before_answer_line(text: str) -> str:
    """A chain of thought's lines before its ``Answer:`` line (all of them where it has none)."""
    head = []
    for ln in text.splitlines():
        if _ANSWER_LINE.match(ln.strip()):
            break
        head.append(ln)
    return "\n".join(head)


def report_answer(puzzle: Iterable[int], answer: str, target: int = 24) -> AnswerReport:
    """Every exact check of a final expression, each named: well-formed under the whitelist,
    each puzzle number used exactly once, value exactly ``target``."""
    rules = RULES_24.format(target=target)
    parsed = parse_expression(answer, target)
    if isinstance(parsed, Invalid):
        return AnswerReport(rules, (Check(FORM_CHECK, False, parsed.reason),))
    value, leaves = parsed.value, parsed.leaves
    want = Counter(Fraction(n) for n in puzzle)
    used_ok = Counter(leaves) == want
    used = " ".join(format_number(n) for n in leaves)
    need = " ".join(format_number(n) for n in sorted(want.elements()))
    return AnswerReport(rules, (
        Check(FORM_CHECK, True),
        Check("uses each puzzle number exactly once", used_ok,
              f"[{used}]" if used_ok else f"uses numbers [{used}] but the puzzle has [{need}]"),
        Check(f"equals {target} exactly", value == target,
              f"= {format_number(value)}" if value == target else f"evaluates to {format_number(value)}, not {target}"),
    ))


def verify_answer(puzzle: Iterable[int], answer: str, target: int = 24) -> Invalid | Fraction:
    """Check a final expression exactly: each puzzle number used once, value equal to ``target``.

    Returns the exact value on success or ``Invalid(reason)`` (the first failed check of
    ``report_answer``). Accepts an optional ``Answer:`` prefix, a trailing ``= 24``, and the
    operator spellings × ÷ −.
    """
    problem = as_invalid(report_answer(puzzle, answer, target))
    return Fraction(target) if problem is None else problem


def unbracket(expr: str) -> str:
    """``expr`` without the one pair of brackets around the whole of it, if it has one (a step's
    result is written bracketed; an answer is shown without): "(1 + 2) * 3" stays as it is."""
    inner = expr[1:-1]
    if not expr.startswith("("):
        return expr
    depth = 0
    for ch in inner:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return expr
    return inner if depth == 0 else expr
