"""``tot bench`` entries that replaced the per-task scripts: Sudoku's own zero-/one-/few-shot
baselines and Long's controller, writing's own refine, and the recorded embedded-model run of
writing replayed through the bench (no model is loaded)."""

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from solver.lm.base import GenParams
from solver.tools import bench
from solver.tools.cli import build_parser, main
from solver.tools.plugins import load_plugins
from tests import references as ref
from tests.fakes import ReplayOnly, ScriptedBackend

DATA = Path(__file__).parent / "data"


def bench_run(task: str, argv: list[str], respond) -> int:
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(["bench", task, *argv])
    return asyncio.run(bench.run_bench(args, plugins, backend=ScriptedBackend(respond)))


def rows(d: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for f in sorted(d.glob("results*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            out[(r["id"], r["method"])] = r
    return out


def _solve_by_reference(prompt: str) -> str:
    """A scripted model that answers the last board of a solution prompt with its solution,
    found by python-constraint (tests/references.py), as one JSON line."""
    board_line = [ln for ln in prompt.splitlines() if ln.startswith("Board:")][-1]
    givens = ref.read_board(board_line.removeprefix("Board:").strip())
    solution = ref.csp_solutions(givens, boxes=True)[0]
    return ' {"rows": [' + ", ".join('"' + "".join(map(str, row)) + '"' for row in solution) + "]}\n"


def test_sudoku_shot_baselines_and_long_in_one_table(tmp_path, capsys):
    out = tmp_path / "s"

    def respond(prompt: str, params: GenParams, i: int) -> str:
        # zero-shot gets the right board, one-shot a wrong one, few-shot no board at all.
        examples = prompt.count("Solution:") - 1
        if examples == 0:
            return _solve_by_reference(prompt)
        return ' {"rows": ["1234", "1234", "1234", "1234"]}\n' if examples == 1 else "I cannot\n"

    argv = ["--size", "4", "--count", "3", "--seed", "1", "--no-plots",
            "--methods", "zero-shot,one-shot,few-shot,long:enumerate:oracle", "--out", str(out)]
    assert bench_run("sudoku", argv, respond) == 0
    got = rows(out)
    assert len(got) == 12 and all(r["status"] == "done" for r in got.values())
    for (pid, method), r in got.items():
        if method in ("zero-shot", "long:enumerate:oracle"):
            assert r["verified"] and ref.csp_is_solution(ref.read_board(r["puzzle"]), ref.read_board(r["answer"]),
                                                         boxes=True), (pid, method)
        else:
            assert not r["verified"] and r["answer"] is None
            assert (r["raw_answers"], r["invalid_answers"]) == (1, 1)
    assert all(got[(p, "long:enumerate:oracle")]["calls"] == 0 for p, _ in got)
    table = capsys.readouterr().out
    assert "zero-shot" in table and "long:enumerate:oracle" in table


def test_task_baselines_are_refused_where_the_task_has_none(tmp_path, capsys):
    argv = ["bench", "game24", "--range", "901-901", "--methods", "zero-shot", "--out", str(tmp_path / "g")]
    assert main(argv) == 2
    assert "unknown method 'zero-shot'" in capsys.readouterr().err
    argv = ["bench", "sudoku", "--size", "3", "--methods", "refine", "--out", str(tmp_path / "s")]
    assert main(argv) == 2
    assert capsys.readouterr().err == ("tot: error: baseline `refine` needs a task with baseline prompts and an "
                                       "answer parser (BaselinePrompts: io_prompt, cot_prompt, parse_answer); "
                                       "Sudoku has none\n")


def test_writing_recording_replays_through_the_bench(tmp_path, capsys):
    """The embedded model's recorded run on input 0 (tests/data/writing_gemma.*) through
    ``tot bench writing`` in replay mode: the same answers, calls and tokens as recorded."""
    recorded = {json.loads(x)["method"]: json.loads(x)
                for x in (DATA / "writing_gemma.jsonl").read_text().splitlines() if x.strip()}
    store = tmp_path / "store.sqlite"
    shutil.copy(DATA / "writing_gemma.sqlite", store)
    out = tmp_path / "w"
    argv = ["bench", "writing", "--index", "0", "--methods", "io,cot,refine,tot-bfs@sample", "--refine-rounds", "2",
            "--k", "2", "--n-evaluate", "2", "--score-samples", "2", "--cache", str(store), "--cache-mode", "replay",
            "--out", str(out), "--no-plots", "--json"]
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(argv)
    assert asyncio.run(bench.run_bench(args, plugins, backend=ReplayOnly())) == 0  # fails if a call gets through
    got = rows(out)
    names = {"io": "io", "cot": "cot", "refine": "refine", "tot-bfs@sample": "tot-plan"}
    for method, old in names.items():
        r, rec = got[("0", method)], recorded[old]
        assert r["status"] == "done" and r["backend_calls"] == 0, method
        assert (r["answer"], r["calls"]) == (rec["answer"], rec["calls"]), method
        # The recording ran io after refine on one client: io's request was refine's first, served
        # by the in-run memo, so 0 tokens there; the bench gives every pair a fresh client.
        if method == "io":
            assert rec["tokens"] == 0 and r["tokens"] > 0
        else:
            assert r["tokens"] == rec["tokens"], method
        assert r["verified"] == rec["verified"]
    for method in ("io", "cot", "refine"):
        r, rec = got[("0", method)], recorded[method]
        assert (r["raw_answers"], r["raw_answers"] - r["invalid_answers"]) == (rec["raw"], rec["raw_ok"])
    # The bench scores each final answer, passed or refused: io's and cot's are their first raw passage.
    assert got[("0", "io")]["soft_score"] == pytest.approx(recorded["io"]["coherence_first_raw"])
    assert json.loads(capsys.readouterr().out)[0]["n"] == 1


def test_crossword_columns_are_scored_against_the_answer(tmp_path, capsys):
    """tot bench crosswords adds the paper's letters / words / game of the output and of the best
    state seen, and false prunes; re-scored here cell by cell against the answer board."""
    from tasks.crosswords.data import load_puzzles

    out, out2 = tmp_path / "cw-oracle", tmp_path / "cw-fillable"
    argv = ["bench", "crosswords", "--index", "1", "--methods", "tot-dfs:enumerate:oracle", "--candidates", "1000",
            "--keep-going", "--budget-steps", "30", "--out", str(out), "--no-plots"]
    assert main(argv) == 0
    argv = ["bench", "crosswords", "--index", "1", "--methods", "tot-dfs:enumerate:fillable", "--out", str(out2),
            "--no-plots"]
    assert main(argv) == 0
    got = rows(out) | rows(out2)
    assert got[("1", "tot-dfs:enumerate:oracle")]["game"]  # the oracle's upper bound solves puzzle 1
    answers = {str(i): p.answer for i, p in enumerate(load_puzzles(), 1)}
    for (pid, _method), r in got.items():
        truth = answers[pid]
        cells = [i for i, t in enumerate(truth) if t != "."]  # the 5x5 minis have no blocks
        right = sum(r["board"][i] == truth[i] for i in cells)
        assert r["letters_right"] == right and r["letters"] == pytest.approx(right / len(cells), abs=1e-4)
        words = [truth[5 * k:5 * k + 5] for k in range(5)] + [truth[k::5] for k in range(5)]
        mine = [r["board"][5 * k:5 * k + 5] for k in range(5)] + [r["board"][k::5] for k in range(5)]
        assert r["words_right"] == sum(a == b for a, b in zip(words, mine, strict=True))
        assert r["game"] == (r["board"] == truth)
        assert r["best_letters"] >= r["letters"] - 1e-9 or r["stopped_by"]  # the output was seen too
        assert 0 <= r["false_pruned"] <= r["solvable_scored"] <= r["scored"]
    # The oracle evaluator prunes no solvable state, by definition.
    assert all(r["false_pruned"] == 0 for (_, m), r in got.items() if m.endswith(":oracle"))
    table = capsys.readouterr().out
    assert "best: l/w/g" in table and "false prunes" in table
    # tot bench report prints the task's own table again from the results alone.
    assert main(["bench", "report", str(out), str(out2), "--no-plots"]) == 0
    table = capsys.readouterr().out
    assert "tot-dfs:enumerate:oracle       1   100.0% 100.0%      1" in table and "enumerate:fillable" in table
