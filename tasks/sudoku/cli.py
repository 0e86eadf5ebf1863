"""Command-line binding of Sudoku: ``tot solve sudoku``, ``tot verify sudoku`` and ``tot export sudoku``."""

from __future__ import annotations

import argparse

from tasks.sudoku import export
from tasks.sudoku.generator import generate
from tasks.sudoku.state import read_givens
from tasks.sudoku.task import Sudoku
from verifiers.sudoku import format_board, parse_board, read_board_answer

SYNTAX = 'rows separated by "|", blanks as * or . (e.g. "*2*|*32|*13")'


class SudokuPlugin:
    name = "sudoku"
    help = "Sudoku: n x n boards, standard rules (boxes for sizes 4, 6, 8, 9) or --latin (Long 2023)"
    # The tree is finite: by default a complete search (every legal step, model-ordered,
    # backtracking) that finds an answer whenever one exists (solver/searches/complete.py).
    solve_defaults = {"method": "tot-complete"}

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", nargs="?", help=f"a board: {SYNTAX}")
        parser.add_argument("--size", type=int, default=None,
                            help="generate a puzzle of this size (1-9; e.g. 3, 4, 5, 9)")
        parser.add_argument("--puzzle-seed", dest="puzzle_seed", type=int, default=None,
                            help="seed of the generated puzzle (default: --seed)")
        parser.add_argument("--count", type=int, default=1, help="generate this many puzzles (seeds S, S+1, ...)")
        parser.add_argument("--blanks", type=int, default=None, help="blank cells of generated puzzles")
        _add_rule_args(parser)

    def _boxes(self, args: argparse.Namespace) -> bool:
        return not getattr(args, "latin", False)

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        if args.puzzle is not None and args.size is not None:
            raise ValueError("give either a board or --size N, not both")
        if args.puzzle is not None:
            read_givens(args.puzzle, self._boxes(args))
            return [(args.puzzle.strip(), args.puzzle)]
        if args.size is None:
            raise ValueError(f'give a board ({SYNTAX}) or --size N [--seed S] to generate one')
        if not 1 <= args.count <= 1000:
            raise ValueError("--count must be 1..1000")
        seed = args.puzzle_seed if args.puzzle_seed is not None else args.seed
        out = []
        for s in range(seed, seed + args.count):
            p = generate(args.size, s, args.blanks, self._boxes(args))
            out.append((f"size{args.size}-seed{s}", p.text))
        return out

    def make_task(self, args: argparse.Namespace) -> Sudoku:
        return Sudoku(boxes=self._boxes(args))

    def add_verify_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", help=f"the puzzle: {SYNTAX}")
        parser.add_argument("board", help="the completed board, same syntax")
        _add_rule_args(parser)

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        task = self.make_task(args)
        givens = read_givens(args.puzzle, task.boxes)
        # the answer is read as the rewards read it (tags, box, Answer: line, rows on lines)
        found = read_board_answer(args.board, len(givens))
        board = format_board(found) if found is not None else args.board
        parse_board(board, len(givens))  # malformed: ValueError, exit status 2
        report = task.report_answer(args.puzzle, board)
        return report.verified, "\n".join(report.lines())

    # ``tot export sudoku`` (solver/tools/export.py): generated puzzles; tasks/sudoku/export.py
    # keeps them apart from the results tables' seeds.
    export_splits = export.SPLITS
    held_out = export.HELD_OUT
    export_max_states = export.MAX_STATES
    export_shared_states = True  # a board means the same in every puzzle of the same size and rules

    def add_export_args(self, parser: argparse.ArgumentParser) -> None:
        export.add_export_args(parser)
        _add_rule_args(parser)

    def export_puzzles(self, split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
        return export.export_puzzles(split, args)

    def held_out_puzzles(self, args: argparse.Namespace) -> set[str]:
        return export.held_out_puzzles(args)

    def export_options(self, args: argparse.Namespace) -> dict[str, object]:
        return export.export_options(args)

    def task_from_options(self, options: dict[str, object]) -> Sudoku:
        """The task a trace's run header describes (``tot verify --trace``)."""
        rules = options.get("rules", "standard")
        if rules not in ("standard", "latin"):
            raise ValueError(f"unknown Sudoku rule set {rules!r} in the trace; expected standard or latin")
        return Sudoku(boxes=rules == "standard")


def _add_rule_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--latin", action="store_true",
                   help="Long (2023)'s Latin-square variant: rows and columns only (default: the standard "
                        "rules, with boxes for sizes 4 (2x2), 6 (2x3), 8 (2x4) and 9 (3x3))")
    g.add_argument("--boxes", action="store_true", help="the standard rules (the default; kept for old commands)")


PLUGIN = SudokuPlugin()
