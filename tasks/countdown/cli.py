"""Command-line binding of Countdown: ``tot solve countdown`` and ``tot verify countdown``."""

from __future__ import annotations

import argparse
from typing import Any

from tasks.countdown.task import Countdown, parse_puzzle, puzzle_text
from verifiers import countdown as cd
from verifiers.arithmetic import read_expression


def _puzzle(args: argparse.Namespace) -> str:
    """The puzzle text ``numbers -> target`` from the positional numbers and ``--target``."""
    text = (args.puzzle or "").strip()
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


class CountdownPlugin:
    name = "countdown"
    help = "Countdown: reach a whole target from the numbers with + - * /"
    solve_defaults = {"method": "tot-complete"}

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", help='the numbers, e.g. "25 50 75 100 3 6" (with --target), or '
                                           '"25 50 75 100 3 6 -> 952"')
        _add_common(parser)
        parser.add_argument("--policy", choices=["reject", "repair"], default="reject",
                            help="wrong stated results: reject the step (default) or recompute them")

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        text = _puzzle(args)
        return [(text, text)]

    def make_task(self, args: argparse.Namespace) -> Countdown:
        return Countdown(rules=args.rules, policy=getattr(args, "policy", "reject"))

    def task_from_options(self, options: dict[str, Any]) -> Countdown:
        return Countdown(rules=options.get("rules", "once"), policy=options.get("policy", "reject"))

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
