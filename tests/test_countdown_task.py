"""The minimal Countdown task (tasks/countdown/): its command line on the issue's example, under
both rule variants, a proof of no solution, ``tot verify countdown``, and the testing kit's search
invariants on small puzzles (the answer checked by the reference reader and solvability by the
brute force of tests/test_countdown_exact.py, neither sharing code with the task)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from solver.testing import check_search_invariants
from tasks.countdown import Countdown, parse_puzzle
from tests.profiles import examples
from tests.test_countdown_exact import brute_once, brute_television, reference_ok


def tot(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "solver.tools.cli", *argv], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("rules", ["once", "television"])
def test_the_issue_example_is_solved_and_verified(rules):
    out = tot("solve", "countdown", "25 50 75 100 3 6", "--target", "952", "--rules", rules,
              "--generator", "enumerate", "--evaluator", "oracle")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("answer: ") and first.endswith(" [verified]"), out.stdout
    answer = first[len("answer: "):-len(" [verified]")]
    assert reference_ok((25, 50, 75, 100, 3, 6), answer, 952, rules), answer


def test_no_solution_is_proved_and_verify_reads_answers():
    out = tot("solve", "countdown", "1 1 1 1", "--target", "24", "--generator", "enumerate", "--evaluator", "oracle")
    assert out.returncode == 0 and out.stdout.startswith("no solution exists"), out.stdout
    ok = tot("verify", "countdown", "25 50 75 100 3 6", "((100 + 6) * 3 * 75 - 50) / 25", "--target", "952")
    assert ok.returncode == 0 and ok.stdout.startswith("verified"), ok.stdout
    bad = tot("verify", "countdown", "3 5 2 2", "(3 + 5 / 2) * 2", "--target", "11", "--rules", "television")
    assert bad.returncode == 1 and "5 / 2 = 5/2 is not a positive whole number" in bad.stdout, bad.stdout
    missing = tot("solve", "countdown", "1 2 3")
    assert missing.returncode == 2 and "--target" in missing.stderr


PUZZLES = ["2 3 4 -> 24", "1 1 1 -> 24", "4 9 10 13 -> 24", "3 5 7 -> 2", "2 2 3 -> 7", "5 6 -> 1", "2 10 25 -> 250",
           "3 4 100 -> 3"]


@pytest.mark.parametrize("rules", ["once", "television"])
def test_the_search_invariants_hold(rules):
    def solvable(p: str) -> bool:
        nums, target = parse_puzzle(p)
        return brute_once(nums, target) if rules == "once" else brute_television(nums, target) is not None

    assert {solvable(p) for p in PUZZLES} == {True, False}

    def answer_ok(p: str, a: str) -> bool:
        nums, target = parse_puzzle(p)
        return reference_ok(nums, a, target, rules)

    check_search_invariants(Countdown(rules), PUZZLES, max_examples=examples(30), answer_ok=answer_ok,
                            solvable=solvable)
