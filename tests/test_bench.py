"""``tot bench`` with scripted models: resumption after kill -9, errored pairs, shards and merge,
the summary arithmetic, the gate ablation and the figures."""

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from solver.evaluators import Oracle
from solver.generators import Propose
from solver.lm.base import GenParams, LMError
from solver.lm.client import LMClient
from solver.searches import run_search
from solver.tools import bench
from solver.tools.cli import build_parser, main
from solver.tools.plugins import load_plugins
from solver.tools.report import final_rows, load_rows, lost_counts, summarize
from solver.tools.stats import wilson
from solver.trace import Trace
from tasks.game24 import Game24
from tests import references as ref
from tests.fakes import ScriptedBackend

ROOT = Path(__file__).resolve().parents[1]
METHODS = "io,cot,cot-sc"
ARGS = ["--generated", "--range", "1-6", "--samples", "3", "--no-plots"]

# The fake's script, shared with the subprocess below: right answers for some puzzles only.
RIGHT = {"1 1 1 8": "(1 + 1 + 1) * 8", "1 1 1 12": "(1 + 1) * 12 * 1", "1 1 2 6": "(1 + 1) * 2 * 6"}


def test_the_scripts_right_answers_are_right():
    # The expected counts below (3 of 6 solved) rest on these answers, checked here by sympy.
    assert all(ref.game24_ok(nums, answer) for nums, answer in RIGHT.items())
    assert not ref.game24_ok("1 2 3 4", "1 + 1")


def respond(prompt: str, params: GenParams, i: int) -> str:
    nums = re.findall(r"Input: ([\d ]+)\n", prompt)[-1].strip()
    answer = RIGHT.get(nums, "1 + 1")
    return f" {answer} = 24\n" if "Answer:" in prompt[-10:] else f"Answer: {answer} = 24\n"


KILLER = f"""
import asyncio, os, re, signal, sys
sys.path.insert(0, {str(ROOT)!r})
from solver.tools import bench
from solver.tools.cli import build_parser
from solver.tools.plugins import load_plugins
from tests.fakes import ScriptedBackend
from tests.test_bench import respond
kill_at, calls = int(sys.argv[1]), [0]
def killing(prompt, params, i):
    calls[0] += 1
    if calls[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    return respond(prompt, params, i)
plugins = load_plugins()
args = build_parser(plugins).parse_args(sys.argv[2:])
sys.exit(asyncio.run(bench.run_bench(args, plugins, backend=ScriptedBackend(killing))))
"""


def bench_run(argv, respond_fn=respond):
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(["bench", "game24", *argv])
    return asyncio.run(bench.run_bench(args, plugins, backend=ScriptedBackend(respond_fn)))


def lines(d: Path) -> list[dict]:
    return [json.loads(x) for f in sorted(d.glob("results*.jsonl")) for x in f.read_text().splitlines() if x]


def outcome(d: Path) -> dict:
    return {(r["id"], r["method"]): (r["status"], r["verified"], r["answer"], r["raw_answers"], r["invalid_answers"])
            for r in load_rows([d])}


def test_kill_9_loses_nothing_and_counts_nothing_twice(tmp_path, capsys):
    full, killed = tmp_path / "full", tmp_path / "killed"
    assert bench_run([*ARGS, "--methods", METHODS, "--out", str(full)]) == 0
    # cot-sc asks once for n=3 samples, and the fake is asked per sample: 5 calls per puzzle.
    r = subprocess.run([sys.executable, "-c", KILLER, "13", "bench", "game24", *ARGS, "--methods", METHODS,
                        "--out", str(killed)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == -9
    before = lines(killed)
    assert 0 < len(before) < 18 and len({(x["id"], x["method"]) for x in before}) == len(before)
    assert bench_run([*ARGS, "--methods", METHODS, "--out", str(killed)]) == 0
    after = lines(killed)
    assert after[: len(before)] == before  # nothing rewritten
    assert len(after) == 18 and len({(x["id"], x["method"]) for x in after}) == 18
    assert outcome(killed) == outcome(full)
    assert bench_run([*ARGS, "--methods", METHODS, "--out", str(killed)]) == 0  # a third run does nothing
    assert len(lines(killed)) == 18
    table = capsys.readouterr().out
    assert re.search(r"^io\s+3/6 ", table, re.M) and re.search(r"^cot-sc\s+3/6 ", table, re.M)


def test_half_written_line_is_skipped_and_the_pair_rerun(tmp_path):
    out = tmp_path / "b"
    assert bench_run([*ARGS, "--methods", "io", "--out", str(out)]) == 0
    path = out / "results.jsonl"
    rows = path.read_text().splitlines()
    path.write_text("\n".join(rows[:-1]) + "\n" + rows[-1][: len(rows[-1]) // 2])  # killed mid-write
    assert bench_run([*ARGS, "--methods", "io", "--out", str(out)]) == 0
    assert len(load_rows([out])) == 6
    assert len(lines_ok := [x for x in path.read_text().splitlines() if x.endswith("}")]) == 6, lines_ok


def test_errored_pairs_are_marked_and_only_they_are_retried(tmp_path):
    out = tmp_path / "b"

    def flaky(prompt, params, i):
        if "1 1 1 12" in prompt.split("Input:")[-1]:
            raise LMError("server down")
        return respond(prompt, params, i)

    assert bench_run([*ARGS, "--methods", "io", "--out", str(out)], flaky) == 0
    rows = {r["id"]: r for r in load_rows([out])}
    assert rows["3"]["status"] == "error" and "failed" in rows["3"]["error"]
    assert sum(r["status"] == "done" for r in rows.values()) == 5
    seen = []

    def recording(prompt, params, i):
        seen.append(prompt.split("Input:")[-1].split("\n")[0].strip())
        return respond(prompt, params, i)

    assert bench_run([*ARGS, "--methods", "io", "--out", str(out)], recording) == 0
    assert seen == ["1 2 3 4", "1 1 1 12"]  # the untimed warm-up call, then the errored pair only
    rows = {r["id"]: r for r in load_rows([out])}
    assert rows["3"]["status"] == "done" and rows["3"]["verified"]
    assert summarize(load_rows([out]))[0].n == 6


def test_a_call_cut_by_the_seconds_budget_is_a_budget_stop_not_an_error(tmp_path):
    # The seconds budget runs out while the model is still answering "1 1 1 12": the call is cut
    # (a failed call in the trace), the pair stops on "seconds", and it is done, not errored
    # (a rerun would stop there again); the other pairs are unaffected.
    class Slow(ScriptedBackend):
        async def complete(self, prompt, params):
            if "1 1 1 12" in prompt.split("Input:")[-1]:
                await asyncio.sleep(5)
            return await super().complete(prompt, params)

    out = tmp_path / "b"
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(["bench", "game24", *ARGS, "--methods", "io", "--out", str(out),
                                             "--budget-seconds", "0.5"])
    assert asyncio.run(bench.run_bench(args, plugins, backend=Slow(respond))) == 0
    rows = {r["id"]: r for r in load_rows([out])}
    assert rows["3"]["failed_calls"] == 1 and rows["3"]["stopped_by"] == "seconds"
    assert rows["3"]["status"] == "done" and not rows["3"]["verified"]
    assert all(r["status"] == "done" for r in rows.values()) and len(rows) == 6


def test_shards_merge_to_the_full_run(tmp_path, capsys):
    full = tmp_path / "full"
    assert bench_run([*ARGS, "--methods", "io,cot", "--out", str(full)]) == 0
    shards = []
    for i in (1, 2, 3):
        d = tmp_path / f"s{i}"
        assert bench_run([*ARGS, "--methods", "io,cot", "--out", str(d), "--shard", f"{i}/3"]) == 0
        assert len(load_rows([d])) == 4
        shards.append(str(d))
    merged = tmp_path / "merged"
    assert main(["bench", "merge", *shards, "--out", str(merged), "--no-plots"]) == 0
    assert outcome(merged) == outcome(full)
    assert main(["bench", "merge", *shards, shards[0], "--out", str(tmp_path / "m2"), "--no-plots"]) == 0
    assert len(lines(tmp_path / "m2")) == 12  # a directory given twice is not counted twice


def test_mixing_configurations_is_refused(tmp_path, capsys):
    out = tmp_path / "b"
    assert bench_run([*ARGS, "--methods", "io", "--out", str(out)]) == 0
    assert main(["bench", "game24", *ARGS, "--methods", "io", "--out", str(out), "--temperature", "0.1"]) == 2
    assert "another configuration (temperature" in capsys.readouterr().err
    other = tmp_path / "c"
    assert bench_run([*ARGS, "--methods", "io", "--out", str(other), "--seed", "5"]) == 0
    assert main(["bench", "merge", str(out), str(other), "--out", str(tmp_path / "m"), "--no-plots"]) == 2


@pytest.mark.parametrize("argv, message", [
    (["--methods", "io,telepathy"], "unknown method"),
    (["--methods", ""], "--methods is empty"),
    (["--shard", "4/3"], "bad --shard"),
    (["--shard", "x"], "bad --shard"),
    (["--samples", "0"], "--samples must be at least 1"),
])
def test_bad_bench_input_is_one_line_exit_2(tmp_path, capsys, argv, message):
    assert main(["bench", "game24", "--generated", "--range", "1-2", "--out", str(tmp_path / "b"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and message in err and err.count("\n") == 1


def test_oracle_search_needs_no_model_and_writes_plots(tmp_path, capsys):
    out = tmp_path / "b"
    assert main(["bench", "game24", "--generated", "--range", "1-4", "--methods", "tot-bfs,tot-dfs",
                 "--generator", "enumerate", "--evaluator", "oracle", "--out", str(out)]) == 0
    s = {x.method: x for x in summarize(load_rows([out]))}
    assert s["tot-bfs"].solved == 4 and s["tot-dfs"].solved == 4 and s["tot-bfs"].calls == 0
    assert (out / "success_vs_tokens.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main(["bench", "report", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["method"]: d["solved"] for d in data} == {"tot-bfs": 4, "tot-dfs": 4}


# ---- the gate ablation ----

LIAR = {  # steps 1 and 3 state wrong facts (step 2 is true); they end in a claimed 24
    "4 9 10 13": "4 + 9 = 13 (left: 12 12 10)\n",
    "10 12 12": "12 + 12 = 24 (left: 24 10)\n",
    "10 24": "10 + 24 = 24 (left: 24)\n",
}


def liar(prompt, params, i):
    nums = re.findall(r"Input: ([\d/ -]+)\n", prompt)[-1].strip()
    return LIAR.get(nums, "1 + 1 = 3 (left: 3)\n")


def test_no_gate_lets_wrong_thoughts_in_and_the_final_check_refuses_them(tmp_path, capsys):
    out = tmp_path / "b"
    argv = ["4 9 10 13", "--methods", "tot-bfs,tot-bfs:no-gate", "--generator", "propose",
            "--evaluator", "oracle", "--out", str(out), "--no-plots"]
    assert bench_run(argv, liar) == 0
    rows = {r["method"]: r for r in load_rows([out])}
    on, off = rows["tot-bfs"], rows["tot-bfs:no-gate"]
    assert on["rejected"] == 1 and on["unchecked"] == 0 and not on["verified"]
    assert off["unchecked"] == 2 and off["final_rejected"] == 1 and not off["verified"]
    assert off["answer"] is None
    # Both ask the same first question; each pair pays for its own (no memo shared across pairs).
    assert off["cache_hits"] == 0 and off["backend_calls"] == off["calls"] == 3
    assert "the final check refused 1 claimed solutions" in capsys.readouterr().out


def test_tree_lost_at_replays_the_trace():
    task = Game24()

    def respond2(prompt, params, i):
        nums = re.findall(r"Input: ([\d/ -]+)\n", prompt)[-1].strip()
        return {"4 9 10 13": "13 - 9 = 4 (left: 4 4 10)\n4 + 9 = 13 (left: 10 13 13)\n",
                "4 4 10": "4 + 4 = 8 (left: 8 10)\n"}.get(nums, "")

    backend = ScriptedBackend(respond2)
    trace = Trace()
    res = asyncio.run(run_search("tot-bfs", task, "4 9 10 13", Propose(), Oracle(), LMClient(backend), breadth=5,
                          trace=trace))
    assert not res.verified
    # 4 4 10 (depth 1) is solvable and kept; its only child 8 10 is not: lost at step 2.
    assert bench.tree_lost_at(task, "4 9 10 13", trace.events) == 2


# ---- summary arithmetic ----


def test_wilson_known_values():
    lo, hi = wilson(7, 100)
    assert lo == pytest.approx(0.0343, abs=1e-4) and hi == pytest.approx(0.1375, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_summary_arithmetic():
    rows = [
        {"task": "t", "id": "1", "method": "io", "status": "done", "verified": True, "calls": 1, "prompt_tokens": 100,
         "completion_tokens": 10, "seconds": 2.0, "cost": 0.01, "raw_answers": 1, "invalid_answers": 0},
        {"task": "t", "id": "2", "method": "io", "status": "done", "verified": False, "calls": 3, "prompt_tokens": 300,
         "completion_tokens": 30, "seconds": 4.0, "cost": 0.03, "raw_answers": 1, "invalid_answers": 1},
        {"task": "t", "id": "3", "method": "io", "status": "error", "verified": False, "calls": 9},
        {"task": "t", "id": "2", "method": "io", "status": "done", "verified": True, "calls": 99},  # duplicate
    ]
    [s] = summarize(final_rows(rows))
    assert (s.n, s.solved, s.errored) == (2, 1, 1)
    assert s.rate == 0.5 and s.calls == 2.0 and s.prompt_tokens == 200 and s.completion_tokens == 20
    assert s.tokens_per_solved == 440 and s.seconds == 3.0 and s.seconds_per_solved == 6.0
    assert s.cost == pytest.approx(0.02) and (s.raw_answers, s.invalid_answers) == (2, 1)
    assert (s.lo, s.hi) == wilson(1, 2)


def test_errored_row_is_replaced_by_a_later_finished_one():
    rows = [{"task": "t", "id": "1", "method": "io", "status": "error"},
            {"task": "t", "id": "1", "method": "io", "status": "done", "verified": True}]
    assert final_rows(rows) == [rows[1]]


def test_lost_counts_buckets():
    rows = [{"method": "cot", "status": "done", "verified": False, "lost_at": 1, "max_depth": 3},
            {"method": "cot", "status": "done", "verified": False, "lost_at": 4, "max_depth": 3},
            {"method": "cot", "status": "done", "verified": True},
            {"method": "tot-bfs", "status": "done", "verified": False, "lost_at": 2, "stopped_by": "calls"},
            {"method": "io", "status": "done", "verified": True}]
    c = lost_counts(rows)
    assert c["cot"] == {"1": 1, "end": 1, "solved": 1} and c["tot-bfs"] == {"budget": 1} and "io" not in c

