"""The problems and the task of ``tot export planning`` (the label export, solver/tools/export.py):
the LLM+P problems, read from the folder the user gives (they are not shipped), labelled by an
optimal planner.

The README's planning table measures problems p01-p02 of every domain: they are held out, and so
is every problem of a domain with the same goal as one of them (a state's prompt is its facts and
the goal, so such a problem could meet a test problem's states: on LLM+P's files storage p12 is
p01 under another name, tyreworld p09 is p02, and barman p04, floortile p03, grippers p13 and
storage p03, p13, p14 share a goal with p01 or p02). Validation: p03-p04, less the problems that
share a goal with a train problem; train: p05-p20.

A state's label is the length of an optimal plan from it (A* with an admissible heuristic over
unit costs: pymimir where installed, the fast one, else pyperplan); a state the planner cannot
decide within ``--oracle-seconds`` is left out and counted. Fast Downward minimises floortile's
action costs, which is not the number of actions, and is refused for such problems.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from tasks.datafiles import parse_span
from tasks.planning.files import LLMP_DOMAINS, domain_file, join_puzzle, llmp_dir, read_text
from tasks.planning.state import read_problem
from tasks.planning.task import Planning
from verifiers.pddl_model import Literal
from verifiers.planner import BACKENDS, HONOURS_COSTS, available, resolve

__all__ = ["HELD_OUT", "LLMP_TEST_GOALS", "MAX_STATES", "SPLITS", "add_export_args", "export_options",
           "export_puzzles", "goal_fingerprint", "held_out_puzzles", "make_task"]

SPLITS = ("train", "val")
TEST = (1, 2)  # the README's planning table: p01-p02 of every domain
HELD_OUT = ("LLM+P problems p01-p02 of every domain (the README's planning table), by their file names and, "
            "whatever the folder names them, by their goals (recorded in the package), and every problem of a "
            "domain with the same goal as one of them (its states' prompts could be a test problem's)")
MAX_STATES = 100  # each state is an optimal planner call
# goal_fingerprint of LLM+P's p01 and p02 of every domain (the files are not shipped): a problem
# with one of these goals is held out whatever its file is called (tests/test_export_leaks.py
# checks them against the files where they are installed)
LLMP_TEST_GOALS: dict[str, str] = {
    "86628532fb20964ca3ccbe912343fae776bfd1f46fdc9fa1159a5c6eb58e2e09": "barman p01, p02",
    "2ff4d46fe53b13939a698bb35d18d9ac73d854409483f57ff51b16c88916489e": "blocksworld p01, p02",
    "3d1db0b5d0531278d9abadf7423a320ac2c37952dfb50e15066d95736d225191": "floortile p01, p02",
    "52e218c586ccab2ed0672e98f4eee7e57eafc71280d804689644300d4488ca2f": "grippers p01",
    "326f4fc4a3caac9e6f7769a8e1ad3bf93d81cb2b9c1b556ce91b109adf6b42e2": "grippers p02",
    "917ad03a42b0df07419994b62f8f3e8d7d565e8002a2ab35cba08ab04482ab13": "storage p01, p02",
    "6935c331652b2a944b6a6b6a1832a58a7b0c95bb34c77bb79db557a738fd91ad": "termes p01",
    "0815f1455de2824863586f231be276c44bbf4d3a5386acc00e66a3329f030ff5": "termes p02",
    "29f0e8def7b76988dbd694a45cb7631e471e4f5bf6d3dd632a57276728641778": "tyreworld p01",
    "4a864b715ba0898b2548c2eb618454f34eed97e4eebb08d55f33c17a2cb429c2": "tyreworld p02",
}


def add_export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llmp-dir", default=None, help="LLM+P domains folder (default $TOT_LLMP_DIR or "
                                                         "../shared/data/llmp beside the checkout)")
    parser.add_argument("--domains", default=",".join(LLMP_DOMAINS), help="comma-separated domain folders")
    parser.add_argument("--range", dest="ranks", default="5-20", help="train problem numbers (default 5-20)")
    parser.add_argument("--val-range", default="3-4", help="validation problem numbers (default 3-4)")
    parser.add_argument("--oracle-seconds", type=float, default=5.0,
                        help="planner limit per state; a state it cannot decide is left out (default 5)")
    parser.add_argument("--max-steps", type=int, default=40, help="depth of the walk at most (default 40)")
    parser.add_argument("--planner", default=None, metavar="NAME",
                        help=f"optimal planner ({', '.join(BACKENDS)}; default: pymimir when installed, else "
                             f"pyperplan; fast-downward minimises action costs and is refused where they apply)")
    parser.set_defaults(planning_export=True)  # make_task: the optimal planner as the oracle


def planner(args: argparse.Namespace) -> str:
    if args.planner is not None:
        return resolve(args.planner)
    return "pymimir" if "pymimir" in available() else "pyperplan"


def make_task(args: argparse.Namespace) -> Planning:
    if not 0 < args.oracle_seconds <= 3600 or args.max_steps < 1:
        raise ValueError("--oracle-seconds must be in (0, 3600] and --max-steps at least 1")
    return Planning(max_depth=args.max_steps, oracle_seconds=args.oracle_seconds, oracle_mode="optimal",
                    planner=planner(args))


def _span(text: str, what: str) -> range:
    lo, hi = parse_span(text, 1, "5-20", what)
    if lo <= max(TEST):
        raise ValueError(f"bad {what} {text!r}: problems p01-p02 are the test set, held out of every split")
    return range(lo, hi + 1)


def _domains(args: argparse.Namespace) -> tuple[Path, list[str]]:
    root = llmp_dir(args.llmp_dir)
    names = list(dict.fromkeys(d.strip() for d in args.domains.split(",") if d.strip()))
    if not names:
        raise ValueError(f"--domains is empty; LLM+P has {', '.join(LLMP_DOMAINS)}")
    for name in names:
        if not (root / name).is_dir():
            raise ValueError(f"unknown domain {name!r}: no folder {root / name} (LLM+P has {', '.join(LLMP_DOMAINS)})")
    return root, names


def goal_fingerprint(domain_name: str, goal: frozenset[Literal]) -> str:
    """sha256 of a problem's domain name and its goal, the literals sorted, one a line."""
    lines = [domain_name.lower()] + sorted(("" if positive else "not ") + " ".join(atom) for positive, atom in goal)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _problems(folder: Path, numbers: range) -> list[tuple[int, str, frozenset[Literal], bool]]:
    """(number, puzzle text, goal, whether the goal is an LLM+P test problem's) of each problem of
    ``numbers`` that the folder has."""
    out: list[tuple[int, str, frozenset[Literal], bool]] = []
    dom = read_text(domain_file(folder), "domain")
    for i in numbers:
        path = folder / f"p{i:02d}.pddl"
        if path.is_file():
            text = join_puzzle(dom, read_text(path, "problem"))
            problem = read_problem(text)
            goal = frozenset(problem.goal)
            out.append((i, text, goal, goal_fingerprint(problem.domain_name, goal) in LLMP_TEST_GOALS))
    return out


def _splits(args: argparse.Namespace) -> tuple[dict[str, list[tuple[str, str]]], set[str]]:
    """The splits' (id, puzzle) and every puzzle held out (the test problems and their twins)."""
    train_n, val_n = _span(args.ranks, "problem range"), _span(args.val_range, "validation range")
    if set(train_n) & set(val_n):
        raise ValueError(f"--range {args.ranks} and --val-range {args.val_range} overlap")
    root, names = _domains(args)
    costs_refused = planner(args) in HONOURS_COSTS
    splits: dict[str, list[tuple[str, str]]] = {"train": [], "val": []}
    held: set[str] = set()
    for name in names:
        test = _problems(root / name, range(1, max(TEST) + 1))
        held |= {text for _, text, _, _ in test}
        test_goals = {goal for _, _, goal, _ in test}
        train = _problems(root / name, train_n)
        train_goals = {goal for _, _, goal, llmp_test in train if goal not in test_goals and not llmp_test}
        for split, problems, avoid in (("train", train, test_goals),
                                       ("val", _problems(root / name, val_n), test_goals | train_goals)):
            for i, text, goal, llmp_test in problems:
                if goal in test_goals or llmp_test:
                    held.add(text)
                if goal in avoid or llmp_test:
                    continue
                if costs_refused and read_problem(text).action_costs:
                    raise ValueError(f"{name}/p{i:02d} minimises action costs, which {planner(args)} honours: "
                                     f"its plans are not the fewest actions; use --planner pymimir or pyperplan")
                splits[split].append((f"{name}/p{i:02d}", text))
    for split in splits:  # problem by problem across the domains, so that --limit N takes from each
        splits[split].sort(key=lambda p: (p[0].rsplit("/p", 1)[1], names.index(p[0].rsplit("/p", 1)[0])))
    return splits, held


def export_puzzles(split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    return _splits(args)[0][split]


def held_out_puzzles(args: argparse.Namespace) -> set[str]:
    return _splits(args)[1]


def export_options(args: argparse.Namespace) -> dict[str, object]:
    """The options that make the splits, with a sha256 of every problem they and the held-out set
    read (the folder's files, whatever it is called)."""
    train_n, val_n = _span(args.ranks, "problem range"), _span(args.val_range, "validation range")
    splits, held = _splits(args)
    digest = hashlib.sha256(json.dumps([splits, sorted(held)]).encode("utf-8")).hexdigest()
    return {"domains": _domains(args)[1], "range": f"{train_n.start}-{train_n.stop - 1}",
            "val_range": f"{val_n.start}-{val_n.stop - 1}", "oracle_seconds": args.oracle_seconds,
            "max_steps": args.max_steps, "planner": planner(args), "problems_sha256": digest}
