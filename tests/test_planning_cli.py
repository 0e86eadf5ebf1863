"""tot solve/verify planning: exit codes, malformed input, and LLM+P/direct with a scripted model."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path

import pytest

from solver.budget import Budget
from solver.lm.client import LMClient
from solver.run import Settings
from solver.tools.cli import main
from tasks.planning.blocksworld import DOMAIN, problem
from tasks.planning.cli import PLUGIN
from tasks.planning.llmp import extract_problem, gate_problem
from tests.fakes import ScriptedBackend

PROBLEM = problem(4, 2, name="p01")


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "domain.pddl").write_text(DOMAIN)
    (tmp_path / "domain.nl").write_text("Blocks can be picked up, put down, stacked and unstacked.")
    (tmp_path / "p01.pddl").write_text(PROBLEM)
    (tmp_path / "p01.nl").write_text("Four blocks; move them into the goal towers.")
    (tmp_path / "p_example.pddl").write_text(problem(3, 9, name="ex"))
    (tmp_path / "p_example.nl").write_text("Three blocks.")
    return tmp_path


def test_solve_with_the_planner_and_verify_its_plan(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d, p = str(files / "domain.pddl"), str(files / "p01.pddl")
    assert main(["solve", "planning", "--domain", d, "--problem", p, "--method", "planner", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] and out["report"]["verified"]
    (files / "plan.txt").write_text("\n".join(out["plan"]) + "\n")
    assert main(["verify", "planning", "--domain", d, "--problem", p, str(files / "plan.txt")]) == 0
    (files / "short.txt").write_text("\n".join(out["plan"][:-1]) + "\n")
    assert main(["verify", "planning", "--domain", d, "--problem", p, str(files / "short.txt")]) == 1
    assert "goal" in capsys.readouterr().out


def test_tot_search_with_the_exact_oracle_gives_a_plan_list(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d, p = str(files / "domain.pddl"), str(files / "p01.pddl")
    assert main(["solve", "planning", "--domain", d, "--problem", p, "--generator", "enumerate",
                 "--evaluator", "oracle", "-b", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] and isinstance(out["plan"], list) and out["report"]["verified"]


def test_verify_reports_the_first_failing_step(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "bad.txt").write_text("(putdown b1)\n(pickup b1)\n")
    assert main(["verify", "planning", "--domain", str(files / "domain.pddl"), "--problem",
                 str(files / "p01.pddl"), str(files / "bad.txt")]) == 1
    assert "step 1 (putdown b1): precondition (holding b1) does not hold" in capsys.readouterr().out


@pytest.mark.parametrize("plan_text", ["(pickup b1\n", "pickup (b1)\n", "x" * 300_000])
def test_malformed_plan_files_exit_2(files: Path, plan_text: str, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "m.txt").write_text(plan_text)
    assert main(["verify", "planning", "--domain", str(files / "domain.pddl"), "--problem",
                 str(files / "p01.pddl"), str(files / "m.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1


@pytest.mark.parametrize("bad_problem", [
    "", "(define (problem q)", "(define (problem q) (:domain blocks) (:objects b1) (:init (on b1)) (:goal (clear b1)))",
    "(define (problem q) (:domain other) (:objects b1) (:init) (:goal (clear b1)))"])
def test_malformed_pddl_exits_2(files: Path, bad_problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "bad.pddl").write_text(bad_problem)
    assert main(["solve", "planning", "--domain", str(files / "domain.pddl"), "--problem",
                 str(files / "bad.pddl"), "--method", "planner"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1


def test_unsolvable_problem_is_one_clear_line(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "u.pddl").write_text("(define (problem u) (:domain blocks) (:objects b1) (:init (on-table b1) "
                                  "(clear b1) (arm-empty)) (:goal (on b1 b1)))")
    assert main(["solve", "planning", "--domain", str(files / "domain.pddl"), "--problem", str(files / "u.pddl"),
                 "--method", "planner"]) == 1
    assert "no plan: the problem has no plan (the planner proved it)" in capsys.readouterr().out


def test_missing_files_and_nl_without_llmp_exit_2(files: Path) -> None:
    d = str(files / "domain.pddl")
    assert main(["solve", "planning", "--domain", d, "--problem", str(files / "nope.pddl")]) == 2
    assert main(["solve", "planning", "--domain", d, "--nl", str(files / "p01.nl")]) == 2
    assert main(["solve", "planning", "--domain", "/dev/zero", "--problem", str(files / "p01.pddl")]) == 2


def _args(files: Path, method: str, **kw: object) -> argparse.Namespace:
    base = dict(domain=str(files / "domain.pddl"), problem=None, nl=str(files / "p01.nl"), no_example=False,
                repairs=2, planner_seconds=30.0, planner_mode="optimal", method=method, seed=0, json=True)
    base.update(kw)
    return argparse.Namespace(**base)


def _run(files: Path, method: str, answers: list[str], budget_calls: int | None = None,
         **kw: object) -> tuple[int, dict, ScriptedBackend]:
    backend = ScriptedBackend(lambda prompt, params, i: answers.pop(0) if answers else "")
    settings = Settings(budget=Budget(calls=budget_calls))
    code = asyncio.run(PLUGIN.run_method(_args(files, method, **kw), settings, lambda: LMClient(backend)))
    return code, backend, backend


def test_llmp_repairs_a_refused_problem_then_plans_and_checks_against_ground_truth(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = PROBLEM.replace("(:objects", "(:objects b9").replace("(arm-empty)", "(arm-empty) (levitating b1)")
    code, backend, _ = _run(files, "llmp", ["Here it is:\n" + wrong, "```\n" + PROBLEM + "\n```"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["solved"] and out["checked_against"] == "ground truth"
    assert out["attempts"] == 2 and "levitating" in out["refusals"][0]
    first, second = backend.requests[0][0], backend.requests[1][0]
    assert "An example planning problem is" in first and "levitating" in second


def test_llmp_plan_that_only_fits_the_models_own_problem_is_not_solved(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = problem(4, 5, name="p01")  # a well-formed but different problem
    code, _, _ = _run(files, "llmp", [other], no_example=True)
    out = json.loads(capsys.readouterr().out)
    assert out["checked_against"] == "ground truth" and not out["solved"] and code == 1
    (files / "p01.pddl").rename(files / "hidden.pddl")
    code, backend, _ = _run(files, "llmp", [other], no_example=True)
    out = json.loads(capsys.readouterr().out)
    assert out["checked_against"] == "the model's own problem" and not out["solved"]
    assert "An example planning problem" not in backend.requests[0][0]


def test_llmp_keeps_the_runs_call_budget(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, backend, _ = _run(files, "llmp", ["no pddl here"] * 5, repairs=3, budget_calls=2)
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["error"] == "the calls budget ran out" and len(backend.requests) == 2


def test_llmp_gives_up_after_the_repairs(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, backend, _ = _run(files, "llmp", ["no pddl here"] * 5, repairs=1)
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["plan"] is None and out["attempts"] == 2 and len(backend.requests) == 2


def test_direct_baseline_validates_the_written_plan(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _run(files, "direct", ["(putdown b1)\n(pickup b2)\n"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["plan"] == ["(putdown b1)", "(pickup b2)"] and not out["solved"]
    assert "step 1" in out["report"]["checks"][1]["detail"]


def test_gate_reasons() -> None:
    ok = PROBLEM
    assert gate_problem(DOMAIN, ok)[1] == []
    trivial = ok.split("(:goal")[0] + "(:goal (arm-empty)))"
    assert any("already holds" in r for r in gate_problem(DOMAIN, trivial)[1])
    contra = ok.split("(:goal")[0] + "(:goal (and (on b1 b2) (not (on b1 b2)))))"
    assert any("contradictory" in r for r in gate_problem(DOMAIN, contra)[1])
    assert extract_problem("text\n" + ok + "\nmore") == ok.strip()
    with pytest.raises(ValueError):
        extract_problem("(define (domain blocks))")


def test_generated_folder_has_llmp_layout_and_english_matches_pddl(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks.planning import blocksworld

    monkeypatch.setattr("sys.argv", ["blocksworld", str(tmp_path), "--blocks", "3", "--count", "2"])
    blocksworld.main()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["domain.nl", "domain.pddl", "p01.nl", "p01.pddl", "p02.nl", "p02.pddl",
                     "p_example.nl", "p_example.pddl"]
    nl, pddl = (tmp_path / "p01.nl").read_text(), (tmp_path / "p01.pddl").read_text()
    for line in nl.splitlines():
        words = line.rstrip(".").split()
        if "top" in words and "should" not in words:
            assert f"(on {words[0]} {words[-1]})" in pddl
        if "should" in words:
            assert f"(on {words[0]} {words[-1]})" in pddl.split(":goal")[1]


def test_bench_on_generated_domain_resumes_and_refuses_unknown_domains(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tasks.planning import blocksworld

    monkeypatch.setattr("sys.argv", ["blocksworld", str(tmp_path / "data" / "blocks"), "--count", "2"])
    blocksworld.main()
    argv = ["bench", "planning", "--llmp-dir", str(tmp_path / "data"), "--domains", "blocks", "--range", "1-2",
            "--methods", "tot-bfs-oracle", "--out", str(tmp_path / "out"), "--oracle-seconds", "5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| blocks | 2 | 2/2" in out
    rows = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert len(rows) == 2 and all(json.loads(r)["solved"] for r in rows)
    assert main(argv) == 0  # a rerun skips finished pairs
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == 2
    capsys.readouterr()
    assert main([*argv[:5], "nowhere", *argv[6:]]) == 2
    assert "unknown domain 'nowhere'" in capsys.readouterr().err
    # merge and report: the common table and the per-domain one, from the rows alone.
    other = [*argv[:-3], str(tmp_path / "out2"), *argv[-2:]]
    other[other.index("1-2")] = "1-1"
    assert main(other) == 0
    capsys.readouterr()
    assert main(["bench", "merge", str(tmp_path / "out"), str(tmp_path / "out2"), "--out", str(tmp_path / "m"),
                 "--no-plots"]) == 0
    merged = capsys.readouterr().out
    assert "| blocks | 2 | 2/2" in merged and re.search(r"tot-bfs-oracle\s+2/2\s+100.0%", merged)
    assert main(["bench", "report", str(tmp_path / "m"), "--no-plots", "--json"]) == 0
    [summary] = json.loads(capsys.readouterr().out)
    assert (summary["method"], summary["n"], summary["solved"]) == ("tot-bfs-oracle", 2, 2)
    other[other.index("5")] = "9"  # another oracle limit is another configuration
    assert main(other) == 2
    assert "another configuration" in capsys.readouterr().err


def test_planning_trace_proves_itself_and_a_tampered_one_does_not(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d, p, trace = str(files / "domain.pddl"), str(files / "p01.pddl"), files / "run.jsonl"
    assert main(["solve", "planning", "--domain", d, "--problem", p, "--generator", "enumerate",
                 "--evaluator", "oracle", "--method", "tot-bfs", "--trace", str(trace)]) == 0
    assert main(["verify", "--trace", str(trace)]) == 0
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    accepted = [e for e in events if e.get("event") == "proposal" and "node" in e]
    assert accepted, "the search accepted no step"
    # Swap the first accepted step for another action: the gate no longer leads to the recorded state.
    victim = accepted[0]["thought"]
    other = "(pickup b1)" if "pickup b1" not in victim else "(pickup b2)"
    tampered = trace.read_text().replace(json.dumps(victim), json.dumps(other), 1)
    trace.write_text(tampered)
    capsys.readouterr()
    assert main(["verify", "--trace", str(trace)]) == 1


def test_bench_runs_the_planner_alone_and_any_search_and_their_plans_are_valid_and_shortest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``tot bench planning --methods`` takes its own ``planner`` method and any registered search;
    every solved plan is checked here by the independent simulator and BFS of test_planning."""
    from tasks.planning import bench as planning_bench
    from tasks.planning import blocksworld
    from tests.test_planning import ref_shortest, ref_step, to_atoms, world_of

    monkeypatch.setattr("sys.argv", ["blocksworld", str(tmp_path / "data" / "blocks"), "--blocks", "4",
                                     "--count", "2"])
    blocksworld.main()
    runs: list[str] = []
    real_plan = planning_bench.plan

    def counting_plan(*a: object, **kw: object) -> object:
        runs.append(str(kw.get("mode")))
        return real_plan(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(planning_bench, "plan", counting_plan)
    methods = "planner,best-first:enumerate:oracle,mcts:enumerate:oracle"
    argv = ["bench", "planning", "--llmp-dir", str(tmp_path / "data"), "--domains", "blocks", "--range", "1-2",
            "--methods", methods, "--out", str(tmp_path / "out"), "--oracle-seconds", "5",
            "--planner-seconds", "20", "--optimal-seconds", "20"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| blocks | 2 | 2/2 (2 opt) |" in out  # the planner alone: both solved, both proved optimal
    # one optimal planner run a problem: the planner method reuses the optimal-length run
    assert runs == ["optimal", "optimal"]
    rows = [json.loads(r) for r in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert sorted({r["method"] for r in rows}) == sorted(methods.split(","))
    for r in rows:
        text = (tmp_path / "data" / "blocks" / f"p{r['problem']:02d}.pddl").read_text()
        world, goal = world_of(text)
        assert r["solved"], r
        for step in r["plan"]:
            name, *args = step.strip("()").split()
            nxt = ref_step(world, name, tuple(args))
            assert nxt is not None, f"{step} not applicable for the independent simulator"
            world = nxt
        assert goal <= to_atoms(world)
        if r["method"] == "planner":
            assert r["optimal"] and len(r["plan"]) == ref_shortest(*world_of(text)) == r["optimum"]
            assert r["seconds"] > 0 and r["calls"] == 0
    capsys.readouterr()
    assert main([*argv[:9], "planner,cot", *argv[10:]]) == 2
    err = capsys.readouterr().err
    assert "unknown method 'cot'" in err and "planner" in err and "best-first" in err


# ---- each method with no flags: the settings it ran with, read from its output and trace ----------

def _fake_model(monkeypatch: pytest.MonkeyPatch, backend: ScriptedBackend) -> list[Settings]:
    """``tot``'s model client replaced by ``backend``; returns the settings each client was made with."""
    from solver.tools import cli

    made: list[Settings] = []

    def make(s: Settings, *_: object) -> LMClient:
        made.append(s)
        return LMClient(backend)
    monkeypatch.setattr(cli, "make_client", make)
    return made


def test_llmp_with_no_flags_writes_under_the_problem_grammar(
        files: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    head, body = PROBLEM[: PROBLEM.index("(:init")].rstrip(), PROBLEM[PROBLEM.index("(:init"):]
    made = _fake_model(monkeypatch, ScriptedBackend(
        lambda prompt, params, i: "" if params.grammar is None else head if "(:objects" in params.grammar
        else " " + body.strip()))
    assert main(["solve", "planning", "--domain", str(files / "domain.pddl"), "--nl", str(files / "p01.nl"),
                 "--method", "llmp", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["grammar"] == "on" and out["attempts"] == 1 and out["solved"]
    assert made[0].model.grammar and not made[0].model.grammar_forced  # --grammar auto


def test_llmp_with_grammar_off_writes_unconstrained(
        files: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    backend = ScriptedBackend(lambda prompt, params, i: PROBLEM if params.grammar is None else "")
    _fake_model(monkeypatch, backend)
    assert main(["solve", "planning", "--domain", str(files / "domain.pddl"), "--nl", str(files / "p01.nl"),
                 "--method", "llmp", "--grammar", "off", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["grammar"] == "off"
    assert [p.grammar for _, p in backend.requests] == [None]


@pytest.mark.parametrize("method", ["tot-complete", "tot-bfs", "tot-dfs", "long", "best-first", "mcts", "beam"])
def test_each_search_with_no_flags_runs_the_documented_defaults(
        method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from solver.searches import SEARCHES

    assert method in SEARCHES  # a search added later is named here too (see the next test)
    _fake_model(monkeypatch, ScriptedBackend(lambda prompt, params, i: "", scorer=lambda prompt, c: -1.0))
    trace = tmp_path / "t.jsonl"
    main(["solve", "game24", "4 9 10 13", "--method", method, "--trace", str(trace), "--json"])
    start = next(e for e in map(json.loads, trace.read_text().splitlines()) if e["event"] == "start")
    assert (start["method"], start["generator"], start["evaluator"]) == (method, "enumerate", "likelihood")
    assert start["grammar"]["on"] is True and start["gate"] is True and start["seed"] == 0


def test_the_no_flags_test_names_every_registered_search() -> None:
    from solver.searches import SEARCHES

    assert sorted(SEARCHES) == sorted(["tot-complete", "tot-bfs", "tot-dfs", "long", "best-first", "mcts", "beam"])
