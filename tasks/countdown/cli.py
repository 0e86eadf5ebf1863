"""Command-line binding of Countdown: ``tot solve countdown``, ``tot verify countdown``, ``tot bench
countdown`` (the solve arguments) and ``tot export countdown``."""

from __future__ import annotations

import argparse
from typing import Any

from solver.inputs import MAX_DATA_FILE, file_sha256, regular_file
from tasks.countdown.data import SPLITS, load_file, load_split, normalise, split_path
from tasks.countdown.task import Countdown, parse_puzzle, puzzle_text
from verifiers import countdown as cd
from verifiers.arithmetic import read_expression


def _puzzle(args: argparse.Namespace) -> str:
    """The puzzle text ``numbers -> target`` from the positional numbers and ``--target``."""
    text = (args.puzzle or "").strip()
    if not text:
        raise ValueError('give a puzzle such as "25 50 75 100 3 6" with --target 952, or --set test, or --data FILE')
    if "->" in text:
        if args.target is not None:
            raise ValueError("give the target once: in the puzzle (-> 952) or with --target")
        parse_puzzle(text)
        return text
    if args.target is None:
        raise ValueError('give the target: tot solve countdown "25 50 75 100 3 6" --target 952')
    return puzzle_text(cd.parse_numbers(text), cd.parse_target(args.target))


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", default=None, help="the whole number to reach, e.g. 952")
    parser.add_argument("--rules", choices=list(cd.RULES), default="once",
                        help="once: every number exactly once (default); television: any subset, every "
                             "intermediate result a positive whole number")


def _normalised(puzzles: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(pid, normalise(*parse_puzzle(p))) for pid, p in puzzles]


class CountdownPlugin:
    name = "countdown"
    help = "Countdown: reach a whole target from the numbers with + - * /"
    # docs/countdown.md, "The default": the complete search ordered by the exact oracle (no model).
    solve_defaults = {"method": "tot-complete", "evaluator": "oracle", "prune_proven": True}
    # The checker's order (tot-complete:enumerate:prior) is not among them: minutes on some puzzles.
    bench_defaults = {"methods": "tot-complete:enumerate:oracle"}

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", nargs="?", help='the numbers, e.g. "25 50 75 100 3 6" (with --target), or '
                                                      '"25 50 75 100 3 6 -> 952"')
        _add_common(parser)
        parser.add_argument("--set", dest="puzzle_set", choices=list(SPLITS), default=None,
                            help="a puzzle set shipped with the package (docs/countdown.md: train, val, test)")
        parser.add_argument("--data", default=None, metavar="FILE",
                            help='puzzles from a file: JSON lines ({"numbers": [25, 50, 75, 100, 3, 6], '
                                 '"target": 952}) or, named .csv, columns numbers and target')
        parser.add_argument("--range", dest="ranks", default=None,
                            help="rows of --set or --data, 1-based, e.g. 1-100")
        parser.add_argument("--policy", choices=["reject", "repair"], default="reject",
                            help="wrong stated results: reject the step (default) or recompute them")

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        chosen = [flag for flag, v in (("a puzzle", args.puzzle), ("--set", args.puzzle_set),
                                       ("--data", args.data)) if v is not None]
        if len(chosen) > 1:
            raise ValueError(f"give one of a puzzle, --set or --data, not {' and '.join(chosen)}")
        if args.puzzle_set is not None or args.data is not None:
            if args.target is not None:
                raise ValueError("--target is for one puzzle; each row of --set or --data has its own")
            if args.data is not None:
                if not str(args.data).strip():
                    raise ValueError("--data is empty; name a file of puzzles")
                return load_file(args.data, args.ranks)
            return load_split(args.puzzle_set, args.ranks)
        if args.ranks is not None:
            raise ValueError("--range picks rows of --set or --data")
        text = _puzzle(args)
        return [(text, text)]

    def make_task(self, args: argparse.Namespace) -> Countdown:
        return Countdown(rules=args.rules, policy=getattr(args, "policy", "reject"))

    def task_from_options(self, options: dict[str, Any]) -> Countdown:
        return Countdown(rules=options.get("rules", "once"), policy=options.get("policy", "reject"))

    # ``tot export countdown`` (solver/tools/export.py): the shipped train and val sets; the shipped
    # test set is held out whatever else is asked.
    export_splits = ("train", "val")
    export_max_states = 2_000  # a 6-number puzzle reaches ~100,000 states; a cut puzzle is counted and said
    export_shared_states = False  # a state is its numbers and the puzzle's target
    held_out = ("the Countdown test set shipped with the package (tasks/countdown/data/test.jsonl, 120 puzzles: "
                "docs/countdown.md's measurements), compared with the numbers in any order")

    def add_export_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--rules", choices=list(cd.RULES), default="once",
                            help="the rules the labels are exact under (default once)")

    def export_puzzles(self, split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
        """The shipped set ``split``, numbers ascending, less any held-out puzzle."""
        if split not in self.export_splits:
            raise ValueError(f"unknown split {split!r}; choose from {', '.join(self.export_splits)}")
        held = self.held_out_puzzles(args)
        return [(pid, p) for pid, p in _normalised(load_split(split)) if p not in held]

    def held_out_puzzles(self, args: argparse.Namespace) -> set[str]:
        """The shipped test set, numbers ascending."""
        test = {p for _, p in _normalised(load_split("test"))}
        if len(test) != len(load_split("test")) or not test:  # a damaged install: the test set cannot be known
            raise ValueError(f"the shipped {split_path('test')} is damaged; reinstall the package")
        return test

    def export_options(self, args: argparse.Namespace) -> dict[str, object]:
        return {"rules": args.rules, **{f"{s}_sha256": file_sha256(regular_file(split_path(s), "data file",
                                                                                 MAX_DATA_FILE))
                                        for s in ("train", "val", "test")}}

    def add_verify_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", help='the numbers, e.g. "25 50 75 100 3 6" (with --target)')
        parser.add_argument("answer", help='an expression, e.g. "((100 + 6) * 3 * 75 - 50) / 25"')
        _add_common(parser)

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        text = _puzzle(args)  # malformed puzzle: ValueError, exit status 2
        found = read_expression(args.answer)
        report = Countdown(rules=args.rules).report_answer(text, found if found is not None else args.answer)
        return report.verified, "\n".join(report.lines())


PLUGIN = CountdownPlugin()
