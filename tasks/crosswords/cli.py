"""Command-line binding of mini crosswords: ``tot solve crosswords`` and ``tot verify crosswords``."""

from __future__ import annotations

import argparse
from typing import Any

from lexicon import build_lexicon, default_lexicon
from tasks.crosswords.data import TEST_INDICES, Puzzle, default_data, load_puzzle_file, load_puzzles, parse_puzzle_text
from tasks.crosswords.task import Crosswords, CrosswordState
from tasks.datafiles import ascii_int
from verifiers.crossword import FILL_LEVELS, parse_answer, read_grid, score_board


def parse_indices(text: str, count: int) -> list[int]:
    """``7``, ``1-20``, ``1,6,11`` or ``test`` (the paper's 20 test puzzles) -> 1-based indices."""
    if text.strip().lower() == "test":
        return [i for i in TEST_INDICES if i <= count]
    out: list[int] = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        try:
            lo, hi = (ascii_int(bounds[0]), ascii_int(bounds[-1])) if len(bounds) <= 2 else (0, -1)
        except ValueError:
            lo, hi = 0, -1
        if not (1 <= lo <= hi <= count):
            raise ValueError(f"bad --index {part.strip()!r}: use N, A-B or A,B,C with 1 <= N <= {count}, or 'test'")
        out.extend(range(lo, hi + 1))
    return out


def candidates_of(args: argparse.Namespace) -> int | None:
    """``--candidates``: N >= 1, or None for 'all'. Not given: all when no model takes part in
    choosing (``--generator enumerate --evaluator oracle``, or ``tot bench`` with only
    ``SEARCH:enumerate:oracle`` methods: the exact enumeration and the exact
    oracle, which then solve every puzzle whose answers are lexicon words), else 10 (what a
    model ranks or judges per slot; a run that this cuts says so)."""
    text = getattr(args, "candidates", None)
    if text is None:
        model_free = getattr(args, "generator", None) == "enumerate" and getattr(args, "evaluator", None) == "oracle"
        methods = getattr(args, "methods", None)  # tot bench: every method enumerate + oracle
        if isinstance(methods, str) and methods.strip():
            specs = [m.strip().split(":") for m in methods.split(",") if m.strip()]
            model_free = all(spec[1:] == ["enumerate", "oracle"] for spec in specs)
        return None if model_free else 10
    if str(text).strip().lower() == "all":
        return None
    try:
        n = ascii_int(str(text))
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"--candidates must be a whole number of at least 1 or 'all', not {str(text)[:20]!r}")
    return n


def _load(args: argparse.Namespace) -> list[tuple[str, Puzzle]]:
    if args.puzzle_file is not None:
        if args.index is not None:
            raise ValueError("give either --puzzle FILE or --index N, not both")
        return [(str(args.puzzle_file), load_puzzle_file(args.puzzle_file))]
    if args.index is None:
        raise ValueError("give --index N [--data FILE] (1-based, e.g. 1, 1-20, test) or --puzzle FILE.json")
    allp = load_puzzles(args.data or default_data())
    return [(str(i), allp[i - 1]) for i in parse_indices(args.index, len(allp))]


def _add_source_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--puzzle", dest="puzzle_file", default=None,
                        help="a JSON file with one puzzle: [clues, board] or {\"clues\": [...], \"board\": ...}")
    parser.add_argument("--index", default=None, help="1-based puzzle numbers in --data: N, A-B, A,B or test")
    parser.add_argument("--data", default=None,
                        help="mini0505.json-shaped file (default: the paper's, shipped with the package)")


class CrosswordsPlugin:
    name = "crosswords"
    help = "5x5 mini crosswords: fill the grid from 10 clues"
    # DFS with a 100-step cap and the per-clue judge, as in the paper; our two evaluator names.
    solve_defaults: dict[str, Any] = {"method": "tot-dfs", "budget_steps": 100, "evaluator": "clues",
                                      "generator": "enumerate-rank",
                                      "task_evaluators": ("clues", "fillable"), "task_model_free": ("fillable",)}

    def add_solve_args(self, parser: argparse.ArgumentParser) -> None:
        _add_source_args(parser)
        g = parser.add_argument_group("crosswords")
        g.add_argument("--candidates", default=None,
                       help="lexicon words per open slot for --generator enumerate/enumerate-rank: N (the N "
                            "most frequent of every open slot) or 'all' (every word of the most constrained "
                            "slot that fits it and its crossings: complete for fills of lexicon words). "
                            "Default: all for --generator enumerate --evaluator oracle, else 10. "
                            "A run cut by N says so (incomplete: ... not tried)")
        g.add_argument("--lexicon-gate", choices=FILL_LEVELS, default="none",
                       help="extra gate (not a fact): reject a thought after which some slot has no lexicon "
                            "word (slots), or not arc consistent (arc), or no complete fill (full)")
        g.add_argument("--require-word", action="store_true",
                       help="extra gate (not a fact): a placed word must be in the lexicon")
        g.add_argument("--fill-level", choices=FILL_LEVELS[1:], default="arc",
                       help="what --evaluator fillable checks (default arc)")
        g.add_argument("--min-zipf", type=float, default=0.0,
                       help="lexicon frequency floor (0 keeps words wordfreq does not know)")
        g.add_argument("--keep-going", action="store_true",
                       help="a complete grid does not end the search: the evaluator judges it and DFS goes on "
                            "until its step budget (for oracle upper bounds); the output is the deepest state")
        g.add_argument("--word-list", action="append", default=[], help="extra words, one per line")

    def puzzles(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        candidates_of(args)  # a bad --candidates fails before anything loads
        items = _load(args)
        if args.evaluator == "oracle" and any(p.answer is None for _, p in items):
            raise ValueError("--evaluator oracle needs the answer board in the puzzle")
        return [(pid, p.text()) for pid, p in items]

    def make_task(self, args: argparse.Namespace) -> Crosswords:
        if args.min_zipf or args.word_list:
            lex = build_lexicon(user_files=args.word_list, min_zipf=args.min_zipf)
        else:
            lex = default_lexicon()
        return Crosswords(lex, lexicon_gate=args.lexicon_gate, require_word=args.require_word,
                          candidates=candidates_of(args), fill_level=args.fill_level,
                          stop_when_full=not args.keep_going)

    def report(self, task: Crosswords, puzzle: str, result: Any) -> tuple[dict[str, Any], str]:
        """The grid search ended with (its answer, else the deepest state reached) and, when the
        answer board is known, the paper's letter / word / game scores of it."""
        p = parse_puzzle_text(puzzle)
        node = result.solution or result.best
        state: CrosswordState = node.state if node is not None else task.root(puzzle)
        grid = state.grid
        fields: dict[str, Any] = {"board": state.board, "filled": grid.filled(), "depth": len(state.steps),
                                  "steps": list(state.steps)}
        lines = [grid.render(),
                 ("complete grid" if grid.is_full()
                  else f"deepest state reached: {grid.filled()}/25 cells, {len(state.steps)} words")]
        if p.answer is not None:
            sc = score_board(state.board, p.answer)
            fields.update(sc.as_dict())
            lines.append(f"against the answer: letters {sc.letters_right}/25, words {sc.words_right}/10, "
                         f"game {'solved' if sc.game else 'not solved'}")
        if result.answer is None:
            # No answer: still say what could and could not be checked of the state reached.
            fields["board_report"] = task.report_answer(puzzle, state.board).to_json()
        return fields, "\n".join(lines)

    def bench_row(self, task: Crosswords, puzzle: str, result: Any, events: list[dict[str, Any]]) -> dict[str, Any]:
        """``tot bench``: letters / words / game of the output and of the best state seen, and
        the evaluator's false prunes against the answer (tasks/crosswords/bench.py)."""
        from tasks.crosswords.bench import bench_row

        return bench_row(self.report(task, puzzle, result)[0], puzzle, events)

    def bench_table(self, rows: list[dict[str, Any]]) -> str:
        from tasks.crosswords.bench import bench_table

        return bench_table(rows)

    def add_verify_args(self, parser: argparse.ArgumentParser) -> None:
        _add_source_args(parser)
        parser.add_argument("board", nargs="+",
                            help="25 letters, row by row (_ for an empty cell), or the ten words h1-h5 v1-v5")

    def verify(self, args: argparse.Namespace) -> tuple[bool, str]:
        items = _load(args)
        if len(items) != 1:
            raise ValueError("verify checks one puzzle: give one --index")
        _pid, p = items[0]
        given = " ".join(args.board)
        answer = read_grid(given) or given  # read as the rewards read it (tags, Answer: line, rows)
        parse_answer(answer)  # malformed: ValueError, exit status 2
        report = Crosswords(default_lexicon()).report_answer(p.text(), answer)
        return report.verified, "\n".join(report.lines())

    def task_from_options(self, options: dict[str, Any]) -> Crosswords:
        """The task a trace's run header describes (``tot verify --trace``). The lexicon gates
        need the lexicon the run used; the default one is rebuilt."""
        gate = options.get("lexicon_gate", "none")
        fill = options.get("fill_level", "arc")
        if gate not in FILL_LEVELS or fill not in FILL_LEVELS[1:]:
            raise ValueError("unknown crossword lexicon gate or fill level in the trace")
        candidates = options.get("candidates", 10)
        if candidates is not None and (not isinstance(candidates, int) or isinstance(candidates, bool)
                                       or candidates < 1):
            raise ValueError("bad 'candidates' in the trace's run header")
        lex = default_lexicon() if gate != "none" or options.get("require_word") else None
        return Crosswords(lex, lexicon_gate=gate, require_word=bool(options.get("require_word")),  # type: ignore[arg-type]
                          candidates=candidates, fill_level=fill,  # type: ignore[arg-type]
                          stop_when_full=bool(options.get("stop_when_full", True)))


PLUGIN = CrosswordsPlugin()
