"""The ``countdown`` reward against answers built here as trees and valued with sympy
(tests/references.py), never by the project: a correct expression earns 1.0 in every marker form,
and a wrong final answer wrapped around a correct expression (a wrong stated result, an operation
more, a number missing or used twice) earns 0.0, under both rule variants."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests import references as ref
from tests.profiles import examples
from verifiers.rewards import RewardConfigError, countdown

POOL = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 25, 50, 75, 100]


def _results_ok(tree: ref.Tree) -> bool:
    """Television rules, read off the tree: every operation's result a positive whole number."""
    if isinstance(tree, int):
        return True
    if len(tree) == 2:
        return False  # a unary minus is a result, never positive of a positive operand
    value = ref.tree_value(tree)
    return value is not None and value > 0 and value.q == 1 and _results_ok(tree[1]) and _results_ok(tree[2])


@st.composite
def answered(draw: st.DrawFn) -> tuple[list[int], ref.Tree, int]:
    """Numbers, a tree using every one of them once, and the tree's whole value as the target."""
    numbers = draw(st.lists(st.sampled_from(POOL), min_size=2, max_size=6))
    items: list[ref.Tree] = list(draw(st.permutations(numbers)))
    while len(items) > 1:
        k = draw(st.integers(0, len(items) - 2))
        items[k:k + 2] = [(draw(st.sampled_from("+-*/")), items[k], items[k + 1])]
    value = ref.tree_value(items[0])
    assume(value is not None and value.q == 1 and 0 <= value <= 999_999)
    assert value is not None
    return numbers, items[0], int(value)


def _puzzle(numbers: list[int], target: int) -> str:
    return f"{' '.join(map(str, numbers))} -> {target}"


@settings(max_examples=examples(150), deadline=None)
@given(answered())
def test_a_correct_expression_earns_one_in_every_form(case: tuple[list[int], ref.Tree, int]) -> None:
    numbers, tree, target = case
    expr = ref.render(tree)
    forms = [expr, f"Answer: {expr}", f"<answer>{expr}</answer>", f"<answer>{expr} = {target}</answer>",
             f"\\boxed{{{expr}}}", f"<think>{expr} = {target + 1}?</think>\nAnswer: {expr} = {target}"]
    n = len(forms)
    assert countdown(completions=forms, puzzle=[_puzzle(numbers, target)] * n) == [1.0] * n
    assert countdown(completions=forms, nums=[numbers] * n, target=[target] * n) == [1.0] * n
    want = 1.0 if _results_ok(tree) else 0.0
    assert countdown(completions=forms, puzzle=[_puzzle(numbers, target)] * n, rules=["television"] * n) \
        == [want] * n


@settings(max_examples=examples(150), deadline=None)
@given(answered())
def test_a_wrong_answer_around_a_correct_expression_earns_zero(case: tuple[list[int], ref.Tree, int]) -> None:
    numbers, tree, target = case
    expr = ref.render(tree)
    wrong = [f"Answer: {expr} = {target + 1}", f"<answer>{expr} = {target + 1}</answer>",
             f"Answer: ({expr}) + 1", f"Answer: ({expr}) * {numbers[0]}", f"Answer: {expr}!",
             f"Answer: ({expr})^2", f"Answer: {expr}\nAnswer: {target + 1}", f"So {expr} = {target}",
             f"<answer>{expr}\n/ 1</answer>"]
    for rules in ("once", "television"):
        got = countdown(completions=wrong, puzzle=[_puzzle(numbers, target)] * len(wrong), rules=[rules] * len(wrong))
        assert got == [0.0] * len(wrong), (rules, [w for w, g in zip(wrong, got, strict=True) if g])
    # a number of the puzzle left out: 0.0 under once, where the rest of the answer is right
    more = [*numbers, 7]
    assert countdown(completions=[f"Answer: {expr}"], puzzle=[_puzzle(more, target)]) == [0.0]
    # under television rules a number may be left out
    want = 1.0 if _results_ok(tree) else 0.0
    assert countdown(completions=[f"Answer: {expr}"], puzzle=[_puzzle(more, target)], rules=["television"]) == [want]


def test_named_cases() -> None:
    p = "25 50 75 100 3 6 -> 952"
    e = "((100 + 6) * 3 * 75 - 50) / 25"
    assert countdown(completions=[f"Answer: {e}", f"Answer: {e} = 953", f"Answer: {e} = 952 + 1"], puzzle=[p] * 3) \
        == [1.0, 0.0, 0.0]
    # television rules: 100 * 9 + 50 + 2 leaves out the 7
    tv = countdown(completions=["Answer: 100 * 9 + 50 + 2"] * 2, numbers=["100 9 50 2 7"] * 2, target=[952] * 2,
                   rules=["once", "television"])
    assert tv == [0.0, 1.0]
    # a fraction on the way: allowed under once, not under television rules
    frac = countdown(completions=["Answer: (3 + 5 / 2) * 2"] * 2, puzzle=["3 5 2 2 -> 11"] * 2,
                     rules=["once", "television"])
    assert frac == [1.0, 0.0]


def test_configuration_errors() -> None:
    for kwargs, message in (({"puzzle": ["1 2 3"]}, "puzzle row 0"),
                            ({"puzzle": ["1 2 -> 3"], "rules": ["tv"]}, "rules row 0"),
                            ({"nums": [[1, 2]], "target": [-3]}, "target row 0"),
                            ({"nums": [[1, 2.0]], "target": [3]}, "nums row 0"),
                            ({"nums": [[1, 2]]}, "no 'puzzle' column")):
        with pytest.raises(RewardConfigError, match=message):
            countdown(completions=["Answer: 1 + 2"], **kwargs)
