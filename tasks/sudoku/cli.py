"""Command-line binding of Sudoku: ``tot solve sudoku`` and ``tot verify sudoku``."""

from __future__ import annotations

import argparse

from tasks.sudoku.generator import generate
from tasks.sudoku.task import Sudoku
from verifiers.sudoku import parse_board

SYNTAX = 'rows separated by "|", blanks as * or . (e.g. "*2*|*32|*13")'


class SudokuPlugin:
    name = "sudoku"
    help = "Sudoku after Long (2023): n x n boards, rows and columns (and boxes with --boxes)"
    # The tree is finite: by default a complete search (every legal step, model-ordered,
    # backtracking) that finds an answer whenever one exists (solver/complete.py).
    solve_defaults = {"method": "tot-complete"}

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", nargs="?", help=f"a board: {SYNTAX}")
        parser.add_argument("--size", type=int, default=None, help="generate a puzzle of this size (3, 4, 5 or 9)")
        parser.add_argument("--puzzle-seed", dest="puzzle_seed", type=int, default=None,
                            help="seed of the generated puzzle (default: --seed)")
        parser.add_argument("--count", type=int, default=1, help="generate this many puzzles (seeds S, S+1, ...)")
        parser.add_argument("--blanks", type=int, default=None, help="blank cells of generated puzzles")
        parser.add_argument("--boxes", action="store_true",
                            help="also check boxes (sizes 4 and 9; on by default for generated 9x9)")

    def _boxes(self, args: argparse.Namespace) -> bool:
        return bool(getattr(args, "boxes", False) or getattr(args, "size", None) == 9)

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        if args.puzzle is not None and args.size is not None:
            raise ValueError("give either a board or --size N, not both")
        if args.puzzle is not None:
            self.make_task(args).givens(args.puzzle)
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
        parser.add_argument("--boxes", action="store_true", help="also check boxes (sizes 4 and 9)")

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        task = Sudoku(boxes=args.boxes)
        givens = task.givens(args.puzzle)
        parse_board(args.board, len(givens))  # malformed: ValueError, exit status 2
        problem = task.verify_answer(args.puzzle, args.board)
        if problem is not None:
            return False, f"invalid: {problem.reason}"
        rules = "rows, columns and boxes" if args.boxes else "rows and columns"
        return True, f"valid: keeps every given and every digit appears once in all {rules}"


PLUGIN = SudokuPlugin()
