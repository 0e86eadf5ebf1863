"""The official crossword DFS log (shipped in tests/data/tot_logs) through ``tot audit --tot-log``.

The figures are checked against a re-scorer written here from the log format alone: it writes the
letters of each path of actions onto a board and compares with the answer board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.tools.cli import main
from tasks.datafiles import shared_data

LOG = Path(__file__).parent / "data" / "tot_logs" / "crosswords_infoss_dfs_prune.json"
PUZZLES = shared_data(Path("crosswords") / "mini0505.json")
needs_data = pytest.mark.skipif(not PUZZLES.is_file(), reason="mini0505.json (the paper's puzzles) not found")


def _board(actions: list[str]) -> list[str]:
    """Letters written in order; a later word overwrites (the log never needs that)."""
    cells = ["_"] * 25
    for a in actions:
        slot, word = a.split(". ")
        k = int(slot[1]) - 1
        idx = [k * 5 + j for j in range(5)] if slot[0] == "h" else [j * 5 + k for j in range(5)]
        for i, ch in zip(idx, word.upper(), strict=False):
            cells[i] = ch
    return cells


def _words_right(cells: list[str], answer: str) -> int:
    lines = [[r * 5 + c for c in range(5)] for r in range(5)] + [[r * 5 + c for r in range(5)] for c in range(5)]
    return sum(all(cells[i] == answer[i] for i in line) for line in lines)


def _reference() -> dict[str, int]:
    games = json.loads(LOG.read_text())
    answers = ["".join(p[1]) for p in json.loads(PUZZLES.read_text())][0:100:5]
    ref = {"steps": 0, "agree": 0, "impossible": 0, "false_prunes": 0, "impossible_unsolvable": 0,
           "solved_games": 0, "letters_logged_equal": 0, "words_logged_equal": 0}
    for game, answer in zip(games, answers, strict=True):
        solved = False
        for step in game:
            cells = _board(step["actions"])
            ok = all(c == "_" or c == a for c, a in zip(cells, answer, strict=False))
            imp = step["count"]["impossible"] > 0
            ref["steps"] += 1
            ref["agree"] += ok
            ref["impossible"] += imp
            ref["false_prunes"] += ok and imp
            ref["impossible_unsolvable"] += imp and not ok
            solved |= "".join(cells) == answer
            letters = sum(c == a for c, a in zip(cells, answer, strict=False))
            ref["letters_logged_equal"] += abs(step["info"]["r_letter"] - letters / 25) < 1e-9
            ref["words_logged_equal"] += abs(step["info"]["r_word"] - _words_right(cells, answer) / 10) < 1e-9
        ref["solved_games"] += solved
    return ref


def test_the_shipped_log_is_the_official_file() -> None:
    data = json.loads(LOG.read_text())
    assert len(LOG.read_text()) == 396937  # total_chars of the original
    assert len(data) == 20 and sum(len(g) for g in data) == 1856


@needs_data
def test_audit_of_the_official_log_matches_an_independent_rescoring(capsys: pytest.CaptureFixture[str]) -> None:
    ref = _reference()
    # The log's own numbers agree with the re-scoring at every step (nothing was lost in the copy).
    assert ref["letters_logged_equal"] == ref["words_logged_equal"] == ref["steps"] == 1856
    assert main(["audit", "--tot-log", str(LOG), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["groups"][0]
    assert (g["task"], g["method"], g["runs"]) == ("crosswords", "tot-dfs", 20)
    a = g["depths"]["all"]
    assert a["evaluated"] == ref["steps"]
    assert a["solvable"] == ref["agree"]
    assert a["false_prune"]["k"] == ref["false_prunes"] and a["false_prune"]["n"] == ref["agree"]
    assert a["classes"]["impossible"]["solvable"] + a["classes"]["impossible"]["unsolvable"] == ref["impossible"]
    assert g["impossible_right"]["k"] == ref["impossible_unsolvable"]
    assert g["answered_correct"] == ref["solved_games"] == 7
    imp = g["imported"]
    assert (imp["gate_refused"], imp["letters_mismatch"], imp["words_mismatch"]) == (0, 0, 0)
    assert len(g["lost"]) == 20 - ref["solved_games"]
    assert {x["puzzle"] for x in g["games"] if x["solved_step"] is not None} == {6, 31, 36, 41, 61, 66, 91}


@needs_data
def test_a_log_without_pruning_expands_impossible_states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Puzzle 1 (answer AGEND / MOTOR / ARTSY / SALLE / SLEER): a child below an impossible state.
    game = [{"total_step": 0, "env_step": 1, "actions": ["h2. motor"], "info": {"r_letter": 0.2, "r_word": 0.1},
             "count": {"sure": 0, "maybe": 0, "impossible": 1}},
            {"total_step": 1, "env_step": 2, "actions": ["h2. motor", "h1. agend"],
             "info": {"r_letter": 0.4, "r_word": 0.3}, "count": {"sure": 2, "maybe": 0, "impossible": 0}}]
    path = tmp_path / "no_prune.json"
    path.write_text(json.dumps([game]))
    assert main(["audit", "--tot-log", str(path), "--task", "crosswords", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["groups"][0]
    a = g["depths"]["all"]
    # Nothing is cut without pruning, so nothing is a false prune; the judgement is still graded.
    assert a["cut"]["pruned"]["solvable"] == 0 and a["false_prune"]["k"] == 0
    assert a["classes"]["impossible"]["solvable"] == 1
    # h1 AGEND puts A G E N D over v1..v5's first letters: r_word 0.3 is wrong (h1, h2 and no column).
    assert g["imported"]["words_mismatch"] == 1


@needs_data
def test_a_word_breaking_a_crossing_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = [{"total_step": 0, "env_step": 1, "actions": ["h2. motor"], "info": {}, "count": {}},
            {"total_step": 1, "env_step": 2, "actions": ["h2. motor", "v1. xxxxx"], "info": {}, "count": {}}]
    path = tmp_path / "bad_word.json"
    path.write_text(json.dumps([game]))
    assert main(["audit", "--tot-log", str(path), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["groups"][0]
    assert g["imported"]["gate_refused"] == 1
    assert g["invalid_states"]["by_kind"] == {"disagrees with a crossing letter": 1}


def test_malformed_crossword_logs_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([[{"env_step": 2, "actions": ["h1. abcde"]}]]))  # env_step disagrees
    assert main(["audit", "--tot-log", str(bad), "--task", "crosswords"]) == 2
    bad.write_text(json.dumps([[{"env_step": 1, "actions": "h1. abcde"}]]))
    assert main(["audit", "--tot-log", str(bad), "--task", "crosswords"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("tot: error:") for line in err)
