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
from pathlib import Path

from tasks.datafiles import parse_span
from tasks.planning.files import LLMP_DOMAINS, domain_file, join_puzzle, llmp_dir, read_text
from tasks.planning.state import read_problem
from tasks.planning.task import Planning
from verifiers.pddl_model import Literal
from verifiers.planner import BACKENDS, HONOURS_COSTS, available, resolve

__all__ = ["HELD_OUT", "MAX_STATES", "SPLITS", "add_export_args", "export_puzzles", "held_out_puzzles",
           "make_task"]

SPLITS = ("train", "val")
TEST = (1, 2)  # the README's planning table: p01-p02 of every domain
HELD_OUT = ("LLM+P problems p01-p02 of every domain (the README's planning table), and every problem of a domain "
            "with the same goal as one of them (its states' prompts could be a test problem's)")
MAX_STATES = 100  # each state is an optimal planner call


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


def _problems(folder: Path, numbers: range) -> list[tuple[int, str, frozenset[Literal]]]:
    """(number, puzzle text, goal) of each problem of ``numbers`` that the folder has."""
    out: list[tuple[int, str, frozenset[Literal]]] = []
    dom = read_text(domain_file(folder), "domain")
    for i in numbers:
        path = folder / f"p{i:02d}.pddl"
        if path.is_file():
            text = join_puzzle(dom, read_text(path, "problem"))
            out.append((i, text, frozenset(read_problem(text).goal)))
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
        held |= {text for _, text, _ in test}
        test_goals = {goal for _, _, goal in test}
        train = _problems(root / name, train_n)
        train_goals = {goal for _, _, goal in train if goal not in test_goals}
        for split, problems, avoid in (("train", train, test_goals),
                                       ("val", _problems(root / name, val_n), test_goals | train_goals)):
            for i, text, goal in problems:
                if goal in test_goals:
                    held.add(text)
                if goal in avoid:
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
