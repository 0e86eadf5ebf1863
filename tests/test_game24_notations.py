"""Game of 24: one expression, many spellings; and a step is one operation.

The expressions are trees built here and valued with sympy (``tests/references.py``); the texts
are written here in the notations people use (round, square and curly brackets, the operator
signs × · x ÷ − and other minus signs, unary minus, ``= 24`` or not, trailing punctuation).
Each spelling of an expression must get the verdict of its plain ASCII spelling, and that verdict
must be sympy's; mutations that change the expression must be refused with a reason."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import references as ref
from tests.profiles import examples
from verifiers.arithmetic import check_step, verify_answer
from verifiers.verdict import Invalid

# Hand-checked answers (the tree, its puzzle); random trees over random numbers add refusals.
KNOWN: list[tuple[ref.Tree, tuple[int, ...]]] = [
    (("*", ("-", 10, 4), ("-", 13, 9)), (4, 9, 10, 13)),
    (("/", 8, ("-", 3, ("/", 8, 3))), (3, 3, 8, 8)),
    (("*", ("+", 1, 2), ("+", 3, 5)), (1, 2, 3, 5)),
    (("-", ("*", 5, 5), ("/", 1, 1)), (1, 1, 5, 5)),
    (("+", ("*", 2, 11), ("-", 13, 11)), (2, 11, 11, 13)),
]
SPELL = {"+": ["+"], "-": ["-", "\u2212", "\u2013", "\u2012", "\ufe63", "\uff0d"],
         "*": ["*", "\u00d7", "x", "X", "\u00b7", "\u22c5", "\u2217"], "/": ["/", "\u00f7", "\u2215", ":"]}
BRACKETS = [("(", ")"), ("[", "]"), ("{", "}")]


@st.composite
def trees(draw: st.DrawFn, leaves: tuple[int, ...]) -> ref.Tree:
    """A random binary tree over ``leaves`` (in a random order) with random operators."""
    items: list[ref.Tree] = list(draw(st.permutations(leaves)))
    while len(items) > 1:
        k = draw(st.integers(0, len(items) - 2))
        op = draw(st.sampled_from("+-*/"))
        items[k:k + 2] = [(op, items[k], items[k + 1])]
    return items[0]


@st.composite
def spelled(draw: st.DrawFn, tree: ref.Tree) -> str:
    """``tree`` written in a notation drawn here: every inner operation bracketed with a bracket
    kind of its own, operators in any accepted spelling, free spacing, a - b sometimes as
    -(b - a) or -b + a, an optional Answer: prefix, ``= 24`` and trailing full stop."""
    sp = draw(st.sampled_from(["", " ", "  "]))

    def go(t: ref.Tree, top: bool) -> str:
        if isinstance(t, int):
            return str(t)
        op, left, right = t  # type: ignore[misc]
        style = draw(st.integers(0, 2)) if op == "-" else 0
        o, c = draw(st.sampled_from(BRACKETS))
        if style == 1:  # a - b == -(b - a)
            p, q = draw(st.sampled_from(BRACKETS))
            inner = f"{draw(st.sampled_from(SPELL['-']))}{p}{go(right, False)}{sp}-{sp}{go(left, False)}{q}"
        elif style == 2 and isinstance(right, int):  # a - b == -b + a
            inner = f"-{right}{sp}+{sp}{go(left, False)}"
        else:
            sign = draw(st.sampled_from(SPELL[op]))
            pad = " " if sign in "xX" and not sp else sp  # "4x9" would be fine; "x" next to a letter is not
            inner = f"{go(left, False)}{pad}{sign}{pad}{go(right, False)}"
        return inner if top and not draw(st.booleans()) else f"{o}{inner}{c}"

    text = go(tree, True)
    if draw(st.booleans()):
        text += draw(st.sampled_from([" = 24", "=24", " = 24 ", " == 24", " = 24.0"]))
    text += draw(st.sampled_from(["", ".", " .", ";"]))  # "!" is a factorial: refused below
    return draw(st.sampled_from(["", "Answer: ", "answer:"])) + text


def _plain(tree: ref.Tree) -> str:
    return ref.render(tree)


def _ok(puzzle: tuple[int, ...], tree: ref.Tree) -> bool:
    return ref.answer_ok(list(puzzle), tree)


@st.composite
def cases(draw: st.DrawFn) -> tuple[tuple[int, ...], ref.Tree]:
    if draw(st.booleans()):
        return draw(st.sampled_from(KNOWN))[::-1]  # type: ignore[return-value]
    puzzle = tuple(draw(st.lists(st.integers(1, 13), min_size=4, max_size=4)))
    return puzzle, draw(trees(puzzle))


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_every_spelling_of_an_expression_gets_sympys_verdict(data: st.DataObject) -> None:
    puzzle, tree = data.draw(cases())
    text = data.draw(spelled(tree))
    want = _ok(puzzle, tree)
    got = verify_answer(list(puzzle), text)
    assert (got == 24) == want, (text, got)
    assert (verify_answer(list(puzzle), _plain(tree)) == 24) == want
    if isinstance(got, Invalid):
        assert got.reason


def _swap_leaf(tree: ref.Tree, new: int) -> ref.Tree:
    if isinstance(tree, int):
        return new
    op, left, right = tree  # type: ignore[misc]
    return (op, left, _swap_leaf(right, new))


def _drop_leaf(tree: ref.Tree) -> ref.Tree:
    op, left, right = tree  # type: ignore[misc]
    return left if isinstance(right, int) else (op, left, _drop_leaf(right))


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(KNOWN), st.data())
def test_mutations_that_change_the_expression_are_refused_with_a_reason(known: tuple, data: st.DataObject) -> None:
    tree, puzzle = known
    kind = data.draw(st.sampled_from(["number", "drop", "extra", "op", "power", "result", "decimal", "mismatch",
                                      "implicit", "factorial"]))
    if kind == "number":
        new = data.draw(st.integers(0, 30))
        mutated = _swap_leaf(tree, new)
        text = data.draw(spelled(mutated))
        refused = sorted(ref.tree_leaves(mutated)) != sorted(puzzle) or not _ok(puzzle, mutated)
    elif kind == "drop":
        text, refused = data.draw(spelled(_drop_leaf(tree))), True
    elif kind == "extra":
        text, refused = f"({_plain(tree)}) * 1", True
    elif kind == "op":
        op, left, right = tree
        new_op = data.draw(st.sampled_from([o for o in "+-*/" if o != op]))
        mutated = (new_op, left, right)
        text, refused = data.draw(spelled(mutated)), not _ok(puzzle, mutated)
    elif kind == "power":
        op, left, right = tree
        text = f"({ref.render(left)}) {data.draw(st.sampled_from(['^', '**', '%', '//', 'mod']))} ({ref.render(right)})"
        refused = True
    elif kind == "result":
        text, refused = f"{_plain(tree)} = {data.draw(st.sampled_from(['25', '23', '24.5', '-24', 'x']))}", True
    elif kind == "decimal":
        text, refused = _plain(tree).replace(str(puzzle[-1]), f"{puzzle[-1]}.0", 1), True
    elif kind == "factorial":  # (...)! is not the expression; neither is "= 24!" a statement of 24
        text, refused = data.draw(spelled(tree)) + data.draw(st.sampled_from(["!", " !", "?", ":"])), True
    elif kind == "mismatch":
        text = "(" + _plain(tree) + data.draw(st.sampled_from(["]", "}"]))
        refused = True
    else:  # a number written against a bracket: no operator between them
        op, left, right = tree
        text, refused = f"({ref.render(left)})({ref.render(right)})", True
    got = verify_answer(list(puzzle), text)
    if refused:
        assert isinstance(got, Invalid) and got.reason, (kind, text, got)
    else:
        assert got == 24, (kind, text, got)


@pytest.mark.parametrize("text", [
    "[(10 - 4) * (13 - 9)] = 24.", "{10 - 4} \u00b7 [13 - 9]", "(10 \u2212 4) x (13 - 9) = 24.0",
    "-(4 - 10) * (13 - 9)", "(13 - 9) \u00d7 (10 - 4).", "Answer: (-4 + 10) \u2217 (13 \uff0d 9) = 24",
])
def test_examples_of_accepted_spellings(text: str) -> None:
    assert verify_answer([4, 9, 10, 13], text) == 24


@pytest.mark.parametrize("text, why", [
    ("(10 - 4] * (13 - 9)", "closed by"),
    ("(10 - 4)(13 - 9)", "write * between"),
    ("(10 - 4) ^ (13 - 9)", "unexpected character"),
    ("(10 - 4) * (13 - 9) = 24.5", "stated result"),
    ("-(10 - 4) * (13 - 9)", "evaluates to -24"),
    ("(10 - 4) * (13 - 9) * 1", "uses numbers"),
    ("(10 - 4) * (13 - 9)!", "unexpected character"),
    ("(10 - 4) * (13 - 9) = 24!", "stated result"),
    ("(10 - 4) * (13 - 9) = 24.01", "stated result"),
    ("(10 - 4) * (13 - 9) === 24", "stated result"),
])
def test_examples_of_refused_spellings(text: str, why: str) -> None:
    got = verify_answer([4, 9, 10, 13], text)
    assert isinstance(got, Invalid) and why in got.reason, got


F = Fraction


@pytest.mark.parametrize("numbers, text, why", [
    ((F(3), F(4), F(1)), "6/2 * 4 = 12 (left: 1 12)", "is an operation"),
    ((F(3), F(4), F(1)), "3 * 4 * 1 = 12 (left: 12)", "writes more than one"),
    ((F(3), F(4), F(1)), "(3 + 4) * 1 = 7 (left: 7)", "writes more than one"),
    ((F(3), F(4), F(1)), "3 * 4 = 24/2 (left: 1 12)", "is an operation"),
    ((F(3), F(4), F(1)), "3 * 4 = 12.0/1 (left: 1 12)", "is an operation"),
])
def test_a_step_is_one_operation_on_two_numbers_of_the_state(numbers, text, why) -> None:
    got = check_step(numbers, text)
    assert isinstance(got, Invalid) and why in got.reason, got


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(1, 13), min_size=2, max_size=4), st.data())
def test_a_step_written_in_any_accepted_spelling_is_checked_as_sympy_says(nums: list[int], data) -> None:
    i, j = data.draw(st.permutations(range(len(nums))))[:2]
    op = data.draw(st.sampled_from("+-*/"))
    a, b = ref.sym(nums[i]), ref.sym(nums[j])
    if op == "/" and b == 0:
        return
    c = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op]
    left = [ref.sym(n) for k, n in enumerate(nums) if k not in (i, j)] + [c]
    sign = data.draw(st.sampled_from(SPELL[op]))
    pad = " " if sign in "xX" else data.draw(st.sampled_from(["", " "]))
    fmt = lambda v: str(v.p) if v.q == 1 else f"{v.p}/{v.q}"  # noqa: E731 (sympy's own numerator/denominator)
    text = f"{nums[i]}{pad}{sign}{pad}{nums[j]} = {fmt(c)} (left: {' '.join(fmt(v) for v in left)})"
    got = check_step(tuple(Fraction(n) for n in nums), text)
    assert not isinstance(got, Invalid), (text, got)
    assert ref.sym((got.result.numerator, got.result.denominator)) == c
    wrong = f"{nums[i]}{pad}{sign}{pad}{nums[j]} = {fmt(c + 1)} (left: {' '.join(fmt(v) for v in left)})"
    assert isinstance(check_step(tuple(Fraction(n) for n in nums), wrong), Invalid)
