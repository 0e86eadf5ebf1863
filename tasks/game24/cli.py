"""Command-line binding of Game of 24: ``tot solve game24``, ``tot verify game24`` and ``tot export game24``."""

from __future__ import annotations

import argparse
from pathlib import Path

from solver.inputs import MAX_DATA_FILE, file_sha256, regular_file
from tasks.datafiles import PACKAGED
from tasks.game24.data import all_multisets, default_csv, load_csv, solvable_puzzles
from tasks.game24.task import Game24, parse_puzzle
from verifiers.arithmetic import read_expression

# tot export: the copy of the paper's 24.csv shipped with the package names the test puzzles
SHIPPED_CSV = PACKAGED / "24" / "24.csv"
# The LoRA adapter trained on this task's short prompts (docs/training.md), with its manifest beside it
SHIPPED_ADAPTER = Path(__file__).resolve().parent / "adapters" / "game24.gguf"
VAL, TEST = (801, 900), (901, 1000)


def _data_file(args: argparse.Namespace) -> Path:
    """The 24.csv that ``tot export game24`` reads the ranks from: --data, else the default one."""
    data = getattr(args, "data", None)
    if data is not None and not str(data).strip():
        raise ValueError("--data is empty; name a 24.csv, or leave --data out for the default one")
    return Path(data) if data is not None else default_csv()


def _rows(path: Path) -> list[tuple[int, str]]:
    """(rank, puzzle) of a 24.csv, each puzzle as its numbers ascending, one space apart."""
    return [(rank, " ".join(str(n) for n in sorted(parse_puzzle(p)))) for rank, p in load_csv(path)]


class Game24Plugin:
    name = "game24"
    help = "Game of 24: reach 24 from four numbers with + - * /"
    # The tree is finite: by default a complete search (every legal step, model-ordered,
    # backtracking) that finds an answer whenever one exists (solver/searches/complete.py).
    solve_defaults = {"method": "tot-complete"}
    # The adapters this task ships: ``--adapter auto`` takes the one whose manifest makes it the default.
    adapters = (SHIPPED_ADAPTER,)
    answer_suffix = " = 24"  # tot solve prints "answer: (10 - 4) * (13 - 9) = 24 [verified]"

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
        # The answer is read as the rewards and the baselines read it (tags, box, Answer: line).
        found = read_expression(args.answer)
        report = Game24().report_answer(args.puzzle, found if found is not None else args.answer)
        return report.verified, "\n".join(report.lines())

    # ``tot export game24`` (solver/tools/export.py): the paper's test puzzles are never exported,
    # whatever file names the ranks: they are read from the copy shipped with the package.
    export_splits = ("train", "val")
    export_max_states = 10_000  # every state of a puzzle: a few hundred at most
    export_shared_states = True  # a state is its numbers, the same in every puzzle
    held_out = ("the paper's test puzzles, ranks 901-1000 of the 24.csv shipped with the package (the README's "
                "and docs' Game-of-24 tables), whatever --data or $TOT_DATA_DIR names, and ranks 901-1000 of "
                "that file too")

    def add_export_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", default=None,
                            help="a 24.csv whose ranks 801-900 are the validation puzzles (default: "
                                 "$TOT_DATA_DIR/24/24.csv, else the copy shipped with the package); the test "
                                 "puzzles, ranks 901-1000 of the shipped copy, are held out whatever it holds")

    def export_puzzles(self, split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
        """val: ranks 801-900 of the data file; train: every other four-number multiset of 1..13
        (solvable or not) outside its ranks 801-1000; neither holds a held-out puzzle."""
        if split not in self.export_splits:
            raise ValueError(f"unknown split {split!r}; choose from {', '.join(self.export_splits)}")
        rows = _rows(_data_file(args))
        held = self.held_out_puzzles(args)
        if split == "val":
            val = {p: r for r, p in reversed(rows) if VAL[0] <= r <= VAL[1] and p not in held}
            return [(f"csv:{r}", p) for p, r in sorted(val.items(), key=lambda pr: pr[1])]
        first: dict[str, int] = {}
        for r, p in rows:
            first.setdefault(p, r)
        named = {p for r, p in rows if VAL[0] <= r <= TEST[1]}  # val and the file's own test ranks
        out = []
        for ms in all_multisets():
            text = " ".join(map(str, ms))
            if text in held or text in named:
                continue
            rank = first.get(text)
            out.append((f"multiset:{text}", text) if rank is None else (f"csv:{rank}", text))
        return out

    def held_out_puzzles(self, args: argparse.Namespace) -> set[str]:
        """Ranks 901-1000 of the shipped 24.csv, and of the data file where it is another."""
        shipped = {p for r, p in _rows(SHIPPED_CSV) if TEST[0] <= r <= TEST[1]}
        if len(shipped) != TEST[1] - TEST[0] + 1:  # a damaged install: the test set cannot be known
            raise ValueError(f"the shipped {SHIPPED_CSV} does not hold the 100 test puzzles (ranks 901-1000); "
                             "reinstall the package")
        return shipped | {p for r, p in _rows(_data_file(args)) if TEST[0] <= r <= TEST[1]}

    def export_options(self, args: argparse.Namespace) -> dict[str, object]:
        path = _data_file(args)
        return {"data_sha256": file_sha256(regular_file(path, "data file", MAX_DATA_FILE))}

    def task_from_options(self, options: dict[str, object]) -> Game24:
        """The task a trace's run header describes (``tot verify --trace``)."""
        policy = options.get("policy", "reject")
        if policy not in ("reject", "repair"):
            raise ValueError(f"unknown Game-of-24 policy {policy!r} in the trace; expected reject or repair")
        return Game24(policy=policy)  # type: ignore[arg-type]


PLUGIN = Game24Plugin()
