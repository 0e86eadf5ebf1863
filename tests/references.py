"""Independent references for the exact checkers. Nothing here imports the project: each reference
is written separately, on another library, so a test comparing a checker with it can fail.

- Game of 24: sympy exact rationals over expression trees the tests build themselves (no text is
  parsed here; sympy's parse_expr is never used).
- Sudoku: python-constraint (the ``constraint`` module of python-constraint2) as the CSP for
  solutions and completability, with rows, columns and boxes laid out here.
- Crosswords: python-constraint over a small word list, slots and crossings laid out here.
- Creative writing: a plain ending check written apart from ``verifiers/writing.py``.
"""

from __future__ import annotations

import itertools
import operator
import re
import unicodedata
from functools import cache
from typing import Iterable, Sequence, Union

import sympy
from constraint import AllDifferentConstraint, FunctionConstraint, Problem

# ---- Game of 24: expression trees and sympy ----------------------------------------------------

SYM_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}

# A tree is an int leaf, (op, left, right), or ("neg", operand) for a unary minus.
Tree = Union[int, tuple[str, "Tree", "Tree"], tuple[str, "Tree"]]


def sym(value: int | tuple[int, int]) -> sympy.Rational:
    """An exact sympy number from an int or a (numerator, denominator) pair."""
    if isinstance(value, tuple):
        return sympy.Rational(value[0], value[1])
    return sympy.Integer(value)


def tree_value(tree: Tree) -> sympy.Rational | None:
    """The exact value of a tree with sympy, None when it divides by zero."""
    if isinstance(tree, int):
        return sympy.Integer(tree)
    if len(tree) == 2:
        inner = tree_value(tree[1])  # type: ignore[misc]
        return None if inner is None else -inner
    op, left, right = tree  # type: ignore[misc]
    a, b = tree_value(left), tree_value(right)
    if a is None or b is None or (op == "/" and b == 0):
        return None
    return SYM_OPS[op](a, b)


def tree_leaves(tree: Tree) -> list[int]:
    if isinstance(tree, int):
        return [tree]
    if len(tree) == 2:
        return tree_leaves(tree[1])  # type: ignore[misc]
    return tree_leaves(tree[1]) + tree_leaves(tree[2])  # type: ignore[misc]


def render(tree: Tree, spell: dict[str, str] | None = None, space: str = " ") -> str:
    """The tree as text, every inner operation in brackets (the outermost without)."""
    spell = spell or {}

    def go(t: Tree, top: bool) -> str:
        if isinstance(t, int):
            return str(t)
        if len(t) == 2:
            return f"-({go(t[1], True)})"  # type: ignore[misc]
        op, left, right = t  # type: ignore[misc]
        inner = f"{go(left, False)}{space}{spell.get(op, op)}{space}{go(right, False)}"
        return inner if top else f"({inner})"

    return go(tree, True)


_SPELLINGS = {"\u00d7": "*", "\u00f7": "/", "\u2212": "-", "\u2013": "-", "\u2012": "-", "\ufe63": "-",
              "\uff0d": "-", "\u00b7": "*", "\u22c5": "*", "\u2217": "*", "\u2215": "/", ":": "/",
              "[": "(", "{": "(", "]": ")", "}": ")"}
_PAIRS = {"(": ")", "[": "]", "{": "}"}


def read_tree(text: str) -> Tree | None:
    """A strict reader of the documented answer format into a tree (recursive descent over ASCII
    digits, + - * / and brackets; an optional ``Answer:`` prefix and ``= 24`` suffix; × ÷ − and
    an ``x`` between operands mean * / -). None for anything else. Stricter than the checker,
    never looser: whatever the checker accepts must read here."""
    t = text.strip()
    if t[:7].lower() == "answer:":
        t = t[7:]
    while t and t[-1] in " \t\n\r.,;:!?\u3002":  # sentence punctuation after the expression
        t = t[:-1]
    opened: list[str] = []
    for ch in t:  # each bracket closed by its own kind
        if ch in _PAIRS:
            opened.append(_PAIRS[ch])
        elif ch in ")]}" and (not opened or opened.pop() != ch):
            return None
    if "=" in t:
        t, _, rhs = t.partition("=")
        if rhs.strip() not in ("24", ""):
            return None
    toks: list[str] = []
    for ch in t:
        ch = _SPELLINGS.get(ch, ch)
        if ch in "0123456789" and toks and toks[-1].isdigit() and not toks[-1].endswith(" "):
            toks[-1] += ch
        elif ch in "0123456789+-*/()":
            toks.append(ch)
        elif ch in "xX":
            toks.append("x")
        elif ch in " \t\n\r\f\v":
            if toks and toks[-1].isdigit():
                toks[-1] += " "  # ends a number: "1 2" is two tokens
        else:
            return None
    toks = [tk.strip() for tk in toks]
    for k, tk in enumerate(toks):  # x means times only between an operand's end and start
        if tk == "x":
            if 0 < k < len(toks) - 1 and (toks[k - 1].isdigit() or toks[k - 1] == ")") \
                    and (toks[k + 1].isdigit() or toks[k + 1] == "("):
                toks[k] = "*"
            else:
                return None
    pos = 0

    def peek() -> str | None:
        return toks[pos] if pos < len(toks) else None

    def expr(depth: int) -> Tree | None:
        node = term(depth)
        while node is not None and peek() in ("+", "-"):
            op = toks[pos]
            advance()
            right = term(depth)
            node = None if right is None else (op, node, right)
        return node

    def term(depth: int) -> Tree | None:
        node = factor(depth)
        while node is not None and peek() in ("*", "/"):
            op = toks[pos]
            advance()
            right = factor(depth)
            node = None if right is None else (op, node, right)
        return node

    def factor(depth: int) -> Tree | None:
        tk = peek()
        if tk is None or depth > 200:
            return None
        if tk.isdigit():
            advance()
            return int(tk)
        if tk == "-":  # unary minus
            advance()
            inner = factor(depth + 1)
            return None if inner is None else ("neg", inner)
        if tk == "(":
            advance()
            node = expr(depth + 1)
            if node is None or peek() != ")":
                return None
            advance()
            return node
        return None

    def advance() -> None:
        nonlocal pos
        pos += 1

    if not toks or any(tk.isdigit() and len(tk) > 30 for tk in toks):
        return None
    try:
        tree = expr(0)
    except RecursionError:
        return None
    return tree if tree is not None and pos == len(toks) else None


def read_number(text: str) -> sympy.Rational | None:
    """``12``, ``-5``, ``2.5`` or ``8/3`` (ASCII digits) as an exact sympy number; None otherwise."""
    t = text.strip().replace("\u2212", "-")
    if len(t) > 40:
        return None
    neg = t.startswith("-")
    t = t[1:] if neg else t
    parts = t.split("/")
    if len(parts) > 2 or any(not p for p in parts):
        return None
    vals = []
    for p in parts:
        whole, dot, frac = p.partition(".")
        if not whole or not all(ch in "0123456789" for ch in whole + frac) or (dot and not frac):
            return None
        vals.append(sympy.Rational(int(whole + frac), 10 ** len(frac)))
    if len(vals) == 2 and vals[1] == 0:
        return None
    value = vals[0] / vals[1] if len(vals) == 2 else vals[0]
    return -value if neg else value


_STEP_OPS = {"+": "+", "-": "-", "\u2212": "-", "\u2013": "-", "*": "*", "\u00d7": "*", "x": "*", "X": "*",
             "\u22c5": "*", "\u00b7": "*", "/": "/", "\u00f7": "/", ":": "/"}


Reading = tuple[sympy.Rational, str, sympy.Rational, sympy.Rational, Union[list[sympy.Rational], None]]


def read_step(text: str) -> list[Reading]:
    """The documented step format ``a op b = c (left: x y z)`` read by hand: every reading
    (a, op, b, c, left) as sympy numbers (left None when the list is missing); a text such as
    ``8/3/2 = 4/3`` has two. Empty when it does not read."""
    t = text.strip()
    if t[-1:] in (".", ",", ";"):
        t = t[:-1].rstrip()
    left: list[sympy.Rational] | None = None
    if t.endswith(")") and "(" in t:
        head, _, tail = t.rpartition("(")
        body = tail[:-1].strip()
        if body[:4].lower() != "left":
            return []
        body = body[4:].lstrip()
        body = body[1:] if body.startswith(":") else body
        left = []
        for part in body.replace(",", " ").split():
            v = read_number(part)
            if v is None:
                return []
            left.append(v)
        t = head.rstrip()
    if t.count("=") != 1:
        return []
    lhs, _, rhs = t.partition("=")
    c = read_number(rhs)
    if c is None:
        return []
    out = []
    for k in range(1, len(lhs)):
        if lhs[k] in _STEP_OPS:
            a, b = read_number(lhs[:k]), read_number(lhs[k + 1:])
            if a is not None and b is not None:
                out.append((a, _STEP_OPS[lhs[k]], b, c, left))
    return out


def answer_ok(puzzle: Sequence[int], tree: Tree, target: int = 24) -> bool:
    """Ground truth for a Game-of-24 answer built as a tree: uses each puzzle number exactly once
    and its exact value is the target."""
    value = tree_value(tree)
    return value is not None and sorted(tree_leaves(tree)) == sorted(puzzle) and value == sympy.Integer(target)


def game24_ok(puzzle: Sequence[int] | str, text: str | None, target: int = 24) -> bool:
    """A Game-of-24 answer text read by hand (``read_tree``) and valued with sympy."""
    nums = [int(x) for x in puzzle.split()] if isinstance(puzzle, str) else list(puzzle)
    tree = read_tree(text) if isinstance(text, str) else None
    return tree is not None and answer_ok(nums, tree, target)


def sym_solvable(numbers: Iterable[str], target: int = 24) -> bool:
    """Can these numbers (texts such as ``8/3``) make ``target``? Plain value sets, sympy."""
    vals = [read_number(x) for x in numbers]
    if not vals or any(v is None for v in vals):
        raise ValueError(f"not numbers: {numbers!r}")
    return sympy.Integer(target) in sym_values(tuple(sorted(vals)))  # type: ignore[type-var]


def sym_successors(numbers: Sequence[sympy.Rational]) -> set[tuple[sympy.Rational, ...]]:
    """Every sorted multiset one step (a op b on two of the numbers) can lead to, with sympy."""
    out = set()
    for i, j in itertools.permutations(range(len(numbers)), 2):
        rest = [n for k, n in enumerate(numbers) if k not in (i, j)]
        for op, fn in SYM_OPS.items():
            if op == "/" and numbers[j] == 0:
                continue
            out.add(tuple(sorted(rest + [fn(numbers[i], numbers[j])])))
    return out


@cache
def sym_values(numbers: tuple[sympy.Rational, ...]) -> frozenset[sympy.Rational]:
    """Every value a sorted tuple of numbers can make, each used once, with + - * / (sympy)."""
    if len(numbers) == 1:
        return frozenset(numbers)
    out: set[sympy.Rational] = set()
    n = len(numbers)
    for mask in range(1, (1 << n) - 1):
        if not mask & 1:  # each unordered split once: the first part holds item 0
            continue
        left = tuple(numbers[k] for k in range(n) if mask >> k & 1)
        right = tuple(numbers[k] for k in range(n) if not mask >> k & 1)
        for x in sym_values(left):
            for y in sym_values(right):
                out.update((x + y, x - y, y - x, x * y))
                if y != 0:
                    out.add(x / y)
                if x != 0:
                    out.add(y / x)
    return frozenset(out)


def sym_reaches(numbers: Iterable[int], target: int = 24) -> bool:
    """Can these integers make ``target``? The last operation is inverted (a leaf against the
    other three, or two pairs), the rest is the plain value-set recursion above."""
    nums = tuple(sorted(sympy.Integer(v) for v in numbers))
    t = sympy.Integer(target)
    if len(nums) <= 2:
        return t in sym_values(nums)
    for k in range(len(nums)):  # one leaf a against the rest: t = a op y or y op a
        a, rest = nums[k], nums[:k] + nums[k + 1:]
        vals = sym_values(rest)
        wanted = {t - a, a - t, t + a}
        if a != 0:
            wanted |= {t / a, t * a}
            if t != 0:
                wanted.add(a / t)
        if not wanted.isdisjoint(vals):
            return True
    for left in itertools.combinations(range(len(nums)), 2):
        a = tuple(nums[k] for k in left)
        b = tuple(nums[k] for k in range(len(nums)) if k not in left)
        if len(b) < 2:
            continue
        for x in sym_values(a):
            for y in sym_values(b):
                if t in (x + y, x - y, y - x, x * y) or (y != 0 and x / y == t) or (x != 0 and y / x == t):
                    return True
    return False


# ---- Sudoku: python-constraint -------------------------------------------------------------------

BOX = {4: (2, 2), 6: (2, 3), 8: (2, 4), 9: (3, 3)}  # box height x width, standard layouts


def sudoku_units(n: int, boxes: bool) -> list[list[tuple[int, int]]]:
    units = [[(r, c) for c in range(n)] for r in range(n)] + [[(r, c) for r in range(n)] for c in range(n)]
    if boxes:
        bh, bw = BOX[n]
        units += [[(r, c) for r in range(r0, r0 + bh) for c in range(c0, c0 + bw)]
                  for r0 in range(0, n, bh) for c0 in range(0, n, bw)]
    return units


def read_board(text: str) -> tuple[tuple[int, ...], ...] | None:
    """The documented board syntax read by hand: rows separated by ``|``, ``/`` or new lines
    (outer separators and blank lines ignored); a row is single characters or cells separated by commas or
    spaces; ``* . _ 0`` are blanks, other cells ASCII digits 1..n. None when it does not read."""
    t = text.strip().strip("|/").strip()
    rows = []
    for piece in t.replace("/", "|").split("|"):  # between two | or /: one or more rows, one a line
        lines = [line.strip() for line in piece.split("\n") if line.strip()]
        if not lines:
            return None  # an empty row
        rows += lines
    n = len(rows)
    if not 1 <= n <= 9:
        return None
    board = []
    for row in rows:
        if any(ch in " \t,\f\v\r" for ch in row):
            cells = [c for c in row.replace(",", " ").split() if c]
        else:
            cells = list(row)
        if len(cells) != n:
            return None
        out = []
        for cell in cells:
            if cell in ("*", ".", "_", "0"):
                out.append(0)
            elif len(cell) == 1 and cell in "123456789" and int(cell) <= n:
                out.append(int(cell))
            else:
                return None
        board.append(tuple(out))
    return tuple(board)


def _sudoku_problem(board: Sequence[Sequence[int]], boxes: bool) -> Problem:
    n = len(board)
    p = Problem()
    for r in range(n):
        for c in range(n):
            p.addVariable((r, c), [board[r][c]] if board[r][c] else list(range(1, n + 1)))
    for unit in sudoku_units(n, boxes):
        p.addConstraint(AllDifferentConstraint(), unit)
    return p


def csp_completable(board: Sequence[Sequence[int]], boxes: bool) -> bool:
    """python-constraint: does the partial board have a completion (digits 1..n, 0 blank)?"""
    return _sudoku_problem(board, boxes).getSolution() is not None


def csp_solutions(board: Sequence[Sequence[int]], boxes: bool) -> list[tuple[tuple[int, ...], ...]]:
    """Every completion (use on small boards only)."""
    n = len(board)
    return sorted(tuple(tuple(s[(r, c)] for c in range(n)) for r in range(n))
                  for s in _sudoku_problem(board, boxes).getSolutions())


def csp_is_solution(givens: Sequence[Sequence[int]], board: Sequence[Sequence[int]], boxes: bool) -> bool:
    """A complete board is a solution of the givens: every cell a digit 1..n, every given kept, and
    the CSP with every cell fixed to the board's digit is satisfiable."""
    n = len(givens)
    if len(board) != n or any(len(row) != n for row in board):
        return False
    if any(not 1 <= board[r][c] <= n for r in range(n) for c in range(n)):
        return False
    if any(givens[r][c] and givens[r][c] != board[r][c] for r in range(n) for c in range(n)):
        return False
    return csp_completable(board, boxes)


def sudoku_step_ok(givens: Sequence[Sequence[int]], current: Sequence[Sequence[int]],
                   proposed: Sequence[Sequence[int]], boxes: bool) -> bool:
    """The gate's rule, written plainly: same size, digits 0..n, keeps every digit of ``current``
    (which holds the givens), fills at least one more cell, and no unit repeats a digit."""
    n = len(givens)
    if len(proposed) != n or any(len(row) != n for row in proposed):
        return False
    cells = [(r, c) for r in range(n) for c in range(n)]
    if any(not 0 <= proposed[r][c] <= n for r, c in cells):
        return False
    if any(givens[r][c] and proposed[r][c] != givens[r][c] for r, c in cells):
        return False
    if any(current[r][c] and proposed[r][c] != current[r][c] for r, c in cells):
        return False
    if not any(current[r][c] == 0 and proposed[r][c] for r, c in cells):
        return False
    for unit in sudoku_units(n, boxes):
        digits = [proposed[r][c] for r, c in unit if proposed[r][c]]
        if len(digits) != len(set(digits)):
            return False
    return True


# ---- Crosswords: python-constraint over a small word list -----------------------------------------

SLOTS_5X5 = {f"h{r + 1}": [r * 5 + c for c in range(5)] for r in range(5)}
SLOTS_5X5.update({f"v{c + 1}": [r * 5 + c for r in range(5)] for c in range(5)})


def crossword_fills(board: str, words: Iterable[str]) -> list[str]:
    """Every complete 5x5 fill (25 letters) where each of the 10 slots holds a word of ``words``,
    crossing letters agree, and every letter already on ``board`` (``_`` empty) is kept."""
    vocab = sorted({w.upper() for w in words if len(w) == 5 and w.isascii() and w.isalpha()})
    p = Problem()
    for name, cells in SLOTS_5X5.items():
        dom = [w for w in vocab if all(board[c] in ("_", ch) for c, ch in zip(cells, w, strict=True))]
        if not dom:
            return []
        p.addVariable(name, dom)
    for r in range(5):
        for c in range(5):
            # h(r+1) letter c is cell r*5+c, which is v(c+1) letter r.
            p.addConstraint(FunctionConstraint(lambda h, v, c=c, r=r: h[c] == v[r]), [f"h{r + 1}", f"v{c + 1}"])
    return sorted("".join(s[f"h{r + 1}"] for r in range(5)) for s in p.getSolutions())


def crossword_place_ok(board: str, slot: str, word: str) -> bool:
    """The gate's facts, written plainly: a known slot, five ASCII letters, agreeing with every
    letter already in the slot's cells."""
    if slot not in SLOTS_5X5:
        return False
    w = word.strip().upper()
    if len(w) != 5 or not (w.isascii() and w.isalpha()):
        return False
    return all(board[c] in ("_", ch) for c, ch in zip(SLOTS_5X5[slot], w, strict=True))


# ---- Creative writing: a plain ending check -------------------------------------------------------

_STRAIGHT = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'", "\u00b4": "'",
             "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"'}
_ENDERS = ".!?\u2026"


def plain(text: str, relax: Sequence[str] = ()) -> str:
    """The text with runs of ASCII blanks as single spaces (the strict default); with "nfkc" in
    ``relax`` compatibility-normalised first, with "quotes" typographic quotes made straight."""
    if "nfkc" in relax:
        text = unicodedata.normalize("NFKC", text)
    if "quotes" in relax:
        text = "".join(_STRAIGHT.get(ch, ch) for ch in text)
    words = [w for w in re.split("[ \t\n\r\f\v]+", text) if w]
    return " ".join(words)


def split_paragraphs(passage: str) -> list[str]:
    """Paragraphs are runs of lines separated by at least one line holding only blanks."""
    lines = passage.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    paras: list[list[str]] = [[]]
    for line in lines:
        if line.strip(" \t\f\v") == "":
            paras.append([])
        else:
            paras[-1].append(line)
    return [p for p in ("\n".join(ls).strip() for ls in paras) if p]


def ends_with_sentence(paragraph: str, sentence: str, relax: Sequence[str] = ()) -> bool:
    """The paragraph's last words are the sentence (after ``plain``), starting on a word
    boundary; a sentence without end punctuation (or a closing quote or bracket) may be followed by some."""
    want, got = plain(sentence, relax), plain(paragraph, relax)
    if not want or not got:
        return False
    if want[-1] not in _ENDERS + "\"')]\u2019\u201d\u00bb":
        while got and got[-1] in _ENDERS:
            got = got[:-1]
    if not got.endswith(want):
        return False
    before = got[: len(got) - len(want)]
    return before == "" or before[-1] == " " or before[-1] in "\"'(\u2018\u201c\u00ab"


def passage_ok(sentences: Sequence[str], passage: str, relax: Sequence[str] = ()) -> bool:
    paras = split_paragraphs(passage)
    return len(paras) == len(sentences) and all(ends_with_sentence(p, s, relax)
                                                for p, s in zip(paras, sentences, strict=True))
