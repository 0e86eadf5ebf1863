"""The planner interface and its backends: every installed backend finds plans the independent
blocksworld simulator accepts, optimal ones as short as its breadth-first search; "optimal" is
reported exactly when an optimal search finished; a backend's bad plan is never passed on; an
unknown planner is one line; every LLM+P problem round-trips through the PDDL every backend reads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from solver.task import Thought
from solver.tools.cli import main
from tasks.planning import parts
from tasks.planning.blocksworld import DOMAIN, problem
from tasks.planning.cli import PLUGIN
from tasks.planning.files import LLMP_DOMAINS, domain_file, join_puzzle, llmp_dir, read_text
from tasks.planning.parts import PlannerJudge
from tasks.planning.task import Planning
from tests.test_planning import LAMP, LAMP_P, ref_shortest, ref_step, to_atoms, world_of
from verifiers import planner as planner_mod
from verifiers.pddl_model import parse_problem
from verifiers.pddl_write import write_domain, write_problem
from verifiers.planner import BACKENDS, available, plan
from verifiers.planner_pyperplan import Raw
from verifiers.planning import GroundAction, plan_is_optimal, report_plan
from verifiers.verdict import Valid

INSTALLED = available()


def test_the_compiled_planner_is_installed_where_the_test_extra_is() -> None:
    # CI installs '.[test]', which carries the compiled planners: a missing wheel must fail there,
    # not turn the Fast Downward and pymimir cases below into silent absences.
    if os.environ.get("CI"):
        assert "fast-downward" in INSTALLED and "pymimir" in INSTALLED
    assert "pyperplan" in INSTALLED  # the fallback is always there


@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("seed", range(4))
def test_optimal_plans_are_shortest_for_the_independent_simulator(name: str, seed: int) -> None:
    text = problem(5, seed)
    prob = parse_problem(DOMAIN, text)
    found = plan(prob, time_limit=60, mode="optimal", planner=name)
    assert found.status == "solved" and found.plan is not None and found.planner == name
    world, goal = world_of(text)
    for act in found.plan:
        nxt = ref_step(world, act.name, act.args)
        assert nxt is not None, f"{act.text()} not applicable for the independent simulator"
        world = nxt
    assert goal <= to_atoms(world)
    shortest = ref_shortest(*world_of(text))
    assert found.optimal and found.optimal_length == len(found.plan) == shortest


@pytest.mark.parametrize("name", INSTALLED)
def test_satisficing_plans_are_valid_but_not_called_optimal(name: str) -> None:
    text = problem(6, 3)
    found = plan(parse_problem(DOMAIN, text), time_limit=60, mode="satisficing", planner=name)
    assert found.status == "solved" and found.plan is not None
    world, goal = world_of(text)
    for act in found.plan:
        world = ref_step(world, act.name, act.args)
        assert world is not None
    assert goal <= to_atoms(world)
    assert not found.optimal and found.optimal_length is None


@pytest.mark.parametrize("name", INSTALLED)
def test_negative_preconditions_constants_equality_and_dead_ends(name: str) -> None:
    prob = parse_problem(LAMP, LAMP_P)
    found = plan(prob, time_limit=30, planner=name)
    # switch-on master, then l1, then pair l1 master (needs master on, l1 != master): 3 steps
    assert found.status == "solved" and found.plan is not None and len(found.plan) == 3
    dead = prob.init - {("intact", "l1")}
    assert plan(prob, dead, time_limit=30, planner=name).status == "unsolvable"
    judge = PlannerJudge(30, "optimal", name)
    task = Planning(planner=name)
    root = task.root(join_puzzle(LAMP, LAMP_P))
    assert judge.oracle_verdict(root) is True and judge.distance(root) == 3


@pytest.mark.parametrize("name", INSTALLED)
def test_no_time_is_unknown_never_a_guess(name: str) -> None:
    found = plan(parse_problem(DOMAIN, problem(9, 1)), time_limit=0.0, planner=name)
    assert found.status == "unknown" and found.plan is None and not found.optimal


def test_a_backends_invalid_plan_is_not_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def liar(problem, state, seconds, mode):  # type: ignore[no-untyped-def]
        return Raw("solved", (GroundAction("pickup", ("b1",)), GroundAction("pickup", ("b1",))), 1)

    monkeypatch.setitem(BACKENDS, "liar", (liar, lambda: True))
    found = plan(parse_problem(DOMAIN, problem(4, 2)), time_limit=5, planner="liar")
    assert found.status == "unknown" and found.plan is None and not found.optimal
    assert "failed validation" in found.detail and "step 2 (pickup b1)" in found.detail


def test_unknown_planner_is_one_line_naming_the_available_ones(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(problem(3, 1))
    assert main(["solve", "planning", "--domain", str(tmp_path / "d.pddl"), "--problem", str(tmp_path / "p.pddl"),
                 "--method", "planner", "--planner", "lapkt-x"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown planner 'lapkt-x'" in err and "pyperplan" in err


@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("mode", ["optimal", "satisficing"])
def test_json_says_optimal_exactly_when_the_optimal_search_finished(
        name: str, mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = problem(4, 2)
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(text)
    assert main(["solve", "planning", "--domain", str(tmp_path / "d.pddl"), "--problem", str(tmp_path / "p.pddl"),
                 "--method", "planner", "--planner", name, "--planner-mode", mode, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] and out["planner_name"] == name
    if mode == "optimal":
        assert out["optimal"] is True and out["planner_optimal"] is True
        assert out["optimal_length"] == len(out["plan"]) == ref_shortest(*world_of(text))
        assert "proved optimal" in out["planner"]
    else:
        assert out["optimal"] is False and out["optimal_length"] is None and out["planner_optimal"] is False
        assert "optimality not proved" in out["planner"]


def test_text_output_names_the_planner_at_the_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(problem(3, 1))
    assert main(["solve", "planning", "--domain", str(tmp_path / "d.pddl"), "--problem", str(tmp_path / "p.pddl"),
                 "--method", "planner"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"planner: {INSTALLED[0]}")


def test_oracle_remembers_the_states_along_a_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = planner_mod.plan

    def counting(*a, **k):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(parts, "plan", counting)
    task = Planning(oracle_mode="optimal", planner="pyperplan")
    root = task.root(join_puzzle(DOMAIN, problem(4, 2)))
    judge = PlannerJudge(30, "optimal", "pyperplan")
    first = judge.distance(root)
    assert first is not None and first > 0 and len(calls) == 1
    found = real(root.problem, root.atoms, 30, "optimal", "pyperplan")
    assert found.plan is not None
    state = root
    for k, act in enumerate(found.plan[:-1], 1):
        verdict = task.check(state, Thought(act.text()))
        assert isinstance(verdict, Valid)
        state = verdict.state
        assert judge.distance(state) == first - k  # known: the rest of an optimal plan is optimal
    assert len(calls) == 1


def _shared() -> Path | None:
    try:
        return llmp_dir()
    except ValueError:
        return None


SHARED = _shared()


@pytest.mark.skipif(SHARED is None, reason="LLM+P's data (../shared/data/llmp) is not present")
@pytest.mark.parametrize("domain", LLMP_DOMAINS)
def test_every_llmp_problem_is_written_back_as_the_same_problem(domain: str) -> None:
    assert SHARED is not None
    folder = SHARED / domain
    dom = read_text(domain_file(folder), "domain")
    for i in range(1, 21):
        p = parse_problem(dom, read_text(folder / f"p{i:02d}.pddl", "problem"))
        q = parse_problem(write_domain(p), write_problem(p))
        assert sorted(p.objects) == sorted(q.objects) and p.init == q.init and set(p.goal) == set(q.goal)
        assert [(s.name, s.params, s.pre, s.add, s.delete) for s in p.schemas] == \
            [(s.name, s.params, s.pre, s.add, s.delete) for s in q.schemas]
        c = parse_problem(write_domain(p, costs=True), write_problem(p, costs=True))  # for Fast Downward
        assert c.action_costs == p.action_costs and c.init == p.init
        if p.action_costs:
            assert [(s.name, s.cost or 0) for s in p.schemas] == [(s.name, s.cost) for s in c.schemas]


@pytest.mark.skipif(SHARED is None or "fast-downward" not in INSTALLED,
                    reason="needs LLM+P's data (../shared/data/llmp) and Fast Downward")
def test_floortile_costs_as_fast_downward_alone_on_the_original_files(tmp_path: Path) -> None:
    # floortile declares action costs and minimises them: the project's plan must cost what Fast
    # Downward's own driver finds on the original files (its plan file ends "; cost = N").
    import subprocess
    import sys

    from verifiers.planner_fd import driver
    assert SHARED is not None
    folder = SHARED / "floortile"
    dom_file, prob_file = domain_file(folder), folder / "p02.pddl"
    subprocess.run([sys.executable, str(driver()), "--plan-file", str(tmp_path / "plan"), str(dom_file),
                    str(prob_file), "--search", "astar(lmcut())"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=120)
    alone = int((tmp_path / "plan").read_text().split("; cost = ")[1].split()[0])
    prob = parse_problem(read_text(dom_file, "domain"), read_text(prob_file, "problem"))
    found = plan(prob, time_limit=120, mode="optimal", planner="fast-downward")
    assert found.optimal and found.plan is not None and found.optimal_cost == alone
    prices = {"change-color": 5, "paint-up": 2, "paint-down": 2, "up": 3, "down": 1, "right": 1, "left": 1}
    assert sum(prices[a.name] for a in found.plan) == alone  # the domain file's prices, copied by hand


@pytest.mark.skipif(SHARED is None, reason="LLM+P's data (../shared/data/llmp) is not present")
@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.parametrize("domain", LLMP_DOMAINS)
def test_the_first_problem_of_every_llmp_domain_is_planned(name: str, domain: str) -> None:
    # Fast Downward solves every p01 in well under a second; pyperplan's search may run out of
    # its time on barman (that is "unknown", never a wrong answer), but it must read and search it.
    assert SHARED is not None
    folder = SHARED / domain
    p = parse_problem(read_text(domain_file(folder), "domain"), read_text(folder / "p01.pddl", "problem"))
    found = plan(p, time_limit=60 if name == "fast-downward" else 5, mode="satisficing", planner=name)
    assert found.status in (("solved",) if name == "fast-downward" else ("solved", "unknown")), found.summary()


def test_the_oracle_runs_in_process_unless_a_planner_is_named_and_the_trace_says_which() -> None:
    from tasks.planning.parts import PlanningOptions

    assert Planning().planner == "pyperplan"
    for name in INSTALLED:
        opts = [p for p in Planning(planner=name).parts if isinstance(p, PlanningOptions)][0].options()
        assert opts["oracle_planner"] == name
        assert PLUGIN.task_from_options(opts).planner == name


def test_without_fast_downward_the_fallback_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS, "fast-downward", (BACKENDS["fast-downward"][0], lambda: False))
    assert available()[0] == "pyperplan" and "fast-downward" not in available()
    line = planner_mod.planner_line(None)
    assert line.startswith("planner: pyperplan") and "not installed" in line
    with pytest.raises(ValueError, match="not installed.*available: pyperplan"):
        planner_mod.resolve("fast-downward")


# A walk where the domain's costs and the number of actions disagree: two cheap steps (a -> b -> c,
# cost 1 each) or one dear jump (a -> c, cost 10). The fewest actions is the jump; the cheapest is
# the two steps. ``wait`` declares no cost: under the metric it costs 0, as Fast Downward reads it.
COST_DOMAIN = """(define (domain walk) (:requirements :typing :action-costs) (:types place)
 (:predicates (at ?p - place) (road ?a - place ?b - place) (jump ?a - place ?b - place) (rested))
 (:functions (total-cost))
 (:action step :parameters (?a - place ?b - place) :precondition (and (at ?a) (road ?a ?b))
  :effect (and (not (at ?a)) (at ?b) (increase (total-cost) 1)))
 (:action leap :parameters (?a - place ?b - place) :precondition (and (at ?a) (jump ?a ?b))
  :effect (and (not (at ?a)) (at ?b) (increase (total-cost) 10)))
 (:action wait :parameters () :precondition (and) :effect (and (rested))))"""
COST_PROBLEM = """(define (problem w1) (:domain walk) (:objects a b c - place)
 (:init (at a) (road a b) (road b c) (jump a c) (= (total-cost) 0))
 (:goal (and (at c) (rested))) (:metric minimize (total-cost)))"""
# The test's own prices and its own cheapest and shortest plans, found by hand from the text above.
PRICES = {"step": 1, "leap": 10, "wait": 0}
CHEAPEST, SHORTEST = 2, 2  # (step a b) (step b c) (wait) costs 2; (leap a c) (wait) has 2 actions


def ref_cost(steps: list[str]) -> int:
    return sum(PRICES[s.strip("()").split()[0]] for s in steps)


@pytest.mark.parametrize("name", INSTALLED)
def test_action_costs_are_minimised_where_the_backend_can_and_said_where_not(name: str) -> None:
    prob = parse_problem(COST_DOMAIN, COST_PROBLEM)
    assert prob.action_costs
    found = plan(prob, time_limit=30, mode="optimal", planner=name)
    assert found.plan is not None
    steps = [a.text() for a in found.plan]
    assert found.cost == ref_cost(steps)  # the simulator's count, checked against the test's prices
    if name in planner_mod.HONOURS_COSTS:
        assert ref_cost(steps) == CHEAPEST and len(steps) == 3
        assert found.optimal and found.optimal_cost == CHEAPEST and found.optimum == CHEAPEST
        assert "proved optimal (the least total cost)" in found.summary()
    else:  # the backend counted actions: the jump, fewest actions proved, cheapest not claimed
        assert len(steps) == SHORTEST and ref_cost(steps) == 10
        assert not found.optimal and found.fewest_actions and found.optimum is None
        assert f"{name} does not use the domain's action costs" in found.summary()
    plain = plan(parse_problem(DOMAIN, problem(3, 1)), time_limit=30, mode="optimal", planner=name)
    assert plain.optimal and "cost" not in plain.summary()


def test_without_the_metric_every_action_counts_one_as_fast_downward_reads_it() -> None:
    prob = parse_problem(COST_DOMAIN, COST_PROBLEM.replace("(:metric minimize (total-cost))", ""))
    assert prob.uses_costs and not prob.action_costs
    rep = report_plan(prob, "(leap a c)\n(wait)", SHORTEST)
    assert rep.verified and [c.passed for c in rep.checks if c.name == "optimal length"] == [True]
    for name in INSTALLED:
        found = plan(prob, time_limit=30, mode="optimal", planner=name)
        assert found.optimal and found.plan is not None and len(found.plan) == SHORTEST


def test_the_report_judges_a_plan_by_its_total_cost() -> None:
    prob = parse_problem(COST_DOMAIN, COST_PROBLEM)
    dear = report_plan(prob, "(leap a c)\n(wait)", CHEAPEST)
    cheap = report_plan(prob, "(wait)\n(step a b)\n(step b c)", CHEAPEST)
    assert dear.verified and cheap.verified  # both reach the goal; only one is the cheapest
    assert not plan_is_optimal(dear) and plan_is_optimal(cheap)
    assert any(c.name == "optimal cost" and "total cost 10, least 2" in c.detail for c in dear.checks)


def test_costs_the_reader_cannot_honour_are_refused_in_one_line() -> None:
    fluent = COST_DOMAIN.replace("(increase (total-cost) 10)", "(increase (total-cost) (dist ?a ?b))").replace(
        "(:functions (total-cost))", "(:functions (total-cost) (dist ?a - place ?b - place))")
    with pytest.raises(ValueError, match="action leap's cost is not a number"):
        parse_problem(fluent, COST_PROBLEM)
    for bad, why in (("-3", "Negative numbers are not allowed"), ("2.5", "Fractional numbers are not supported")):
        with pytest.raises(ValueError, match=f"action 'leap': {why}"):
            parse_problem(COST_DOMAIN.replace("(increase (total-cost) 10)", f"(increase (total-cost) {bad})"),
                          COST_PROBLEM)


def test_written_costs_read_back_the_same() -> None:
    prob = parse_problem(COST_DOMAIN, COST_PROBLEM)
    again = parse_problem(write_domain(prob, costs=True), write_problem(prob, costs=True))
    assert again.action_costs and {s.name: s.cost for s in again.schemas} == {"step": 1, "leap": 10, "wait": 0}
    bare = parse_problem(write_domain(prob), write_problem(prob))  # for backends that count actions
    assert not bare.uses_costs and not bare.action_costs


@pytest.mark.parametrize("flag", [["--trace", "t.jsonl"], ["--iterations", "5"], ["--evaluator", "oracle"],
                                  ["--generator", "propose"], ["--depth", "3"], ["--beam-runs", "2"]])
@pytest.mark.parametrize("method", ["planner", "llmp", "direct"])
def test_a_search_flag_given_to_a_planning_method_is_refused_in_one_line(
        flag: list[str], method: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # planner, llmp and direct are not searches over thoughts: a search's flag would be ignored
    # (--trace wrote no file), so it is refused before anything runs.
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(problem(3, 1))
    argv = ["solve", "planning", "--domain", str(tmp_path / "d.pddl"), "--problem", str(tmp_path / "p.pddl"),
            "--method", method, *[str(tmp_path / f) if f.endswith(".jsonl") else f for f in flag]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{flag[0]} is not an option of --method {method}" in err
    assert not (tmp_path / "t.jsonl").exists()
    assert main(argv[:-len(flag)]) == (0 if method == "planner" else 2)  # llmp and direct need --nl


def test_pyperplan_checks_its_deadline_before_each_heuristic_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake clock that advances one second a heuristic evaluation: with a 2.5 s limit the search
    # may evaluate the root and two successors, then stops ("unknown"), instead of evaluating every
    # successor of its expansion first (it ran 23 s past a 30 s limit on tyreworld p17).
    import verifiers.planner_pyperplan as pp

    clock = [0.0]
    monkeypatch.setattr(pp, "time", type("Clock", (), {"monotonic": staticmethod(lambda: clock[0])}))
    calls: list[int] = []
    real = pp._Compiled.heuristic

    def slow(self: pp._Compiled, mode: pp.Mode, task: object) -> object:
        h = real(self, mode, task)  # type: ignore[arg-type]

        def tick(node: object) -> float:
            calls.append(1)
            clock[0] += 1.0
            return h(node)  # type: ignore[operator,no-any-return]
        return tick

    monkeypatch.setattr(pp._Compiled, "heuristic", slow)
    prob = parse_problem(DOMAIN, problem(8, 1))
    successors = pp.applicable_actions(prob, prob.init)
    assert len(successors) > 3  # so that evaluating them all would pass the deadline by more than one
    raw = pp.search(prob, prob.init, 2.5, "optimal")
    assert raw.status == "unknown" and len(calls) == 3
