"""``tot-complete --prune-proven``: with an exact evaluator (the oracle), a child it scores below
the threshold is cut, not deferred, and a run that runs out of states then proves there is no
answer on the oracle's word. Checked against references that share no code with the oracle
(sympy for Game of 24, the tests' own brute force for Countdown); with another evaluator nothing
is cut, and the run is the run without the option."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from hypothesis import given, settings

from solver.evaluators import make_evaluator
from solver.generators import make_generator
from solver.searches import get_search
from solver.settings import SearchSettings
from solver.trace import Trace
from tasks.countdown.task import Countdown, puzzle_text
from tasks.game24 import Game24
from tests.profiles import examples
from tests.references import game24_ok, sym_solvable
from tests.test_countdown_exact import brute_once, reference_ok
from tests.test_properties import GAME24_PUZZLES


def _solve(task: Any, puzzle: str, evaluator: str, prune: bool) -> tuple[Any, Trace]:
    trace = Trace()
    search = get_search("tot-complete")
    run = search.open(task, puzzle, make_generator("enumerate"), make_evaluator(evaluator), None, trace)
    settings = SearchSettings("tot-complete", options=search.options_from({"prune_proven": prune}))
    return asyncio.run(search(run, settings)), trace


@settings(max_examples=examples(150), deadline=None)
@given(puzzle=GAME24_PUZZLES)
def test_game24_proofs_on_the_oracles_word_agree_with_sympy(puzzle: str) -> None:
    res, trace = _solve(Game24(), puzzle, "oracle", True)
    solvable = sym_solvable(puzzle.split())
    if solvable:
        assert res.verified and game24_ok(puzzle, res.answer), (puzzle, res.answer)
    else:
        assert res.answer is None and res.exhausted, puzzle
    cuts = [e for e in trace.events if e["event"] == "cut" and e["why"] == "pruned"]
    assert trace.events[-1]["proven_cuts"] == len(cuts)
    search = next(e for e in trace.events if e["event"] == "search")
    assert search["proven_cuts"] is True  # the search event says the proofs are the oracle's


def test_countdown_six_numbers_proved_or_answered_in_a_few_states() -> None:
    """Six-number Countdown puzzles, half of them unsolvable: each is answered (the brute force
    accepts the answer) or proved unsolvable (the brute force agrees), expanding at most a handful
    of states (without the cuts, an unsolvable one takes some 100,000)."""
    rng = random.Random(58)
    seen = {True: 0, False: 0}
    for i in range(24):  # the television pool, and (every other) small numbers that rarely reach a big target
        pool = [*range(1, 11), *range(1, 11), 25, 50, 75, 100] if i % 2 else [1, 1, 2, 2, 3, 3, 4, 4]
        numbers = rng.sample(pool, 6)
        target = rng.randint(101, 999)
        res, _ = _solve(Countdown(), puzzle_text(numbers, target), "oracle", True)
        solvable = brute_once(tuple(numbers), target)
        seen[solvable] += 1
        if solvable:
            assert res.verified and reference_ok(numbers, res.answer, target, "once"), (numbers, target)
        else:
            assert res.answer is None and res.exhausted, (numbers, target)
        assert res.expanded <= 6, (numbers, target, res.expanded)
    assert seen[True] and seen[False]


def test_with_another_evaluator_nothing_is_cut() -> None:
    """Only an exact evaluator's low score is a proof: with the prior, the option changes nothing
    but the options the search event lists."""
    def events(trace: Trace) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k not in ("t", "seconds", "search_options")} for e in trace.events]

    for puzzle in ("1 1 1 1", "4 9 10 13", "3 3 8 8"):
        with_cuts, a = _solve(Game24(), puzzle, "prior", True)
        without, b = _solve(Game24(), puzzle, "prior", False)
        assert events(a) == events(b) and with_cuts.exhausted == without.exhausted
        assert "proven_cuts" not in a.events[-1]


def test_countdown_solves_with_proven_cuts_by_default_and_without_on_request(capsys: Any) -> None:
    """``tot solve countdown`` cuts on the oracle's proofs by default; ``--no-prune-proven`` gives
    the proof by exhausting the tree (the brute force agrees both ways)."""
    import json

    from solver.tools.cli import main

    assert not brute_once((1, 2, 3, 4), 997)
    got = {}
    for flags in ((), ("--no-prune-proven",)):
        assert main(["solve", "countdown", "1 2 3 4", "--target", "997", "--json", *flags]) == 0  # a proof: 0
        got[flags] = json.loads(capsys.readouterr().out.splitlines()[-1])
    cut, whole = got[()], got[("--no-prune-proven",)]
    assert cut["exhausted"] and whole["exhausted"] and cut["answer"] is whole["answer"] is None
    assert cut["proven_cuts"] > 0 and cut["expanded"] == 1
    assert "proven_cuts" not in whole and whole["expanded"] > 100
