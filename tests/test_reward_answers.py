"""The answer is the whole answer: a correct expression wrapped in anything outside the checker's
notation (an operator, a function, a power, a factorial, a word, a second line that carries it on)
earns 0.0; every answer ``tot verify game24`` accepts earns 1.0 in every marker form (``Answer:``
lines, ``<answer>`` tags, ``\\boxed{}``, after ``<think>``). Correct answers are built here as
trees and valued with sympy (tests/references.py), never by the project; the notations come from
tests/test_game24_notations.py's table. ``HYPOTHESIS_PROFILE=thorough`` runs ten times the examples."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tasks.game24.cli import PLUGIN as GAME24
from tests import references as ref
from tests.profiles import examples
from tests.reward_cases import CASES, table
from tests.test_game24_notations import BRACKETS, SPELL, spelled
from verifiers import arithmetic
from verifiers.rewards import REWARDS, game24

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("task", "puzzle", "text", "want", "why"), CASES, ids=[c[4] for c in CASES])
def test_every_documented_case(task: str, puzzle: str, text: str, want: float, why: str) -> None:
    extra = {"latin": [True]} if task == "sudoku" else {}
    assert REWARDS[task](completions=[text], puzzle=[puzzle], **extra) == [want]


def test_the_rewards_page_shows_the_cases() -> None:
    page = (ROOT / "docs" / "rewards.md").read_text(encoding="utf-8")
    assert table() in page, "docs/rewards.md: paste the output of `python -m tests.reward_cases`"


@st.composite
def solved(draw: st.DrawFn) -> tuple[tuple[int, ...], ref.Tree]:
    """A puzzle and a correct answer: three leaves in a random tree, the fourth leaf the number
    that brings it to 24 (by + - * or /), kept only when sympy says the whole is 24."""
    leaves = draw(st.lists(st.integers(1, 13), min_size=3, max_size=3))
    items: list[ref.Tree] = list(leaves)
    while len(items) > 1:
        k = draw(st.integers(0, len(items) - 2))
        items[k:k + 2] = [(draw(st.sampled_from("+-*/")), items[k], items[k + 1])]
    value = ref.tree_value(items[0])
    assume(value is not None and value != 0)
    assert value is not None
    options = []
    for op, last in (("+", 24 - value), ("-", value - 24), ("*", 24 / value), ("/", value / 24)):
        if last.is_integer and 1 <= last <= 1000:
            options.append((op, int(last)))
    assume(options)
    op, last = draw(st.sampled_from(options))
    tree: ref.Tree = (op, items[0], last) if draw(st.booleans()) or op in "-/" else (op, last, items[0])
    puzzle = tuple(draw(st.permutations([*leaves, last])))
    assume(ref.answer_ok(puzzle, tree) and _no_zero(tree))
    return puzzle, tree


def _no_zero(tree: ref.Tree) -> bool:
    """No part of the tree is worth 0: then a minus written before the answer changes its value
    (it negates the first term, which is not 0), so "-" + a correct answer is a wrong one."""
    if isinstance(tree, int):
        return tree != 0
    _, left, right = tree  # type: ignore[misc]
    return ref.tree_value(tree) != 0 and _no_zero(left) and _no_zero(right)


def _verify_accepts(puzzle: tuple[int, ...], answer: str) -> bool:
    ok, _ = GAME24.verify(argparse.Namespace(puzzle=" ".join(map(str, puzzle)), answer=answer))
    return ok


MARKED = [
    "{a}", "Answer: {a}", "answer:{a}", "Final answer: {a}", "**Answer:** {a}", "> Answer: {a}", "Answer:\n\n{a}\n",
    "Let me see.\n4 + 9 = 13 (left: 10 13 13)\nAnswer: {a}\nThat is all.", "<answer>{a}</answer>",
    "<answer>\n{a}\n</answer>\nCheck: 8 * 3 = 24", "I think 1 + 2 = 3.\n<answer> {a} </answer>", "$\\boxed{{{a}}}$",
    "The answer is \\boxed{{{a}}}.", "<think>Answer: 1 + 2 + 3 + 4\n</think>\n{a}", "<think>\n1 + 1</think>Answer: {a}",
    "Step 1: think\n\n{a}", "`{a}`", "**{a}**", "- {a}", "1. {a}",
]


@settings(max_examples=examples(2000), deadline=None)
@given(solved(), st.data())
def test_every_answer_tot_verify_accepts_earns_one_in_every_marker_form(case: tuple[tuple[int, ...], ref.Tree],
                                                                       data: st.DataObject) -> None:
    puzzle, tree = case
    answer = data.draw(spelled(tree))
    assert _verify_accepts(puzzle, answer), answer  # sympy says 24: the checker must agree
    forms = [f.format(a=answer) for f in MARKED]
    got = game24(completions=forms, puzzle=[" ".join(map(str, puzzle))] * len(forms))
    assert got == [1.0] * len(forms), [f for f, r in zip(forms, got, strict=True) if r != 1.0]


SUFFIXES = ["^2", " ^ 2", "**2", "\u00b2", "\u00b3", "!", " !", " mod 5", " % 5", " %", " squared", " + x",
            " approximately", " (roughly)", " / 0", " * 0.5", ")", " and more", " = 25", " = 24!", " = 24 or 25",
            " = 24?", " ≈ 24", ":"]
PREFIXES = ["sqrt", "\u221a", "log", "abs", "2^", "2**", "not ", "So ", "The answer is ", "-", "\u2212", "1/",
            "24 = ", "(", "factorial", "x ", "approximately ", "0 * "]
SECOND_BEFORE = ["2 *", "2 * (", "sqrt(", "-", "2^", "1 +"]  # a line ending in an operator or bracket
SECOND_AFTER = ["^2", "/ 5", "* 2", "!", "mod 5", "% 5", "= 25", ")", "\u00b2", "+ 1", "- 1", "**2"]


@st.composite
def wrapped(draw: st.DrawFn, answer: str) -> str:
    """``answer`` changed by text outside the notation, in a marker form drawn here."""
    kind = draw(st.sampled_from(["suffix", "prefix", "both", "before", "after"]))
    if kind in ("suffix", "prefix", "both"):
        line = answer
        if kind in ("prefix", "both"):
            line = draw(st.sampled_from(PREFIXES)) + line
        if kind in ("suffix", "both"):
            line = line + draw(st.sampled_from(SUFFIXES))
        form = draw(st.sampled_from(["{a}", "Answer: {a}", "<answer>{a}</answer>", "\\boxed{{{a}}}",
                                     "Work: 1 + 2 = 3\n{a}\nDone.", "<think>x</think>\n<answer>\n{a}\n</answer>"]))
        return form.format(a=line)
    if kind == "before":
        extra = draw(st.sampled_from(SECOND_BEFORE))
        form = draw(st.sampled_from(["{x}\n{a}", "Answer: {x}\n{a}", "<answer>{x}\n{a}</answer>",
                                     "Work:\n{x}\n\n{a}"]))
    else:
        extra = draw(st.sampled_from(SECOND_AFTER))
        form = draw(st.sampled_from(["{a}\n{x}", "Answer: {a}\n{x}", "<answer>{a}\n{x}</answer>", "{a}\n\n{x}\nok",
                                     "Answer:\n{a}\n{x}"]))
    return form.format(a=answer, x=extra)


def _plain_ok(puzzle: tuple[int, ...], text: str) -> bool:
    """Whether ``text`` with its wrapping is still a correct answer by the reference's own reading
    (the reference reads a bare expression only: anything it cannot read is not an answer)."""
    tree = ref.read_tree(text)
    return tree is not None and ref.answer_ok(puzzle, tree)


@settings(max_examples=examples(2000), deadline=None)
@given(solved(), st.data())
def test_a_correct_expression_wrapped_in_anything_else_earns_nothing(case: tuple[tuple[int, ...], ref.Tree],
                                                                     data: st.DataObject) -> None:
    puzzle, tree = case
    answer = ref.render(tree, space=data.draw(st.sampled_from(["", " "])))
    text = data.draw(wrapped(answer))
    assert game24(completions=[text], puzzle=[" ".join(map(str, puzzle))]) == [0.0], text


def test_the_reward_reads_every_spelling_of_the_checkers_notation_table() -> None:
    """Every operator spelling the checker maps (``verifiers.arithmetic._OPS``) is in the test's
    table, and every spelling of it in every bracket kind earns 1.0."""
    spelled_ops = {s for spellings in SPELL.values() for s in spellings}
    assert set(arithmetic._OPS) <= spelled_ops, set(arithmetic._OPS) - spelled_ops
    answers = []
    for op_minus in SPELL["-"]:
        for op_times in SPELL["*"]:
            for o, c in BRACKETS:
                answers.append(f"{o}10 {op_minus} 4{c} {op_times} {o}13 {op_minus} 9{c}")
    for op_div in SPELL["/"]:
        answers.append(f"8 {op_div} (3 - 8 {op_div} 3)")
    puzzles = ["4 9 10 13"] * (len(answers) - len(SPELL["/"])) + ["3 3 8 8"] * len(SPELL["/"])
    for form in ("{a}", "Answer: {a}", "<answer>{a}</answer>", "\\boxed{{{a}}}"):
        texts = [form.format(a=a) for a in answers]
        assert game24(completions=texts, puzzle=puzzles) == [1.0] * len(texts)


@pytest.mark.parametrize("text", [
    "<answer>(10 - 4) * (13 - 9)</answer>", "Answer: (10 - 4) * (13 - 9)", "\\boxed{(10 - 4) \\times (13 - 9)}",
    "Let me see.\n(10 - 4) * (13 - 9) = 24", "<think>hmm</think>(10-4)*(13-9) == 24",
])
def test_tot_verify_reads_what_the_reward_reads(text: str) -> None:
    assert _verify_accepts((4, 9, 10, 13), text)
    assert game24(completions=[text], puzzle=["4 9 10 13"]) == [1.0]


@pytest.mark.parametrize("text", [f"Answer: (10 - 4) * (13 - 9){s}" for s in ("^2", "!", " mod 5")]
                         + ["So (10 - 4) * (13 - 9)", "2 *\n(10 - 4) * (13 - 9)"])
def test_tot_verify_refuses_what_the_reward_refuses(text: str) -> None:
    assert not _verify_accepts((4, 9, 10, 13), text)
    assert game24(completions=[text], puzzle=["4 9 10 13"]) == [0.0]
