"""The Countdown task's model-facing parts: every step in the few-shot prompts is one the gate
accepts under both rules and lists the numbers left as they are, every judgement in the value
prompt agrees with the brute force of tests/test_countdown_exact.py, every baseline example's answer
passes its reference reader (and every refine attempt fails it), the step grammar derives
exactly the legal steps (each read by the gate; every legal step there), proposals parse as
written, and restore gives back the state a trace describes."""

from __future__ import annotations

import random
import re
from collections import Counter
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.baseline_capabilities import AnswerGrammar, AnswerParser, BaselinePrompts, ChainSteps
from solver.task import Thought
from solver.task_capabilities import (
    ChoicePrompt,
    ProposePrompts,
    Restorable,
    ThoughtGrammar,
    TrainingPrompts,
    ValuePrompts,
    VotePrompt,
    require,
)
from tasks.countdown import Countdown, prompts
from tests.gbnf_reference import Grammar, derive
from tests.profiles import examples
from tests.test_countdown_exact import brute_once, brute_television, reference_ok
from verifiers.verdict import Invalid

RULES = ("once", "television")
_STEP = re.compile(r"^(\d+) ([-+*/]) (\d+) = (\d+) \(left: ([\d ]+)\)$")
_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: Fraction(a, b)}


def _blocks(text: str) -> list[tuple[int, list[int], list[str]]]:
    """(target, numbers, step lines) of each worked example of a propose or sample prompt."""
    out = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if len(lines) < 3 or not lines[0].startswith("Target: ") or "{" in block:
            continue
        target = int(lines[0].split(": ")[1])
        numbers = [int(x) for x in lines[1].split(": ")[1].split()]
        steps = [ln.removeprefix("Next step: ") for ln in lines[2:] if "=" in ln]
        out.append((target, numbers, steps))
    return out


@pytest.mark.parametrize("template", [prompts.PROPOSE_FEWSHOT, prompts.SAMPLE_FEWSHOT], ids=["propose", "sample"])
def test_every_example_step_is_right_by_hand_and_by_the_gate(template: str) -> None:
    blocks = _blocks(template)
    assert len(blocks) == 3 and sum(len(s) for _, _, s in blocks) >= 3
    for target, numbers, steps in blocks:
        for line in steps:
            m = _STEP.match(line)
            assert m, line
            a, op, b, c, left = int(m[1]), m[2], int(m[3]), int(m[4]), [int(x) for x in m[5].split()]
            assert _OPS[op](a, b) == c, line  # the arithmetic, by hand
            rest = Counter(numbers)
            rest.subtract([a, b])
            assert sorted((rest + Counter([c])).elements()) == left, line  # the numbers left, by hand
            for rules in RULES:
                task = Countdown(rules=rules)  # type: ignore[arg-type]
                root = task.root(f"{' '.join(map(str, numbers))} -> {target}")
                assert not isinstance(task.check(root, Thought(line)), Invalid), (rules, line)


def test_every_value_judgement_agrees_with_the_brute_force() -> None:
    blocks = [b for b in prompts.VALUE_FEWSHOT.split("\n\n") if b.startswith("Numbers: ") and "{" not in b]
    assert len(blocks) == 5
    for block in blocks:
        lines = block.splitlines()
        numbers = tuple(int(x) for x in lines[0].split(": ")[1].split())
        target = int(lines[1].split(": ")[1])
        label = lines[-1].split(": ")[1]
        for solvable in (brute_once(numbers, target), brute_television(numbers, target) is not None):
            assert label == "likely" or solvable == (label == "sure"), block


def test_every_choice_example_picks_a_step_that_keeps_a_solution() -> None:
    blocks = [b for b in prompts.CHOICE_FEWSHOT.split("\n\n") if b.startswith("Target: ") and "{" not in b]
    assert len(blocks) == 2
    for block in blocks:
        lines = block.splitlines()
        target = int(lines[0].split(": ")[1])
        pick = int(lines[-1].split(": ")[1])
        left = [int(x) for x in _STEP.match(lines[1 + pick].split(". ", 1)[1])[5].split()]  # type: ignore[index]
        assert brute_once(tuple(left), target) and brute_television(tuple(left), target) is not None


@pytest.mark.parametrize("rules", RULES)
def test_the_prompts_name_the_state_the_target_and_the_rules(rules: str) -> None:
    task = Countdown(rules=rules)  # type: ignore[arg-type]
    state = task.root("25 50 75 100 3 6 -> 952")
    line = prompts.RULE_LINES[rules]
    propose = require(task, ProposePrompts, "test")
    for text in (propose.propose_prompt(state, False), require(task, ValuePrompts, "test").value_prompt(state, False),
                 require(task, VotePrompt, "test").vote_prompt([state, state], False)):
        assert line in text and "952" in text
    assert propose.propose_prompt(state, False).endswith("Target: 952\nInput: 3 6 25 50 75 100\nPossible next steps:\n")
    assert propose.propose_prompt(state, True).startswith("You are playing Countdown")
    choice = require(task, ChoicePrompt, "test").choice_prompt(state, [Thought("3 + 6 = 9 (left: 9 25 50 75 100)")],
                                                               False)
    assert choice.endswith("Target: 952\nNumbers: 3 6 25 50 75 100\n1. 3 + 6 = 9 (left: 9 25 50 75 100)\nBest step:")
    short = require(task, TrainingPrompts, "test")
    assert short.train_value_prompt(state) == "Numbers: 3 6 25 50 75 100\nTarget: 952\nCan they reach it? Answer:"
    assert short.train_step_prompt(state).endswith("Next step:\n")


def test_proposals_and_labels_parse_as_written() -> None:
    task = Countdown()
    state = task.root("2 5 10 25 -> 120")
    part = require(task, ProposePrompts, "test")
    text = "1. 5 * 25 = 125 (left: 2 10 125)\n- -5 + 10 = 5\nno step here\n\nTarget: 7\n2 + 5 = 7 (left: 7)"
    assert [t.text for t in part.parse_proposals(state, text)] == ["5 * 25 = 125 (left: 2 10 125)", "-5 + 10 = 5"]
    value = require(task, ValuePrompts, "test")
    assert [value.parse_value(t) for t in (" sure", " Impossible.", "likely so", "maybe")] == \
        ["sure", "impossible", "likely", None]


def _grammar_lines(gbnf: str) -> set[str]:
    body = gbnf.split("::=", 1)[1].strip()
    return set(re.findall(r'"((?:[^"\\]|\\.)*)"', body))


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(1, 12), min_size=2, max_size=4), st.integers(1, 60), st.sampled_from(RULES))
def test_the_grammar_derives_exactly_the_legal_steps(numbers: list[int], target: int, rules: str) -> None:
    task = Countdown(rules=rules)  # type: ignore[arg-type]
    state = task.root(f"{' '.join(map(str, numbers))} -> {target}")
    gbnf = require(task, ThoughtGrammar, "test").thought_grammar(state)
    if gbnf is None:
        assert state.target in state.numbers and rules == "television"  # solved at the root: no step asked
        return
    lines = _grammar_lines(gbnf)
    for line in lines:  # every derivation is a step the gate accepts
        assert not isinstance(task.check(state, Thought(line)), Invalid), line
    # every legal step, written by hand from the numbers, is derivable (operands in either order)
    want = set()
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i == j:
                continue
            for op in "+-*/":
                if op == "/" and b == 0:
                    continue
                c = _OPS[op](a, b)
                if rules == "television" and (c <= 0 or Fraction(c).denominator != 1):
                    continue
                rest = [n for k, n in enumerate(numbers) if k not in (i, j)] + [c]
                left = " ".join(_fmt(x) for x in sorted(Fraction(x) for x in rest))
                want.add(f"{a} {op} {b} = {_fmt(c)} (left: {left})")
    assert want == lines


def _fmt(x: Fraction | int) -> str:
    f = Fraction(x)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


@pytest.mark.parametrize("rules", RULES)
def test_restore_gives_back_the_state_a_trace_describes(rules: str) -> None:
    task = Countdown(rules=rules)  # type: ignore[arg-type]
    puzzle = "3 5 2 2 -> 11"
    state = task.root(puzzle)
    for line in ("5 / 2 = 5/2 (left: 2 5/2 3)", "3 + 5 = 8 (left: 2 2 8)"):
        verdict = task.check(state, Thought(line))
        if isinstance(verdict, Invalid):
            assert rules == "television" and "/" in line
            continue
        restored: Any = require(task, Restorable, "test").restore(puzzle, task.describe(verdict.state))
        assert restored == verdict.state and restored.target == 11
    with pytest.raises(ValueError):
        require(task, Restorable, "test").restore(puzzle, "1 2 3 4 5 6 7 8")


def _answers(template: str) -> list[tuple[tuple[int, ...], int, list[str], str]]:
    """(numbers, target, step lines, answer) of each worked example of a baseline prompt."""
    out = []
    for block in template.split("\n\nNumbers: ")[1:]:
        if "{" in block:
            continue
        lines = block.splitlines()
        numbers = tuple(int(x) for x in lines[0].split())
        target = int(lines[1].split(": ")[1])
        steps = [ln for ln in lines[2:] if "(left:" in ln]
        answer = next(ln for ln in lines if ln.startswith("Answer: ")).removeprefix("Answer: ")
        out.append((numbers, target, steps, answer))
    return out


@pytest.mark.parametrize("template", [prompts.IO_FEWSHOT, prompts.COT_FEWSHOT, prompts.REFINE_FEWSHOT],
                         ids=["io", "cot", "refine"])
def test_every_baseline_example_answer_is_right_by_the_reference_reader(template: str) -> None:
    examples_ = _answers(template)
    assert len(examples_) >= 2
    for numbers, target, steps, answer in examples_:
        for rules in RULES:
            assert reference_ok(numbers, answer, target, rules), (answer, rules)
        left = list(numbers)
        for line in steps:  # each step by hand, as in the search prompts
            m = _STEP.match(line)
            assert m, line
            a, op, b, c = int(m[1]), m[2], int(m[3]), int(m[4])
            assert _OPS[op](a, b) == c, line
            rest = Counter(left)
            rest.subtract([a, b])
            left = sorted((+rest + Counter([c])).elements())
            assert left == [int(x) for x in m[5].split()], line
        if steps:
            assert left == [target]
    if template is prompts.REFINE_FEWSHOT:  # every attempt shown is wrong
        attempts = re.findall(r"Numbers: ([\d ]+)\nTarget: (\d+)\nAttempt: (.*)", template)
        assert len(attempts) == 2
        for nums, target, attempt in attempts:
            numbers = tuple(int(x) for x in nums.split())
            assert not reference_ok(numbers, attempt, int(target), "once")


def test_the_baselines_read_answers_as_the_reward_does() -> None:
    task = Countdown()
    part = require(task, BaselinePrompts, "test")
    puzzle = "25 50 75 100 3 6 -> 952"
    e = "((100 + 6) * 3 * 75 - 50) / 25"
    assert part.parse_answer(puzzle, f"Answer: {e} = 952") == e
    assert part.parse_answer(puzzle, f"Answer: {e} = 953") == f"{e} = 953"  # kept: the check refuses it
    assert part.parse_answer(puzzle, "no answer here") is None
    assert part.io_prompt(puzzle, False).endswith("Numbers: 25 50 75 100 3 6\nTarget: 952\nAnswer:")
    steps = require(task, ChainSteps, "test").chain_thoughts(puzzle, "3 + 6 = 9 (left: 9 25 50 75 100)\nAnswer: 9")
    assert [t.text for t in steps] == ["3 + 6 = 9 (left: 9 25 50 75 100)"]


@pytest.mark.parametrize("rules", RULES)
def test_the_answer_grammar_derives_answers_over_the_puzzles_numbers(rules: str) -> None:
    task = Countdown(rules=rules)  # type: ignore[arg-type]
    puzzle = "25 50 3 6 -> 153"
    part, parser = require(task, AnswerGrammar, "test"), require(task, AnswerParser, "test")
    rng = random.Random(58)
    want = Counter([25, 50, 3, 6])
    for cot in (False, True):
        text = part.answer_grammar(puzzle, cot)
        assert text is not None
        g = Grammar(text)
        for _ in range(20):
            out = derive(g, rng)
            expr = parser.parse_answer(puzzle, out)
            assert expr is not None and out.endswith(" = 153"), out
            used = Counter(int(n) for n in re.findall(r"\d+", expr))
            assert used == want if rules == "once" else (not used - want and used.total() >= 2), out
    io = Grammar(part.answer_grammar(puzzle, False) or "")
    right = "(50 - 25) * 6 + 3 = 153"
    assert reference_ok((25, 50, 3, 6), right, 153, rules)
    assert io.matches(f" {right}") and io.matches(right)
    assert not io.matches(" (50 - 25) * 6 + 3 = 154")  # another target
    assert not io.matches(" (50 - 25) * 6 + 3 * 3 = 153")  # 3 twice
    assert io.matches(" 50 + 25 + 6 + 3 = 153")  # the value is the check's: a superset
    assert io.matches(" 25 * 6 + 3 = 153") == (rules == "television")  # a number left out
    assert part.answer_grammar("1 2", False) is None
