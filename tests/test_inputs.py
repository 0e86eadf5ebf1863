"""Input classes, every instance: Unicode digits, special files and size caps, look-alike letters,
sentence counts that must not change silently, and CSV/word-list/trace files that are not what
they claim. Each bad input is refused: by the gate (model text) or with one line and exit 2 (files
and arguments), never a crash, a hang or a silent acceptance."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from solver.run import SearchSettings, Settings, make_client, solve
from solver.searches import get_search
from solver.task import Thought
from solver.tools.cli import main
from tasks.crosswords.task import Crosswords, parse_thought
from tasks.game24.task import parse_puzzle
from tasks.sudoku.parse import extract_boards
from tasks.sudoku.task import Sudoku
from tasks.writing.data import load_lines
from tests.fakes import ScriptedBackend
from verifiers.arithmetic import check_step, verify_answer
from verifiers.crossword import Grid, check_word, parse_board
from verifiers.sudoku import parse_board as sudoku_board
from verifiers.verdict import Invalid
from verifiers.writing import split_sentences

# Characters int(), isdigit() or \d accept that are not ASCII digits: superscripts, Arabic-Indic,
# Devanagari, fullwidth, mathematical bold.
UNICODE_DIGITS = ["\u00b2", "\u00b9", "\u0663", "\u0967", "\uff13", "\U0001d7d1", "\u2083"]


# ---- Unicode digits ----------------------------------------------------------------------------

@pytest.mark.parametrize("d", UNICODE_DIGITS)
def test_sudoku_parsers_reject_unicode_digits_without_crashing(d):
    current = ((0, 2, 0), (0, 3, 2), (0, 1, 3))
    for text in (f'{{"rows": ["3{d}*", "*32", "*13"]}}', f'{{"cells": [["{d}", 1, 3]]}}',
                 f'{{"cells": [[1, 1, "{d}"]]}}', f'{{"row": "1", "col": "{d}", "value": 3}}'):
        assert extract_boards(text, current) == []
    with pytest.raises(ValueError, match="not a digit"):
        sudoku_board(f"3{d}1|*32|*13")
    task = Sudoku()
    state = task.root("*2*|*32|*13")
    assert isinstance(task.check(state, Thought(f"3{d}*|*32|*13")), Invalid)


def test_a_sudoku_run_with_unicode_digits_in_model_output_completes():
    def respond(prompt: str, params: Any, i: int) -> str:
        return ' {"rows": ["3\u00b2\u00b9", "\u0661\u0663\u0662", "213"]} {"cells": [["\u00b9", 1, 3]]}'

    s = Settings(search=SearchSettings(method="long", generator="propose", evaluator="oracle",
                                       options=get_search("long").options_from({"max_rounds": 5})))
    res = asyncio.run(solve(Sudoku(), "*2*|*32|*13", s, make_client(s, ScriptedBackend(respond))))
    assert res.answer is None and res.error is None


@pytest.mark.parametrize("d", UNICODE_DIGITS)
def test_game24_rejects_unicode_digits_in_steps_answers_and_puzzles(d):
    numbers = (Fraction(3), Fraction(4), Fraction(9), Fraction(13))
    assert isinstance(check_step(numbers, f"{d} + 4 = 7 (left: 7 9 13)"), Invalid)
    assert isinstance(check_step(numbers, f"3 + 4 = 7 (left: 7 9 1{d})"), Invalid)
    assert isinstance(verify_answer((3, 4, 9, 13), f"(13 - 9 + {d}) * 4 - 4"), Invalid)
    with pytest.raises(ValueError):
        parse_puzzle(f"3 4 9 1{d}")


def test_index_ranges_take_ascii_digits_only(capsys):
    for argv in (["solve", "game24", "--generated", "--range", "\u0661-\u0663", "--generator", "enumerate",
                  "--evaluator", "oracle"],
                 ["solve", "game24", "--generated", "--range", "1_0", "--generator", "enumerate",
                  "--evaluator", "oracle"],
                 ["verify", "crosswords", "--index", "\u0661", "A" * 25]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("tot: error:") and err.count("\n") == 1


# ---- look-alike letters ------------------------------------------------------------------------

@pytest.mark.parametrize("word", ["\u017ftore", "\u0131ndex", "\u212anots", "STRA\u00df", "\uff33TORE", "\u0405TORE"])
def test_crossword_lookalikes_are_refused_by_gate_parser_and_board_alike(word):
    # long s, dotless i, Kelvin sign, sharp s, fullwidth S, Cyrillic DZE: upper() or a case-blind
    # [A-Za-z] would turn some into A-Z; every checker refuses all of them.
    assert isinstance(parse_thought(f"h1. {word}"), Invalid)
    assert isinstance(check_word(Grid.empty(), "h1", word), Invalid)
    task = Crosswords()
    state = task.root(json.dumps({"clues": [f"c{k}" for k in range(10)]}))
    assert isinstance(task.check(state, Thought(f"h1. {word}")), Invalid)
    with pytest.raises(ValueError):
        parse_board(word + "A" * 20)
    with pytest.raises(ValueError):
        parse_board(word + "A" * 20, allow_empty=False)


# ---- writing: the sentence count never changes silently ----------------------------------------

def test_writing_input_must_split_into_exactly_four_sentences(capsys):
    for text, found in (("The end came The cat sat. I ran. We hid.", 3),
                        ("I ran. We hid. It rained. The end came. Cats sat.", 5)):
        with pytest.raises(ValueError, match=f"splits into {found} sentences"):
            split_sentences(text)
        assert main(["solve", "writing", text]) == 2
        assert "exactly 4 are needed" in capsys.readouterr().err
    assert split_sentences("The end came\nThe cat sat.\nI ran.\nWe hid.") == (
        "The end came", "The cat sat.", "I ran.", "We hid.")


def test_the_data_files_fused_fragment_is_made_explicit(tmp_path):
    data = tmp_path / "lines.txt"
    data.write_text("A cat sat. It rained. We hid. The end came.\n"
                    "Instead of a party You went home. It rained. We hid.\n", encoding="utf-8")
    rows = load_lines(data, "0-1")
    assert rows[0] == (0, "A cat sat. It rained. We hid. The end came.")
    assert rows[1] == (1, "Instead of a party\nYou went home.\nIt rained.\nWe hid.")
    assert split_sentences(rows[1][1]) == ("Instead of a party", "You went home.", "It rained.", "We hid.")


# ---- files: regular files only, bounded ---------------------------------------------------------

def _main_in_thread(argv: list[str], seconds: float = 60.0) -> int:
    """Run the CLI in a thread: a read that blocks (a FIFO) or never ends (/dev/zero) fails the test
    instead of hanging it."""
    box: dict[str, int] = {}
    t = threading.Thread(target=lambda: box.setdefault("rc", main(argv)), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"blocked: {argv}"
    return box["rc"]


SPECIAL_FILE_COMMANDS = [
    ["solve", "crosswords", "--puzzle", "{f}", "--generator", "enumerate", "--evaluator", "prior"],
    ["verify", "crosswords", "--puzzle", "{f}", "A" * 25],
    ["solve", "crosswords", "--data", "{f}", "--index", "1", "--generator", "enumerate", "--evaluator", "prior"],
    ["solve", "crosswords", "--puzzle", "{ok}", "--word-list", "{f}", "--generator", "enumerate",
     "--evaluator", "prior"],
    ["verify", "writing", "A cat sat. It rained. We hid. The end came.", "{f}"],
    ["solve", "writing", "--index", "0", "--data", "{f}"],
    ["solve", "game24", "--data", "{f}", "--range", "1-2", "--generator", "enumerate", "--evaluator", "oracle"],
    ["verify", "--trace", "{f}"],
    ["show", "{f}"],
    ["audit", "{f}"],
    ["audit", "--tot-log", "{f}"],
    ["solve", "game24", "4 9 10 13", "--cache", "{f}", "--base-url", "http://127.0.0.1:9", "--model", "m",
     "--cache-mode", "replay"],
]


@pytest.fixture()
def special_files(tmp_path: Path) -> list[str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return [str(fifo), "/dev/zero", "/dev/stdin", str(tmp_path)]


@pytest.mark.parametrize("argv", SPECIAL_FILE_COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_special_files_are_refused_in_one_line(argv, special_files, tmp_path, capsys):
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"clues": [f"c{k}" for k in range(10)]}), encoding="utf-8")
    for f in special_files:
        args = [a.replace("{f}", f).replace("{ok}", str(ok)) for a in argv]
        assert _main_in_thread(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("tot: error:") and err.count("\n") == 1, (args, err)


def test_oversized_files_are_refused_before_reading(tmp_path, capsys):
    big = tmp_path / "big.txt"
    with big.open("wb") as fh:
        fh.truncate(600 * 1024 * 1024)  # sparse: larger than every cap, costs no disk
    for argv in (["verify", "writing", "A cat sat. It rained. We hid. The end came.", str(big)],
                 ["verify", "--trace", str(big)], ["solve", "crosswords", "--puzzle", str(big)],
                 ["solve", "game24", "--data", str(big), "--range", "1-2"]):
        assert _main_in_thread(argv) == 2
        err = capsys.readouterr().err
        assert "bytes; at most" in err and err.count("\n") == 1, err  # refused by its size, before reading


@pytest.mark.parametrize("content, needle", [
    ("Rank,Puzzles\n\u0661,1 2 3 4\n", "'Rank' must be a whole number"),
    ("Rank,Puzzles\n1\n", "'Rank' must be a whole number"),
    ("Rank,Puzzles\n1_0,1 2 3 4\n", "'Rank' must be a whole number"),
    ("Rank,Puzzles\n1,\"1 2 3 4\n", "Rank"),
    ("Rank,Puzzles\n1,\"a\x00b\"\n", "1"),
])
def test_malformed_csv_is_one_line(tmp_path, capsys, content, needle):
    data = tmp_path / "24.csv"
    data.write_text(content, encoding="utf-8")
    rc = main(["solve", "game24", "--data", str(data), "--range", "1-1", "--generator", "enumerate",
               "--evaluator", "oracle"])
    err = capsys.readouterr().err
    assert rc in (0, 2) and "internal error" not in err
    if rc == 2:
        assert err.count("\n") == 1 and needle in err


def test_passage_from_a_terminal_is_refused(monkeypatch, capsys):
    class Tty:
        def isatty(self) -> bool:
            return True

        def read(self, n: int = -1) -> str:
            raise AssertionError("read a terminal")

    monkeypatch.setattr("sys.stdin", Tty())
    assert main(["verify", "writing", "A cat sat. It rained. We hid. The end came.", "-"]) == 2
    assert "standard input is a terminal" in capsys.readouterr().err


@pytest.mark.parametrize("d", UNICODE_DIGITS)
def test_votes_and_choices_read_ascii_digits_only(d):
    from solver.evaluators import parse_vote
    from solver.generators import _CHOICE_RE

    assert parse_vote(f"The best choice is {d}", 9) is None
    assert parse_vote("The best choice is 2", 9) == 2
    assert parse_vote("The best choice is " + "9" * 5000, 9) is None  # no int() of a huge number
    assert _CHOICE_RE.match(f"{d}. some step") is None and _CHOICE_RE.match("3. some step") is not None


@pytest.mark.parametrize("op, result", [("\u00d7", 24), ("\u22c5", 24), ("\u00b7", 24), ("x", 24),
                                        ("\u00f7", 6), (":", 6), ("\u2212", 10), ("\u2013", 10)])
def test_game24_steps_and_answers_read_the_same_operator_spellings(op, result):
    # a spelling the step gate accepts is accepted by the answer check too, with the same meaning
    numbers = (Fraction(12), Fraction(2), Fraction(1), Fraction(1))
    step = check_step(numbers, f"12 {op} 2 = {result} (left: 1 1 {result})")
    assert not isinstance(step, Invalid) and step.result == result
    answer = verify_answer((12, 2, 1, 1), f"(12 {op} 2) * 1 * 1")
    if result == 24:
        assert answer == 24
    else:
        assert isinstance(answer, Invalid) and f"evaluates to {result}" in answer.reason
