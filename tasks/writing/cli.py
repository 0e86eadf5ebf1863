"""Command-line binding of Creative Writing: ``tot solve writing`` and ``tot verify writing``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from solver.inputs import read_text
from tasks.writing.data import default_data, load_lines
from tasks.writing.task import DECOMPOSITIONS, Writing
from verifiers.writing import RELAXATIONS, parse_relax, split_sentences

MAX_FILE_BYTES = 1_000_000


class WritingPlugin:
    name = "writing"
    help = "Creative Writing: four paragraphs ending with four given sentences"
    # The paper's set-up (k=5 thoughts per step, 5 votes, keep the best one, b=1), with the
    # constrained generator (tasks/writing/constrained.py); --generator sample is the paper's.
    solve_defaults = {"generator": "constrained", "task_generators": ("constrained",), "evaluator": "vote",
                      "breadth": 1, "n_evaluate": 5}
    bench_defaults = {"refine_rounds": 5}  # the paper's refine: at most 5 passages

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", nargs="?", help='the four sentences in one string, "S1 S2 S3 S4"')
        parser.add_argument("--index", default=None,
                            help="0-based line(s) of the data file, e.g. 5 or 0-9")
        parser.add_argument("--data", default=None,
                            help="input file, one line of four sentences each "
                                 "(default: the paper's data_100_random_text.txt, shipped with the package)")
        parser.add_argument("--decomposition", choices=DECOMPOSITIONS, default="plan",
                            help="plan: a plan, then the passage (the paper); "
                                 "paragraphs: one gated paragraph per step")
        _add_normalise(parser)

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        if args.puzzle is not None:
            if args.index is not None:
                raise ValueError("give either the four sentences or --index, not both")
            split_sentences(args.puzzle)
            return [("input", args.puzzle)]
        if args.index is None:
            raise ValueError('give the four sentences as one string, or --index N [--data FILE]')
        path = default_data() if args.data is None else Path(args.data)
        return [(str(i), line) for i, line in load_lines(path, args.index)]

    def make_task(self, args: argparse.Namespace) -> Writing:
        return Writing(getattr(args, "decomposition", "plan"), parse_relax(getattr(args, "normalise", None)))

    def add_verify_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", help='the four sentences in one string, "S1 S2 S3 S4"')
        parser.add_argument("passage", help="a text file with the passage (- reads standard input)")
        _add_normalise(parser)

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        split_sentences(args.puzzle)  # malformed input: ValueError, exit status 2
        passage = read_passage(args.passage)
        report = Writing(relax=parse_relax(args.normalise)).report_answer(args.puzzle, passage)
        return report.verified, "\n".join(report.lines())

    def task_from_options(self, options: dict[str, object]) -> Writing:
        """The task a trace's run header describes (``tot verify --trace``)."""
        decomposition = options.get("decomposition", "plan")
        if decomposition not in DECOMPOSITIONS:
            raise ValueError(f"unknown writing decomposition {decomposition!r} in the trace")
        normalise = options.get("normalise", "none")
        if not isinstance(normalise, str):
            raise ValueError(f"bad writing normalisation {normalise!r} in the trace")
        return Writing(decomposition, parse_relax(normalise))  # type: ignore[arg-type]


def _add_normalise(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--normalise", default="none", metavar="none|" + "|".join(RELAXATIONS),
                        help="what the gate may relax (default none: strict; whitespace runs inside a "
                             "paragraph always count as one space): quotes = typographic quotes as "
                             "straight ones; nfkc = Unicode NFKC forms; both: quotes,nfkc")


def read_passage(name: str) -> str:
    """The passage text from a regular file of at most MAX_FILE_BYTES, or piped on standard input
    for ``-``; ValueError with a one-line reason (a terminal, FIFO or device is not read)."""
    if name == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise ValueError("'-' reads the passage piped on standard input; standard input is a terminal")
        text = sys.stdin.read(MAX_FILE_BYTES + 1)
        if len(text) > MAX_FILE_BYTES:
            raise ValueError(f"the passage on standard input is larger than {MAX_FILE_BYTES} characters")
        return text
    return read_text(name, "passage file", MAX_FILE_BYTES)


PLUGIN = WritingPlugin()
