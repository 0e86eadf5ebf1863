"""Baselines with scripted models: IO, CoT, CoT-SC voting (and its tie rule), refinement with the
checker's feedback, best-of-k; every returned answer passes the exact check."""

import asyncio
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.baseline_capabilities import AnswerParser
from solver.baselines import BaselineConfig, majority, run_baseline, supports
from solver.budget import Budget, Usage
from solver.expansion import rule_failure
from solver.lm.client import LMClient
from solver.task import Thought
from solver.task_capabilities import LegalMoves, Unchecked, find
from solver.tools.bench import chain_lost_at
from solver.trace import Trace
from tasks.game24 import Game24
from tasks.game24 import prompts as p24
from tests import references as ref
from tests.fakes import ScriptedBackend
from verifiers.arithmetic import verify_answer
from verifiers.verdict import Invalid, Solved, Valid

PUZZLE = "4 9 10 13"
GOOD = " (10 - 4) * (13 - 9) = 24"


def run(coro):
    return asyncio.run(coro)


def client(respond):
    backend = ScriptedBackend(respond)
    return LMClient(backend), backend


def baseline(method, respond, puzzle=PUZZLE, **cfg):
    c, backend = client(respond)
    trace = Trace()
    res = run(run_baseline(Game24(), puzzle, method, c, BaselineConfig(**cfg), trace))
    return res, backend, trace


def test_majority_picks_most_frequent_and_ignores_none():
    assert majority(["a", None, "b", "b", None, None]) == "b"
    assert majority([None, None]) is None
    assert majority([]) is None


def test_majority_tie_goes_to_earliest_first_occurrence():
    assert majority(["x", "y", "y", "x"]) == "x"
    assert majority(["y", "x", "x", "y"]) == "y"
    assert majority([None, "b", "a"]) == "b"


def test_majority_groups_by_key_and_returns_first_spelling():
    assert majority(["1 + 2", "1+2", "3"], key=lambda a: a.replace(" ", "")) == "1 + 2"
    assert majority(["a  b", "c", "a b"]) == "a  b"  # default key: whitespace-normalised


@given(st.lists(st.sampled_from(["a", "b", "c", None]), max_size=12))
def test_majority_is_a_mode_and_the_earliest_of_the_modes(answers):
    got = majority(answers)
    votes = [a for a in answers if a is not None]
    if not votes:
        assert got is None
        return
    top = max(votes.count(a) for a in votes)
    assert votes.count(got) == top
    assert all(answers.index(got) <= answers.index(a) for a in set(votes) if votes.count(a) == top)


def test_io_returns_verified_answer_and_counts_raw():
    res, backend, trace = baseline("io", lambda p, g, i: GOOD + "\n")
    assert res.verified and res.answer == "(10 - 4) * (13 - 9)"
    assert ref.game24_ok((4, 9, 10, 13), res.answer)
    assert (res.raw_answers, res.invalid_answers) == (1, 0)
    assert backend.requests[0][0].rstrip().endswith("Input: 4 9 10 13\nAnswer:")
    assert backend.requests[0][1].stop == p24.BASELINE_STOP


@pytest.mark.parametrize("text", [" (10 - 4) * (13 - 8) = 24", " 4 * 6 = 24", " no idea", "", " 24 = 24"])
def test_io_never_returns_an_invalid_answer(text):
    res, _, trace = baseline("io", lambda p, g, i: text)
    assert res.answer is None and not res.verified
    assert (res.raw_answers, res.invalid_answers) == (1, 1)
    assert trace.of("raw_answer")[0]["valid"] is False


def test_cot_reads_answer_line_after_steps():
    text = ("13 - 9 = 4 (left: 4 4 10)\n10 - 4 = 6 (left: 4 6)\n4 * 6 = 24 (left: 24)\n"
            "Answer: (10 - 4) * (13 - 9) = 24\n")
    res, backend, _ = baseline("cot", lambda p, g, i: text)
    assert res.verified and res.answer == "(10 - 4) * (13 - 9)"
    assert "Steps:" in backend.requests[0][0]


def test_cot_sc_votes_then_checks_the_vote():
    outs = ["Answer: (10 - 4) * (13 - 9) = 24", "Answer: 4 * 6 = 24", "Answer: 4 * 6 = 24",
            "Answer: (13 - 9) * (10 - 4) = 24", "nothing"]
    res, backend, _ = baseline("cot-sc", lambda p, g, i: outs[i], samples=5)
    # The majority answer is wrong, so the method returns nothing: the vote cannot see the check.
    assert res.answer is None and not res.verified
    assert (res.raw_answers, res.invalid_answers) == (5, 3)
    assert len(backend.requests) == 1 and backend.requests[0][1].n == 5


def test_cot_sc_tie_goes_to_the_earliest_answer():
    outs = ["Answer: (10 - 4) * (13 - 9) = 24", "Answer: 4 * 6 = 24", "Answer: 4 * 6 = 24",
            "Answer: (10 - 4) * (13 - 9) = 24"]
    res, _, _ = baseline("cot-sc", lambda p, g, i: outs[i], samples=4)
    assert res.verified and res.answer == "(10 - 4) * (13 - 9)"


def test_best_of_k_picks_any_valid_sample():
    outs = [" 1 + 1 = 24", " (13 - 9) * (10 - 4) = 24", " nope"]
    res, _, _ = baseline("io-best", lambda p, g, i: outs[i], samples=3)
    assert res.verified and res.answer == "(13 - 9) * (10 - 4)"
    assert (res.raw_answers, res.invalid_answers) == (3, 2)


def test_refine_feeds_back_the_checkers_reason_until_valid():
    def respond(prompt, params, i):
        if "Checker:" not in prompt.split("Input: 4 9 10 13")[-1]:
            return " (10 - 4) * (13 - 8) = 24"
        return GOOD if "Checker: uses numbers [10 4 13 8] but the puzzle has [4 9 10 13]" in prompt else " 1 + 1"

    res, backend, _ = baseline("refine", respond, rounds=10)
    assert res.verified and res.answer == "(10 - 4) * (13 - 9)"
    assert len(backend.requests) == 2
    assert "Attempt: (10 - 4) * (13 - 8)\nChecker: " in backend.requests[1][0]
    assert (res.raw_answers, res.invalid_answers) == (2, 1)


def test_refine_stops_after_the_given_rounds_with_distinct_seeds():
    res, backend, _ = baseline("refine", lambda p, g, i: " 1 + 1", rounds=4)
    assert res.answer is None and len(backend.requests) == 4
    assert [r[1].seed for r in backend.requests] == [0, 1, 2, 3]
    assert res.invalid_answers == 4


def test_budget_stops_a_baseline_and_says_so():
    backend = ScriptedBackend(lambda p, g, i: " 1 + 1")
    c = LMClient(backend)
    usage = Usage(budget=Budget(calls=2), model=backend.model)
    res = run(run_baseline(Game24(), PUZZLE, "refine", c, BaselineConfig(rounds=10), Trace(), usage))
    assert res.stopped_by == "calls" and res.answer is None and len(backend.requests) == 2


def test_failed_calls_give_no_answer_and_are_counted():
    from solver.lm.base import LMError

    def respond(p, g, i):
        raise LMError("server down")

    res, _, trace = baseline("io", respond)
    assert res.answer is None and res.usage.failed_calls == 1 and res.raw_answers == 0
    assert [e["error"] for e in trace.of("lm_error")] == ["server down"]  # in this run's own trace


def test_supports_and_unknown_method():
    assert supports(Game24(), "refine") and supports(Game24(), "cot-sc")
    assert not supports(Game24(), "tot-bfs") and not supports(object(), "io")
    c, _ = client(lambda p, g, i: "")
    with pytest.raises(ValueError):
        run(run_baseline(object(), PUZZLE, "io", c))


def test_bad_puzzle_is_a_value_error_before_any_call():
    c, backend = client(lambda p, g, i: GOOD)
    with pytest.raises(ValueError):
        run(run_baseline(Game24(), "4 9 10", "io", c))
    assert backend.requests == []


# ---- Game-of-24 prompts and parsers ----


@pytest.mark.parametrize("template", [p24.IO_FEWSHOT, p24.COT_FEWSHOT, p24.REFINE_FEWSHOT])
def test_every_fewshot_answer_is_valid(template):
    pairs = re.findall(r"Input: ([\d ]+)\n(?:.*\n)*?Answer: (.+)\n", template)
    assert len(pairs) >= 3
    for nums, answer in pairs:
        assert ref.game24_ok(nums, answer), (nums, answer)
        assert verify_answer(tuple(int(x) for x in nums.split()), answer) == 24, (nums, answer)


def test_every_fewshot_chain_passes_the_gate():
    task = Game24()
    blocks = re.findall(r"Input: ([\d ]+)\nSteps:\n((?:.+\n)+?)Answer:", p24.COT_FEWSHOT)
    assert len(blocks) == 3
    for nums, steps in blocks:
        state = task.root(nums)
        verdicts = []
        for line in steps.strip().splitlines():
            verdicts.append(task.check(state, Thought(line)))
            assert not isinstance(verdicts[-1], Invalid), (nums, line, verdicts[-1])
            state = verdicts[-1].state
        assert isinstance(verdicts[-1], Solved)


def test_refine_examples_quote_the_checkers_real_reasons():
    found = re.findall(r"Input: ([\d ]+)\nAttempt: (.+)\nChecker: (.+)\n", p24.REFINE_FEWSHOT)
    assert len(found) == 3
    for nums, attempt, reason in found:
        assert verify_answer(tuple(int(x) for x in nums.split()), attempt) == Invalid(reason)


@pytest.mark.parametrize("text, want", [
    (" (10 - 4) * (13 - 9) = 24\nInput: 1 2 3 4", "(10 - 4) * (13 - 9)"),
    ("13 - 9 = 4 (left: 4 4 10)\nAnswer: 4 * 6 = 25", "4 * 6 = 25"),
    ("13 - 9 = 4 (left: 4 4 10)\n", None),
    ("answer:   (1 + 2)", "(1 + 2)"),
    ("", None),
])
def test_parse_answer(text, want):
    assert find(Game24(), AnswerParser).parse_answer(PUZZLE, text) == want


def test_apply_unchecked_trusts_the_stated_left_list():
    task = Game24()
    root = task.root(PUZZLE)
    wrong = Thought("4 + 9 = 12 (left: 12 24)")
    assert isinstance(task.check(root, wrong), Invalid)
    loose = find(task, Unchecked).apply_unchecked(root, wrong)
    assert isinstance(loose, Valid) and loose.state.text() == "12 24"
    done = find(task, Unchecked).apply_unchecked(loose.state, Thought("12 + 12 = 24 (left: 24)"))
    assert isinstance(done, Solved)
    # The final answer check still refuses what the unchecked steps invented.
    assert rule_failure(task, PUZZLE, task.answer(done.state)) is not None
    assert isinstance(find(task, Unchecked).apply_unchecked(root, Thought("4 + 9 = 13")), Invalid)
    assert isinstance(find(task, Unchecked).apply_unchecked(root, Thought("hello")), Invalid)


def test_apply_unchecked_agrees_with_the_gate_on_true_steps():
    task = Game24()
    root = task.root(PUZZLE)
    for th in find(task, LegalMoves).legal_thoughts(root):
        strict, loose = task.check(root, th), find(task, Unchecked).apply_unchecked(root, th)
        assert type(strict) is type(loose) and strict.state == loose.state


def test_chain_lost_at():
    task = Game24()
    good = "13 - 9 = 4 (left: 4 4 10)\n10 - 4 = 6 (left: 4 6)\n4 * 6 = 24 (left: 24)\nAnswer: 4 * 5"
    assert chain_lost_at(task, PUZZLE, good) == 4  # every step kept a solvable state
    assert chain_lost_at(task, PUZZLE, "4 + 9 = 13 (left: 10 13 13)\n") == 1  # 10 13 13 cannot make 24
    assert chain_lost_at(task, PUZZLE, "13 - 9 = 4 (left: 4 4 10)\n4 + 4 = 9 (left: 9 10)\n") == 2  # wrong
    assert chain_lost_at(task, PUZZLE, "Answer: 1") == 1
