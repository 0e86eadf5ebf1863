"""Command-line binding of Game of 24: ``tot solve game24`` and ``tot verify game24``."""

from __future__ import annotations

import argparse

from tasks.game24.data import all_multisets, default_csv, load_csv, solvable_puzzles
from tasks.game24.task import Game24, parse_puzzle


class Game24Plugin:
    name = "game24"
    help = "Game of 24: reach 24 from four numbers with + - * /"
    # The tree is finite: by default a complete search (every legal step, model-ordered,
    # backtracking) that finds an answer whenever one exists (solver/searches/complete.py).
    solve_defaults = {"method": "tot-complete"}

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", nargs="?", help='four numbers, e.g. "4 9 10 13"')
        parser.add_argument("--data", nargs="?", const="default", default=None,
                            help="the paper's 24.csv (default: $TOT_DATA_DIR/24/24.csv, else the "
                                 "copy shipped with the package)")
        parser.add_argument("--range", dest="ranks", default=None,
                            help="rank range in the CSV, e.g. 901-1000")
        parser.add_argument("--generated", action="store_true",
                            help="all solvable puzzles from 1..13 (no CSV needed); --range picks among them")
        parser.add_argument("--policy", choices=["reject", "repair"], default="reject",
                            help="wrong stated results: reject the step (default) or recompute them")

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        if args.puzzle is not None:
            parse_puzzle(args.puzzle)
            return [(args.puzzle.strip(), args.puzzle)]
        if args.generated:
            from tasks.game24.data import parse_range

            allp = solvable_puzzles()
            lo, hi = parse_range(args.ranks) if args.ranks else (1, len(allp))
            return [(str(i), p) for i, p in enumerate(allp, 1) if lo <= i <= hi]
        if args.data is not None or args.ranks is not None:
            path = default_csv() if args.data in (None, "default") else args.data
            return [(str(rank), p) for rank, p in load_csv(path, args.ranks)]
        raise ValueError('give a puzzle such as "4 9 10 13", or --data [FILE] --range 901-1000, or --generated')

    def make_task(self, args: argparse.Namespace) -> Game24:
        return Game24(policy=getattr(args, "policy", "reject"))

    def add_verify_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", help='four numbers, e.g. "4 9 10 13"')
        parser.add_argument("answer", help='an expression, e.g. "(10 - 4) * (13 - 9)"')

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        parse_puzzle(args.puzzle)  # malformed puzzle: ValueError, exit status 2
        report = Game24().report_answer(args.puzzle, args.answer)
        return report.verified, "\n".join(report.lines())

    # ``tot export game24`` (solver/tools/export.py): the paper's test puzzles are never exported.
    export_splits = ("train", "val")
    export_max_states = 10_000  # every state of a puzzle: a few hundred at most
    export_shared_states = True  # a state is its numbers, the same in every puzzle
    held_out = "the paper's test puzzles, ranks 901-1000 of 24.csv (the README's and docs' Game-of-24 tables)"

    def add_export_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", default=None,
                            help="the paper's 24.csv, which names the held-out and validation puzzles "
                                 "(default: the copy shipped with the package)")

    def export_puzzles(self, split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
        """val: ranks 801-900 of 24.csv; train: every other four-number multiset of 1..13
        (solvable or not) outside ranks 801-1000."""
        ranks = self._ranks(args)
        if split == "val":
            return [(f"csv:{r}", p) for p, r in ranks.items() if 801 <= r <= 900]
        if split == "train":
            out = []
            for ms in all_multisets():
                text = " ".join(map(str, ms))
                rank = ranks.get(text)
                if rank is None:
                    out.append((f"multiset:{text}", text))
                elif not 801 <= rank <= 1000:
                    out.append((f"csv:{rank}", text))
            return out
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(self.export_splits)}")

    def held_out_puzzles(self, args: argparse.Namespace) -> set[str]:
        return {p for p, r in self._ranks(args).items() if 901 <= r <= 1000}

    def _ranks(self, args: argparse.Namespace) -> dict[str, int]:
        """Puzzle text (numbers ascending, one space) -> its rank in 24.csv."""
        path = getattr(args, "data", None) or default_csv()
        out = {}
        for rank, puzzle in load_csv(path):
            out[" ".join(str(n) for n in sorted(parse_puzzle(puzzle)))] = rank
        return out

    def task_from_options(self, options: dict[str, object]) -> Game24:
        """The task a trace's run header describes (``tot verify --trace``)."""
        policy = options.get("policy", "reject")
        if policy not in ("reject", "repair"):
            raise ValueError(f"unknown Game-of-24 policy {policy!r} in the trace; expected reject or repair")
        return Game24(policy=policy)  # type: ignore[arg-type]


PLUGIN = Game24Plugin()
