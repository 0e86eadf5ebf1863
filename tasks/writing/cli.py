"""Command-line binding of Creative Writing: ``tot solve writing`` and ``tot verify writing``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tasks.writing.data import default_data, load_lines
from tasks.writing.task import DECOMPOSITIONS, Writing
from verifiers.writing import RELAXATIONS, check_passage, parse_relax, split_sentences

MAX_FILE_BYTES = 1_000_000


class WritingPlugin:
    name = "writing"
    help = "Creative Writing: four paragraphs ending with four given sentences"
    # The paper's set-up (k=5 thoughts per step, 5 votes, keep the best one, b=1), with the
    # constrained generator (tasks/writing/constrained.py); --generator sample is the paper's.
    solve_defaults = {"generator": "constrained", "task_generators": ("constrained",), "evaluator": "vote",
                      "breadth": 1, "n_evaluate": 5}

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("puzzle", nargs="?", help='the four sentences in one string, "S1 S2 S3 S4"')
        parser.add_argument("--index", default=None,
                            help="0-based line(s) of the data file, e.g. 5 or 0-9")
        parser.add_argument("--data", default=None,
                            help="input file, one line of four sentences each "
                                 "(default: ../shared/data/tot/text/data_100_random_text.txt)")
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
        sentences = split_sentences(args.puzzle)
        passage = read_passage(args.passage)
        problem = check_passage(sentences, passage, parse_relax(args.normalise))
        if problem is not None:
            return False, f"invalid: {problem.reason}"
        return True, "valid: four paragraphs, each ending with its sentence in order"


def _add_normalise(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--normalise", default="none", metavar="none|" + "|".join(RELAXATIONS),
                        help="what the gate may relax (default none: strict; whitespace runs inside a "
                             "paragraph always count as one space): quotes = typographic quotes as "
                             "straight ones; nfkc = Unicode NFKC forms; both: quotes,nfkc")


def read_passage(name: str) -> str:
    """The passage text from a file (or stdin for ``-``); ValueError with a one-line reason."""
    if name == "-":
        return sys.stdin.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES + 1]
    p = Path(name)
    if not p.exists() or p.is_dir():
        raise ValueError(f"no such passage file: {name}")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{name} is larger than {MAX_FILE_BYTES} bytes")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{name} is not UTF-8 text") from None


PLUGIN = WritingPlugin()
