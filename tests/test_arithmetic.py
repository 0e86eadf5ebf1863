"""Parser, step checker, answer verifier and oracle of Game of 24, including hostile strings."""

from fractions import Fraction as F

import pytest

from verifiers.arithmetic import can_reach, check_step, legal_steps, parse_number, parse_step, verify_answer
from verifiers.verdict import Invalid

NUMS = (F(4), F(9), F(10), F(13))


@pytest.mark.parametrize("text, a, op, b, c", [
    ("13 - 9 = 4 (left: 4 4 10)", 13, "-", 9, 4),
    ("13 \u2212 9 = 4 (left: 4 4 10)", 13, "-", 9, 4),
    ("4 \u00d7 10 = 40 (left: 9 13 40)", 4, "*", 10, 40),
    ("4 x 10 = 40 (left: 9 13 40)", 4, "*", 10, 40),
    ("  4*10=40   (left:9, 13, 40)  ", 4, "*", 10, 40),
    ("8 \u00f7 3 = 8/3 (left: 8/3)", 8, "/", 3, F(8, 3)),
    ("5 / 2 = 2.5 (left: 2.5)", 5, "/", 2, F(5, 2)),
    ("4 - 9 = -5 (left: -5 10 13)", 4, "-", 9, -5),
])
def test_parse_step_variants(text, a, op, b, c):
    pa, pop, pb, pc, _ = parse_step(text)
    assert (pa, pop, pb, pc) == (F(a), op, F(b), F(c))


def test_check_step_accepts_correct_step():
    step = check_step(NUMS, "13 - 9 = 4 (left: 4 4 10)")
    assert not isinstance(step, Invalid)
    assert step.result == 4 and step.left == (F(4), F(4), F(10))


@pytest.mark.parametrize("text, why", [
    ("13 - 9 = 5 (left: 4 5 10)", "is 4, not 5"),
    ("13 - 9 = 4 (left: 4 10)", "left list"),
    ("13 - 9 = 4", "missing"),
    ("13 - 12 = 1 (left: 1 4 10)", "not both available"),
    ("4 - 4 = 0 (left: 0 9 10 13)", "not both available"),
    ("10 / 0 = 0 (left: 0)", "not both available"),
    ("hello", "not of the form"),
    ("", "not of the form"),
    ("1" * 500 + " + 1 = 2 (left: 2)", "too long"),
    ("9" * 30 + " + 4 = 5 (left: 5)", "not a number"),
])
def test_check_step_rejects_wrong_facts(text, why):
    res = check_step(NUMS, text)
    assert isinstance(res, Invalid)
    assert why in res.reason


def test_division_by_zero_is_invalid():
    res = check_step((F(0), F(5)), "5 / 0 = 0 (left: 0)")
    assert isinstance(res, Invalid) and "division by zero" in res.reason


def test_repair_recomputes_and_says_so():
    res = check_step(NUMS, "13 - 9 = 5 (left: 1 2 3)", policy="repair")
    assert not isinstance(res, Invalid)
    assert res.result == 4 and res.left == (F(4), F(4), F(10))
    assert res.note.startswith("repaired:")


def test_repair_still_rejects_unavailable_operands():
    assert isinstance(check_step(NUMS, "13 - 7 = 6 (left: 4 6 10)", policy="repair"), Invalid)


def test_parse_number_is_exact():
    assert parse_number("8/3") == F(8, 3)
    assert parse_number("2.25") == F(9, 4)
    with pytest.raises(ValueError):
        parse_number("1/0")
    with pytest.raises(ValueError):
        parse_number("1e5")


@pytest.mark.parametrize("answer", [
    "(10 - 4) * (13 - 9)", "(10 - 4) * (13 - 9) = 24", "Answer: (10 - 4) * (13 - 9) = 24",
    "(10 \u2212 4) \u00d7 (13 \u2212 9)", "(13 - 9) * (10 - 4)",
])
def test_verify_answer_accepts(answer):
    assert verify_answer([4, 9, 10, 13], answer) == 24


def test_verify_answer_with_fractions():
    assert verify_answer([3, 3, 8, 8], "8 / (3 - 8 / 3)") == 24


@pytest.mark.parametrize("answer, why", [
    ("(10 - 4) * (13 - 8)", "uses numbers"),
    ("10 + 9 + 4 + 13", "evaluates to 36"),
    ("(10 - 4) * (13 - 9) = 25", "stated result"),
    ("__import__('os').system('true')", "unexpected character"),
    ("9 ** 9 ** 9", "only + - * /"),
    ("(" * 5000 + "1" + ")" * 5000, "longer than"),
    ("(" * 60 + "4" + ")" * 60, "nested too deeply"),
    ("4 / (9 - 9) + 10 + 13", "division by zero"),
    ("13 / (10 - 10) * 4 * 9", "division by zero"),
    ("4 * 9 - 10 - 13 / 0", "division by zero"),
    ("", "empty"),
    ("1/0", "division by zero"),
    ("4.5 * 9 - 10 - 13", "not allowed"),
    ("-4 * 9 + 10 + 13", "evaluates to -13"),  # unary minus is arithmetic; the value is wrong
    ("((10 - 4) * (13 - 9)", "unbalanced brackets"),
    ("[4, 9, 10, 13]", "unexpected character"),
])
def test_verify_answer_rejects(answer, why):
    res = verify_answer([4, 9, 10, 13], answer)
    assert isinstance(res, Invalid), res
    assert why in res.reason


def test_division_by_zero_in_answer():
    res = verify_answer([4, 4, 9, 13], "4 / (4 - 4) + 9 + 13")
    assert isinstance(res, Invalid) and "division by zero" in res.reason


def test_oracle_known_cases():
    assert can_reach([4, 9, 10, 13])
    assert can_reach([3, 3, 8, 8])  # needs a fraction
    assert not can_reach([1, 1, 1, 1])
    assert can_reach([24])
    assert not can_reach([23])


def test_legal_steps_cover_both_orders_of_noncommutative_ops():
    steps = {(op, r) for _, _, op, r in legal_steps((F(2), F(8)))}
    assert ("-", F(6)) in steps and ("-", F(-6)) in steps
    assert ("/", F(4)) in steps and ("/", F(1, 4)) in steps
    assert len(steps) == 6
