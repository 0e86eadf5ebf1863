"""best-first, mcts and beam (solver/searches/best_first.py, mcts.py, beam.py): registered
searches on the one gated step, checked by the testing kit's invariants (for every registered
search, a user's own too), their flags, traces, audit figures and bench rows.

References share no code with what they check: Game of 24's solvability comes from sympy
(tests/references.py), the toy's from brute force (tests/test_properties.py).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import random
from pathlib import Path
from typing import Any, Iterator

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.budget import Budget
from solver.expansion import Run, SearchResult
from solver.run import SearchSettings as RunSearch
from solver.run import Settings, solve
from solver.searches import SEARCHES, get_search, register_search, search_names
from solver.searches.beam import confidences, gumbel_top
from solver.searches.mcts import MctsExtra, MctsOptions
from solver.testing import (
    Case,
    InvariantBroken,
    SearchSettings,
    budgets,
    check_search_invariants,
    run_case,
    settings_of,
)
from solver.testing import search_settings as kit_settings
from solver.testing.invariants import MCTS_VISITS, check_outcome
from solver.tools.audit import audit_trace
from solver.tools.cli import main
from solver.trace import Trace
from solver.trace_reader import read_trace
from tasks.game24 import Game24
from tests.profiles import examples
from tests.references import game24_ok, sym_values
from tests.test_properties import GAME24_PUZZLES, TOY_PUZZLES, ToyReach, game24_solvable, solvable_with_steps
from tests.test_trace_format import _documented

NEW = ("best-first", "mcts", "beam")


@pytest.fixture()
def restore_searches() -> Iterator[None]:
    saved = dict(SEARCHES)
    try:
        yield
    finally:
        SEARCHES.clear()
        SEARCHES.update(saved)


# ---- registered, listed, flags --------------------------------------------------------------------

def test_the_new_searches_are_registered_and_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(NEW) <= set(search_names())
    assert main(["list", "--json"]) == 0
    assert set(NEW) <= set(json.loads(capsys.readouterr().out)["searches"])


@pytest.mark.parametrize("argv, flag, method", [
    (["--method", "tot-bfs", "--iterations", "3"], "--iterations", "tot-bfs"),
    (["--method", "mcts", "--breadth", "3"], "--breadth", "mcts"),
    (["--method", "beam", "--rollout-depth", "2"], "--rollout-depth", "beam"),
    (["--method", "best-first", "--lambda", "0.3"], "--lambda", "best-first"),
    (["--method", "tot-complete", "--no-early-stop"], "--no-early-stop", "tot-complete"),
])
def test_a_flag_the_method_does_not_take_is_one_line(argv: list[str], flag: str, method: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "game24", "4 9 10 13", "--evaluator", "oracle", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"tot: error: {flag} is not an option of --method {method}")
    own = [spec.name for spec in SEARCHES[method].specs]
    spelled = {"mix": "--lambda", "early_stop": "--no-early-stop", "candidates": "--beam-candidates"}
    for opt in own:  # it lists what the method does take
        assert spelled.get(opt, "--" + opt.replace("_", "-")) in err


def test_the_methods_own_flags_are_taken(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "game24", "3 3 8 8", "--evaluator", "oracle", "--method", "mcts", "--iterations", "50",
                 "--exploration", "0.5", "--rollout-depth", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verified"]
    assert main(["solve", "game24", "4 9 10 13", "--evaluator", "oracle", "--method", "beam", "--breadth", "3",
                 "--beam-candidates", "40", "--lambda", "0.2", "--tau", "1", "--decay", "0.9", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verified"]


def test_unknown_method_and_bad_values_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "game24", "4 9 10 13", "--method", "mcst"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and all(m in err for m in NEW)
    for bad in (["--method", "mcts", "--iterations", "0"], ["--method", "beam", "--decay", "1.5"],
                ["--method", "beam", "--lambda", "-1"], ["--method", "mcts", "--exploration", "nan"]):
        assert main(["solve", "game24", "4 9 10 13", "--evaluator", "oracle", *bad]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith("tot: error:"), bad


def test_beam_says_once_when_it_has_no_log_likelihoods(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "game24", "--range", "901-903", "--method", "beam", "--evaluator", "oracle",
                 "--json"]) == 0
    err = capsys.readouterr().err
    assert err.count("gives no log-likelihoods") == 1
    assert main(["solve", "game24", "4 9 10 13", "--method", "mcts", "--evaluator", "oracle", "--json"]) == 0
    assert "log-likelihoods" not in capsys.readouterr().err


# ---- the kit's invariants, for every registered search ---------------------------------------------

def test_toy_invariants_of_the_new_searches() -> None:
    for max_depth in (1, 3):
        check_search_invariants(ToyReach(max_depth), TOY_PUZZLES, max_examples=examples(25),
                                settings=kit_settings(methods=NEW, max_depth=max_depth),
                                solvable=functools.partial(solvable_with_steps, steps=max_depth),
                                iff_methods=(("best-first", "oracle"), ("best-first", "prior")))


def test_game24_invariants_of_the_new_searches() -> None:
    check_search_invariants(Game24(), GAME24_PUZZLES, max_examples=examples(12),
                            settings=kit_settings(methods=NEW, max_breadth=3),
                            budget=budgets(max_calls=8, max_tokens=None, max_steps=6),
                            answer_ok=game24_ok, solvable=game24_solvable,
                            iff_methods=(("best-first", "oracle"), ("best-first", "prior")))


@settings(max_examples=examples(20))
@given(GAME24_PUZZLES)
def test_best_first_finds_an_answer_iff_sympy_says_one_exists(puzzle: str) -> None:
    # Nothing pruned: with the enumeration and any order (the exact oracle, or no judgement), the
    # search answers iff sympy finds 24, and a run without an answer proves there is none.
    expected = game24_solvable(puzzle)
    for evaluator in ("oracle", "prior", "random"):
        o = run_case(Game24(), Case(puzzle, settings_of("best-first", "enumerate", evaluator)), model=False)
        check_outcome(o, game24_ok)
        assert (o.result.answer is not None) == expected, (puzzle, evaluator)
        assert o.result.exhausted == (not expected)


async def _user_search(run: Run, options: Any) -> SearchResult:
    """A user's own search: depth-first, children in a seeded random order (a budget that runs out
    ends the run outside it: Run.conduct)."""
    rng = random.Random(5)
    run.start("random-order")
    stack = [run.root()]
    while stack:
        node = stack.pop()
        if node.depth >= run.task.max_depth:
            continue
        children = await run.step.expand(node)
        hit = run.first_answer(children)
        if hit is not None:
            return run.result(hit[0], hit[1], None)
        rest = [c for c in children if not c.solved]
        rng.shuffle(rest)
        stack.extend(rest)
    return run.result(None, None, None)


def test_the_kit_draws_every_registered_search_a_users_own_too(restore_searches: None) -> None:
    register_search("random-order", _user_search)
    drawn: set[str] = set()

    @settings(max_examples=200, database=None)
    @given(kit_settings())
    def collect(s: SearchSettings) -> None:
        drawn.add(s.method)

    collect()
    assert drawn == set(search_names())
    check_search_invariants(ToyReach(2), TOY_PUZZLES, max_examples=examples(10),
                            settings=kit_settings(methods=["random-order"]),
                            solvable=functools.partial(solvable_with_steps, steps=2))


def test_a_users_search_that_answers_unchecked_is_caught(restore_searches: None) -> None:
    async def liar(run: Run, options: Any) -> SearchResult:
        # Returns the first child of the root as an answer, whatever the gate said of it.
        children = await run.step.expand(run.root())
        node = children[0] if children else None
        return run.result(node, None if node is None else run.task.answer(node.state), None)

    register_search("liar", liar)
    with pytest.raises(InvariantBroken):
        check_search_invariants(ToyReach(3), ["0 5", "1 3"], max_examples=20, replay=False, iff=False,
                                settings=kit_settings(methods=["liar"], generators=["enumerate"], evaluators=["prior"]))


def test_mcts_visit_counts_that_do_not_add_up_are_caught(restore_searches: None) -> None:
    # The check can fail: the real MCTS, then one whose reported counts lose a visit.
    mcts = get_search("mcts")
    case = Case("4 9 10 13", settings_of("mcts", "enumerate", "random"))
    check_outcome(run_case(Game24(), case, model=False))

    async def miscounted(run: Run, options: Any) -> SearchResult:
        res = await mcts(run, options)
        assert isinstance(res.extra, MctsExtra)
        res.extra.visits[max(res.extra.visits)] += 1
        return res

    register_search("mcts", miscounted, options=MctsOptions)
    with pytest.raises(InvariantBroken, match=MCTS_VISITS):
        check_outcome(run_case(Game24(), case, model=False))


# ---- the beam's pieces -------------------------------------------------------------------------------

@given(st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6), st.just(float("nan"))), min_size=1, max_size=12))
def test_confidences_lie_in_floor_to_one_and_keep_the_order(scores: list[float | None]) -> None:
    conf = confidences(scores)
    assert all(0.01 - 1e-12 <= c <= 1.0 for c in conf)
    q = [(-1e18 if s is not None and s != s else round(s or 0.0, 3)) for s in scores]
    for (a, ca), (b, cb) in itertools.combinations(zip(q, conf, strict=True), 2):
        if a < b:
            assert ca <= cb
    if any(s == s for s in scores if s is not None) or None in scores:
        assert max(conf) == 1.0


@given(st.lists(st.floats(-20, 20), min_size=1, max_size=10), st.integers(1, 12), st.integers(0, 10**6))
def test_gumbel_top_draws_k_distinct(weights: list[float], k: int, seed: int) -> None:
    out = gumbel_top(weights, k, random.Random(seed))
    assert len(out) == min(k, len(weights)) and len(set(out)) == len(out)
    assert out == gumbel_top(weights, k, random.Random(seed))  # seeded: the same draw


def test_gumbel_top_draws_in_proportion() -> None:
    # P(first draw = i) = w_i / sum w: counted over many draws against the exact shares.
    weights = [1.0, 2.0, 5.0]
    rng = random.Random(1)
    counts = [0, 0, 0]
    for _ in range(20000):
        counts[gumbel_top([float(sympy.log(w)) for w in weights], 1, rng)[0]] += 1
    for c, w in zip(counts, weights, strict=True):
        assert abs(c / 20000 - w / sum(weights)) < 0.02


# ---- traces, tot show, tot audit -----------------------------------------------------------------

def _trace(method: str, puzzle: str, evaluator: str, **options: Any) -> Trace:
    s = Settings(search=RunSearch(method=method, generator="enumerate", evaluator=evaluator,
                                  options=get_search(method).options_from(options)))
    trace = Trace()
    asyncio.run(solve(Game24(), puzzle, s, None, trace))
    return trace


@pytest.mark.parametrize("method", NEW)
def test_traces_hold_only_documented_events_and_the_viewers_read_them(method: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.jsonl"
    assert main(["solve", "game24", "3 3 8 8", "--method", method, "--evaluator", "random", "--trace",
                 str(path), "--json"]) == 0
    events = read_trace(path)
    _documented(events)
    assert events[1]["event"] == "search" and events[1]["method"] == method
    capsys.readouterr()
    assert main(["show", str(path)]) == 0
    assert main(["audit", str(path)]) == 0
    assert method in capsys.readouterr().out


def _depth1_solvable(puzzle: str) -> int:
    """Distinct states one step from ``puzzle`` from which sympy still reaches 24."""
    nums = [sympy.Integer(int(x)) for x in puzzle.split()]
    states = set()
    for i, j in itertools.permutations(range(4), 2):
        a, b = nums[i], nums[j]
        rest = [nums[k] for k in range(4) if k not in (i, j)]
        for v in (a + b, a - b, a * b, *((a / b,) if b != 0 else ())):
            states.add(tuple(sorted([*rest, v])))
    return sum(sympy.Integer(24) in sym_values(s) for s in states)


@pytest.mark.parametrize("puzzle", ["4 9 10 13", "1 1 4 6", "2 5 8 11"])
def test_audit_counts_mcts_children_never_visited(puzzle: str) -> None:
    # One iteration expands the root and visits nothing below it: every solvable child is lost
    # to the search's judgement ("unvisited"), each counted once.
    trace = _trace("mcts", puzzle, "random", iterations=1)
    [group] = audit_trace(Game24(), trace).groups
    expected = _depth1_solvable(puzzle)
    assert group.overall.solvable == expected
    assert group.overall.false_prune_unvisited.k == expected == group.overall.false_prune.k
    assert group.overall.false_prune_beam.k == 0


@pytest.mark.parametrize("puzzle", ["4 9 10 13", "1 1 4 6", "2 5 8 11"])
def test_audit_counts_solvable_states_the_beam_cut(puzzle: str) -> None:
    # Every legal step drawn (40 candidates), one chain kept: at depth 1 the solvable states not
    # kept are the beam's false prunes.
    trace = _trace("beam", puzzle, "random", breadth=1, candidates=40, beam_runs=1)
    events = trace.events
    kept = {e["node"] for e in events if e["event"] == "keep"}
    depth1 = {e["node"] for e in events if e["event"] == "proposal" and e.get("depth") == 1 and "node" in e}
    [group] = audit_trace(Game24(), trace).groups
    fig = group.by_depth[1]
    solvable_kept = fig.solvable - fig.false_prune_beam.k
    assert fig.solvable == _depth1_solvable(puzzle)
    assert solvable_kept in (0, 1) and len(kept & depth1) == 1
    assert group.overall.false_prune_unvisited.k == 0


# ---- bench ---------------------------------------------------------------------------------------------

def test_bench_runs_the_new_searches_side_by_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    methods = ",".join(f"{m}:enumerate:oracle" for m in ("tot-complete", *NEW))
    assert main(["bench", "game24", "--generated", "--range", "1-4", "--methods", methods, "--out", str(out),
                 "--no-plots"]) == 0
    text = capsys.readouterr().out
    for m in NEW:
        assert f"{m}:enumerate:oracle" in text
    rows = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    assert {r["method"] for r in rows} == {f"{m}:enumerate:oracle" for m in ("tot-complete", *NEW)}
    for r in rows:  # a verified answer is one sympy accepts
        assert not r["verified"] or game24_ok(r["puzzle"], r["answer"])
    assert main(["bench", "game24", "--generated", "--range", "1-2", "--methods", "tot-bfs", "--iterations", "3",
                 "--out", str(tmp_path / "c"), "--no-plots"]) == 2


# ---- mcts --answers N --------------------------------------------------------------------------

def _one_step_to_24(puzzle: str) -> int:
    """Distinct two-number states reachable from ``puzzle`` in two steps that make 24 in one more
    (sympy): with every state tried, MCTS asked for many answers lists exactly one through each."""
    nums = [sympy.Integer(int(x)) for x in puzzle.split()]

    def steps(state: tuple[Any, ...]) -> set[tuple[Any, ...]]:
        out = set()
        for i, j in itertools.permutations(range(len(state)), 2):
            a, b = state[i], state[j]
            rest = [state[k] for k in range(len(state)) if k not in (i, j)]
            for v in (a + b, a - b, a * b, *((a / b,) if b != 0 else ())):
                out.add(tuple(sorted([*rest, v])))
        return out

    pairs = {p for s in steps(tuple(sorted(nums))) for p in steps(s)}
    return sum(sympy.Integer(24) in {a + b, a - b, b - a, a * b, *((a / b,) if b else ()), *((b / a,) if a else ())}
               for a, b in pairs)


@settings(max_examples=examples(10), deadline=None)
@given(GAME24_PUZZLES, st.sampled_from(["random", "oracle"]), st.integers(2, 4))
def test_mcts_asked_for_several_answers_lists_distinct_checked_ones_first_as_alone(
        puzzle: str, evaluator: str, n: int) -> None:
    def run(answers: int, iterations: int) -> SearchResult:
        s = Settings(search=RunSearch(method="mcts", generator="enumerate", evaluator=evaluator,
                                      options=MctsOptions(iterations=iterations, answers=answers)))
        return asyncio.run(solve(Game24(), puzzle, s, None))

    alone = run(1, 20_000)
    several = run(n, 20_000)
    listed = [a for a, _ in several.extra.answers or []]
    assert several.extra.answers is not None and len(listed) == len(set(listed)) <= n
    assert all(game24_ok(puzzle, a) and v for a, v in several.extra.answers or [])  # sympy's reading, not ours
    assert several.answer == alone.answer == (listed[0] if listed else None)
    every = run(10_000, 100_000)  # more than exist: it ends when every state was tried
    assert len(every.extra.answers or []) == _one_step_to_24(puzzle), every.extra.answers_note
    assert (every.extra.answers_note or "").startswith("every state was tried") or not game24_solvable(puzzle) \
        or len(every.extra.answers or []) == 0
    if len(listed) < n:
        assert several.extra.answers_note is not None


def test_mcts_answers_flag_prints_each_answer_and_why_fewer(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["solve", "game24", "4 9 10 13", "--method", "mcts", "--generator", "enumerate",
            "--evaluator", "oracle", "--iterations", "5000", "--answers"]
    assert main([*argv, "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["answers"]) == _one_step_to_24("4 9 10 13") < 50
    assert out["answers"][0]["answer"] == out["answer"] and out["answers_note"].startswith("every state was tried")
    assert main([*argv, "2"]) == 0
    text = capsys.readouterr().out
    assert "answers found: 2\n  1. " in text and "\n  2. " in text
    assert main([*argv, "0"]) == 2
    assert main(["solve", "game24", "4 9 10 13", "--method", "best-first", "--answers", "2"]) == 2
    assert "--answers is not an option of --method best-first" in capsys.readouterr().err


# ---- a puzzle given already solved -----------------------------------------------------------------

def _sudoku_ok(rows: list[str]) -> bool:
    """A 4x4 grid by hand: each row, column and 2x2 box holds 1-4 once."""
    cols = ["".join(r[i] for r in rows) for i in range(4)]
    boxes = ["".join(rows[r + dr][c + dc] for dr in (0, 1) for dc in (0, 1)) for r in (0, 2) for c in (0, 2)]
    return all(sorted(g) == list("1234") for g in [*rows, *cols, *boxes])


@pytest.mark.parametrize("method", ["tot-complete", "tot-bfs", "tot-dfs", "long", "best-first", "mcts", "beam"])
def test_a_puzzle_given_solved_is_answered_by_every_search_without_a_step(method: str) -> None:
    # Before: every search expanded the full grid's root, found no legal step, and the complete
    # ones said "no solution exists" (the oracle beside it disagreed).
    from tasks.sudoku.task import Sudoku

    grid = "1234|3412|2143|4321"
    assert _sudoku_ok(grid.split("|"))
    s = Settings(search=RunSearch(method=method, generator="enumerate", evaluator="oracle"))
    trace = Trace()
    res = asyncio.run(solve(Sudoku(), grid, s, None, trace))
    assert res.answer == grid and res.verified and not res.exhausted
    assert res.expanded == 0 and res.proposed == 0
    root = next(e for e in trace.events if e["event"] == "root")
    assert root.get("solved") is True
    _documented(trace.events)
    unsolved = asyncio.run(solve(Sudoku(), "12*4|3412|2143|4321", s, None, Trace()))
    assert unsolved.answer == grid and unsolved.expanded >= 1  # one blank: a step is taken


def test_a_seconds_budget_stops_a_model_free_evaluator_between_states(monkeypatch: pytest.MonkeyPatch) -> None:
    # The exact oracle makes no model call, where the budget used to be checked: a level of 30-odd
    # children, each judged in 0.05 s or more, ran past a 0.3 s budget by the whole level. Now the
    # budget is checked before each state it judges.
    import time as _time

    from tasks.game24.parts import Reach24

    judged: list[int] = []
    real = Reach24.oracle

    def slow(self: Reach24, state: Any) -> bool:
        judged.append(1)
        _time.sleep(0.05)
        return real(self, state)

    monkeypatch.setattr(Reach24, "oracle", slow)
    s = Settings(search=RunSearch(method="tot-bfs", generator="enumerate", evaluator="oracle"),
                 budget=Budget(seconds=0.3))
    res = asyncio.run(solve(Game24(), "4 9 10 13", s, None, Trace()))
    assert res.stopped_by == "seconds" and res.answer is None
    assert len(judged) <= 0.3 / 0.05 + 1  # each call sleeps at least 0.05 s: at most 7 fit in 0.3 s


@settings(max_examples=examples(10), deadline=None)
@given(GAME24_PUZZLES.filter(game24_solvable), st.integers(2, 4))
def test_mcts_answers_found_by_rollouts_are_listed_as_those_found_by_expansion(puzzle: str, n: int) -> None:
    # With rollouts an answer may be reached first by a rollout's random steps: it is the run's answer
    # alone, and the first listed when several are asked; every listed answer is checked by sympy.
    def run(answers: int) -> SearchResult:
        s = Settings(search=RunSearch(method="mcts", generator="enumerate", evaluator="random",
                                      options=MctsOptions(iterations=20_000, answers=answers, rollout_depth=3)))
        return asyncio.run(solve(Game24(), puzzle, s, None))

    alone, several = run(1), run(n)
    listed = [a for a, _ in several.extra.answers or []]
    assert alone.answer is not None and game24_ok(puzzle, alone.answer)
    assert len(listed) == len(set(listed)) and 1 <= len(listed) <= n
    assert all(game24_ok(puzzle, a) and v for a, v in several.extra.answers or [])
    assert several.answer == alone.answer == listed[0]


@pytest.mark.parametrize("method", ["tot-complete", "tot-bfs", "tot-dfs", "long", "best-first", "mcts", "beam"])
def test_every_search_reports_the_deepest_state_it_kept_when_unsolved(method: str) -> None:
    # Crosswords report an unsolved run's deepest state (letters right); Long's controller kept
    # none, so its output was the empty grid whatever it had filled. "1 1 1 1" has no answer, and
    # every step of it leaves three numbers that a further step can combine.
    s = Settings(search=RunSearch(method=method, generator="enumerate", evaluator="random"),
                 budget=Budget(steps=30))
    res = asyncio.run(solve(Game24(), "1 1 1 1", s, None, Trace()))
    assert res.answer is None and res.best is not None and res.best.depth >= 2
    assert len(res.best.state.numbers) == 4 - res.best.depth  # one number fewer a step
