"""Command-line binding of planning: ``tot solve planning``, ``tot verify planning`` and ``tot export planning``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

from solver.budget import BudgetExhausted
from solver.lm.client import LMClient
from solver.run import Settings, usage_for
from tasks.planning import export
from tasks.planning.files import join_puzzle, read_text
from tasks.planning.llmp import Example, Inputs, Outcome, example_plan, run_direct, run_llmp
from tasks.planning.task import Planning
from verifiers.pddl_model import parse_problem
from verifiers.planner import BACKENDS, plan, planner_line, resolve
from verifiers.planning import parse_plan, read_plan, report_plan

# Methods of this task beside the search methods: the model writes the problem (llmp) or the
# plan (direct); "planner" runs the planner alone, no model.
METHODS = ("llmp", "direct", "planner")


def _nl_inputs(args: argparse.Namespace) -> Inputs:
    """The English problem, its domain (PDDL and English) and the one example, from files beside it."""
    domain_pddl = read_text(args.domain, "domain")
    folder = Path(args.nl).parent if args.nl else Path(args.domain).parent
    domain_nl_path = Path(args.domain).parent / "domain.nl"
    domain_nl = read_text(domain_nl_path, "domain description") if domain_nl_path.is_file() else ""
    problem_nl = read_text(args.nl, "problem description") if args.nl else ""
    truth = None
    if args.problem:
        truth = read_text(args.problem, "problem")
    elif args.nl and Path(args.nl).with_suffix(".pddl").is_file():
        truth = read_text(Path(args.nl).with_suffix(".pddl"), "problem")
    example = None
    if not args.no_example:
        ex_nl, ex_pddl = folder / "p_example.nl", folder / "p_example.pddl"
        if not (ex_nl.is_file() and ex_pddl.is_file()):
            raise ValueError(f"no example p_example.nl/.pddl in {folder} (give --no-example to run without one)")
        ex_text = read_text(ex_pddl, "example problem")
        example = Example(read_text(ex_nl, "example description"), ex_text,
                          example_plan(domain_pddl, ex_text) if args.method == "direct" else "")
    return Inputs(domain_pddl, domain_nl, problem_nl, example, truth)


def print_outcome(out: Outcome, as_json: bool) -> None:
    if as_json:
        print(json.dumps(out.to_json(), ensure_ascii=False), flush=True)
        return
    if out.grammar not in ("on", "off"):
        print(out.grammar)  # why the problem grammar could not be built (the run went on without it)
    for i, r in enumerate(out.refusals, 1):
        print(f"refused attempt {i}: {r}")
    if out.planner:
        print(f"planner: {out.planner}")
    if out.plan is not None:
        print("plan:" + ("".join("\n  " + a for a in out.plan) if out.plan else " (empty)"))
    if out.error:
        print(f"no plan: {out.error}")
    if out.report is not None:
        print(f"checked against {out.checked_against}"
              + (" (no ground-truth problem was given: the plan is NOT checked against the real problem)"
                 if out.checked_against != "ground truth" else ""))
        print("\n".join(out.report.lines()))


class PlanningPlugin:
    name = "planning"
    help = "classical planning from PDDL (LLM+P, ToT over actions, direct plans; every plan validated)"
    methods = METHODS

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--domain", required=True, help="domain PDDL file")
        parser.add_argument("--problem", default=None, help="problem PDDL file (with --nl: the ground truth)")
        parser.add_argument("--nl", default=None, help="the problem in English (--method llmp or direct)")
        parser.add_argument("--no-example", action="store_true", help="llmp/direct: without the one example")
        parser.add_argument("--repairs", type=int, default=2, help="llmp: repairs after a refused problem")
        parser.add_argument("--planner-seconds", type=float, default=30.0, help="planner time limit")
        parser.add_argument("--planner-mode", choices=["optimal", "satisficing"], default="optimal",
                            help="optimal: A* with LM-cut (fewest actions; the least total cost where the problem "
                                 "minimises action costs, with Fast Downward); satisficing: lama-first (Fast "
                                 "Downward) or GBFS with FF (pyperplan)")
        parser.add_argument("--planner", default=None, metavar="NAME",
                            help=f"planner backend ({', '.join(BACKENDS)}; default: fast-downward when "
                                 f"installed, else pyperplan; the exact oracle runs pyperplan in process "
                                 f"unless one is named)")
        parser.add_argument("--oracle-seconds", type=float, default=10.0, help="oracle evaluator: planner limit")
        parser.add_argument("--max-steps", type=int, default=40, help="longest plan the search builds")

    def _puzzle(self, args: argparse.Namespace) -> str:
        if args.problem is None:
            raise ValueError("give --problem PROBLEM.pddl (or --nl PROBLEM.nl with --method llmp or direct)")
        domain, prob = read_text(args.domain, "domain"), read_text(args.problem, "problem")
        parse_problem(domain, prob)  # bad PDDL fails here, in one line
        return join_puzzle(domain, prob)

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        if args.nl and args.method not in ("llmp", "direct"):
            raise ValueError("--nl (an English problem) needs --method llmp or direct; search needs --problem PDDL")
        return [(Path(args.problem).stem, self._puzzle(args))]

    def make_task(self, args: argparse.Namespace) -> Planning:
        if getattr(args, "planning_export", False):  # tot export: the optimal planner's exact distances
            return export.make_task(args)
        planner = getattr(args, "planner", None)
        if planner is not None:
            resolve(planner)  # an unknown or missing one is a one-line error before the search
        return Planning(max_depth=getattr(args, "max_steps", 40), oracle_seconds=getattr(args, "oracle_seconds", 10.0),
                        planner=planner)  # its oracle's backend is recorded in the trace's options

    # ``tot export planning`` (solver/tools/export.py): LLM+P problems from the user's folder;
    # tasks/planning/export.py holds out the README's test problems and their twins.
    export_splits = export.SPLITS
    held_out = export.HELD_OUT
    export_max_states = export.MAX_STATES
    export_shared_states = False  # a state is its atoms: two problems may share atoms, never their goal

    def add_export_args(self, parser: argparse.ArgumentParser) -> None:
        export.add_export_args(parser)

    def export_puzzles(self, split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
        return export.export_puzzles(split, args)

    def held_out_puzzles(self, args: argparse.Namespace) -> set[str]:
        return export.held_out_puzzles(args)

    def export_options(self, args: argparse.Namespace) -> dict[str, object]:
        return export.export_options(args)

    def task_from_options(self, options: dict[str, object]) -> Planning:
        """The task a trace's run header describes (``tot verify --trace``, ``tot audit``)."""
        depth, seconds = options.get("max_depth", 40), options.get("oracle_seconds", 10.0)
        mode = options.get("oracle_mode", "satisficing")
        # The backend a trace's run used, when it is installed here; else the default one (both
        # answer the oracle's question; only their speed differs).
        planner = options.get("oracle_planner")
        if not isinstance(planner, str) or planner not in BACKENDS or not BACKENDS[planner][1]():
            planner = None
        if type(depth) is not int or depth < 1:
            raise ValueError(f"bad planning max_depth {depth!r} in the trace")
        if type(seconds) not in (int, float) or not 0 < float(seconds) <= 3600:  # type: ignore[arg-type]
            raise ValueError(f"bad planning oracle_seconds {seconds!r} in the trace")
        if mode not in ("optimal", "satisficing"):
            raise ValueError(f"bad planning oracle_mode {mode!r} in the trace")
        return Planning(max_depth=depth, oracle_seconds=float(seconds), oracle_mode=mode,  # type: ignore[arg-type]
                        planner=planner)

    def report(self, task: Planning, puzzle: str, res: Any) -> tuple[dict[str, Any], str]:
        if not res.answer:
            return {"plan": None}, ""
        rep = task.report_answer(puzzle, res.answer)
        text = "plan:\n  " + res.answer.replace("\n", "\n  ")
        return {"plan": res.answer.splitlines(), "report": rep.to_json()}, text

    async def run_method(self, args: argparse.Namespace, settings: Settings,
                         make_client: Callable[[], LMClient]) -> int:
        """``--method llmp``, ``direct`` or ``planner``: not a search over thoughts. The command line
        gives the run's ``settings`` (its budget and prices) and how to make its model client."""
        if args.repairs < 0 or args.planner_seconds <= 0:
            raise ValueError("--repairs must be at least 0 and --planner-seconds positive")
        asked = getattr(args, "planner", None)  # a namespace made by a caller may not have it
        planner = resolve(asked)
        if not args.json and args.method != "direct":
            print(planner_line(asked), flush=True)
        if args.method == "planner":
            if not args.problem:
                raise ValueError("--method planner needs --problem PROBLEM.pddl")
            prob = parse_problem(read_text(args.domain, "domain"), read_text(args.problem, "problem"))
            found = plan(prob, time_limit=args.planner_seconds, mode=args.planner_mode, planner=planner)
            steps = [a.text() for a in found.plan] if found.plan is not None else None
            # optimal exactly when the optimal search of the problem's objective finished: its plan's
            # length (or total cost, where the problem minimises action costs) is then the optimum
            out = Outcome("planner", plan=steps, planner=found.summary(), checked_against="ground truth",
                          optimum=found.optimum, cost_objective=prob.action_costs, planner_name=found.planner,
                          planner_optimal=found.optimal)
            if steps is None:
                out.error = ("the problem has no plan (the planner proved it)" if found.status == "unsolvable"
                             else "the planner's time limit ran out" if found.detail in ("", "the time limit ran out")
                             else f"the planner gave no answer: {found.detail}")
            else:
                out.report = report_plan(prob, "\n".join(steps), found.optimum)
            print_outcome(out, args.json)
            return 0 if out.solved else 1
        if not args.nl:
            raise ValueError(f"--method {args.method} needs --nl PROBLEM.nl (the problem in English)")
        inp = _nl_inputs(args)
        if inp.truth_pddl is not None:
            parse_problem(inp.domain_pddl, inp.truth_pddl)
        client = make_client()
        usage = usage_for(settings, client)
        try:
            if args.method == "llmp":
                out = await run_llmp(inp, client, repairs=args.repairs, planner_seconds=args.planner_seconds,
                                     planner_mode=args.planner_mode, seed=args.seed, usage=usage, planner=planner,
                                     grammar=settings.model.grammar)
            else:
                out = await run_direct(inp, client, seed=args.seed, usage=usage)
        except BudgetExhausted as exc:
            out = Outcome(args.method, error=f"the {exc.which} budget ran out")
        finally:
            await client.close()
        print_outcome(out, args.json)
        return 0 if out.report is not None and out.report.verified else 1

    def add_bench_args(self, parser: argparse.ArgumentParser) -> None:
        from tasks.planning.bench import add_bench_args

        add_bench_args(parser)

    @property
    def bench_defaults(self) -> dict[str, str]:
        from tasks.planning.bench import DEFAULTS

        return DEFAULTS

    def bench_table(self, rows: list[dict[str, Any]]) -> str:
        """Solved (optimal) per domain and method, for ``tot bench merge`` / ``report``."""
        from tasks.planning.bench import bench_table

        return bench_table(rows)

    @property
    def bench_methods(self) -> tuple[str, ...]:
        """The bench's own methods; any other ``--methods`` label is a search."""
        from tasks.planning.bench import METHODS

        return METHODS

    async def run_bench(self, args: argparse.Namespace, settings: Settings,
                        claim_out: Callable[[Path], None], searches: dict[str, Settings] | None = None) -> int:
        """``tot bench planning``; ``tot bench`` gives the run's ``settings``, ``claim_out(DIR)``,
        which records the configuration in DIR or refuses a DIR that holds another one's results,
        and ``searches``: the other ``--methods`` labels parsed as searches, with their settings."""
        from tasks.planning.bench import run_bench

        return await run_bench(args, settings, claim_out, searches)

    def add_verify_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--domain", required=True, help="domain PDDL file")
        parser.add_argument("--problem", required=True, help="problem PDDL file")
        parser.add_argument("plan", help="plan file: one action per line, (unstack b2 b3) or unstack b2 b3")

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        prob = parse_problem(read_text(args.domain, "domain"), read_text(args.problem, "problem"))
        given = read_text(args.plan, "plan")
        text = read_plan(given, prob) or given  # read as the rewards read it (tags, Answer: line, runs)
        parse_plan(text)  # a malformed plan file is bad input (exit 2), not an invalid plan
        rep = report_plan(prob, text)
        head = "valid: every step applicable and the goal reached" if rep.verified else f"invalid: {rep.reason}"
        return rep.verified, head + "\n" + "\n".join(rep.lines())


PLUGIN = PlanningPlugin()
