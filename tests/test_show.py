"""``tot show``: the single-file HTML (self-contained, data exact), the text tree, and bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from solver.tools.cli import main
from solver.tools.show import load_trees, render_html, render_text, tree_data
from solver.tools.tree import build_trees
from tests.test_tree import dfs_trace, oracle_bfs_trace, scripted_bfs_trace


def embedded_data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="tot-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_html_is_one_offline_file_holding_every_run(tmp_path, capsys):
    trace = tmp_path / "run.jsonl"
    oracle_bfs_trace(trace)
    scripted_bfs_trace(trace)
    capsys.readouterr()
    assert main(["show", str(trace)]) == 0
    out = tmp_path / "run.html"
    assert f"wrote {out} (2 runs," in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    # Nothing to fetch: no external scripts, styles, images or links, and a CSP that forbids them.
    assert not re.search(r"<(link|img|iframe)\b|\bsrc\s*=|https?://", page, re.I)
    assert "default-src 'none'" in page
    data = embedded_data(page)
    trees = load_trees(str(trace))
    assert data["runs"] == json.loads(json.dumps([tree_data(t) for t in trees]))
    assert [len(r["nodes"]) for r in data["runs"]] == [len(t.nodes) for t in trees]


def test_thought_text_cannot_break_out_of_the_page(tmp_path):
    evil = "</script><script>alert(1)</script><!-- & __JS__"
    events = [{"event": "start", "task": "x", "puzzle": evil}, {"event": "root", "node": 0, "state": evil},
              {"event": "proposal", "node": 1, "parent": 0, "thought": evil}]
    page = render_html(build_trees(events), "x.jsonl")
    assert page.count("</script>") == 2  # the data block's and the viewer's own
    data = embedded_data(page)
    assert data["runs"][0]["nodes"][1]["th"] == evil and data["runs"][0]["info"]["puzzle"] == evil
    assert "&lt;/script&gt;" in page.split("<body>")[0]  # the title is escaped too


def test_text_tree_shows_fates_reasons_and_the_path(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    scripted_bfs_trace(trace)
    assert main(["show", str(trace), "--text"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("run 1  game24  '4 9 10 13'  tot-bfs  propose/value")
    assert lines[1] == "answer (13 - 9) * (10 - 4) [verified]"
    assert "x 4 * 9 = 37 (left: 10 13 37)  [rejected, 4 * 9 is 36, not 37]" in out
    path_lines = [ln for ln in lines if "* #" in ln or ln.startswith("* ")]
    assert len(path_lines) == 4 and "verified: (13 - 9) * (10 - 4)" in path_lines[-1]
    assert "[beam" in out
    [tree] = load_trees(str(trace))
    assert len(lines) == 2 + len(tree.nodes)


def test_text_of_one_run_and_node_limit(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    oracle_bfs_trace(trace)
    dfs_trace(trace)
    capsys.readouterr()
    assert main(["show", str(trace), "--text", "--run", "2", "--max-nodes", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run 2  game24  '4 9 10 13'  tot-dfs") and "run 1" not in out
    assert len(out.splitlines()) == 2 + 5 + 1 and "more nodes" in out
    assert "backtracked" in render_text(load_trees(str(trace), run=2)[0])


def test_oracle_marks_false_prunes(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    oracle_bfs_trace(trace, "--breadth", "2")
    capsys.readouterr()
    assert main(["show", str(trace), "--text", "--oracle"]) == 0
    out = capsys.readouterr().out
    assert "FALSE PRUNE" in out and "false prunes" in out.splitlines()[0]
    assert main(["show", str(trace), "--oracle", "-o", str(tmp_path / "o.html")]) == 0
    data = embedded_data((tmp_path / "o.html").read_text())
    assert data["runs"][0]["hasTruth"] and data["runs"][0]["falsePrunes"] == sum(
        1 for n in data["runs"][0]["nodes"] if n.get("fp"))


@pytest.mark.parametrize("setup, args, needle", [
    (None, ["missing.jsonl"], "trace file not found"),
    ("empty", ["t.jsonl"], "no search tree"),
    ("trace", ["t.jsonl", "--run", "7"], "no run 7; runs are 1"),
    ("trace", ["t.jsonl", "--truth", "nope.json"], "ground-truth file not found"),
    ("trace", ["t.jsonl", "-o", "t.jsonl"], "would overwrite the trace"),
    ("trace", ["t.jsonl", "--text", "--max-nodes", "0"], "--max-nodes must be at least 1"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, monkeypatch, capsys, setup, args, needle):
    if setup == "empty":
        (tmp_path / "t.jsonl").write_text('{"event": "start", "task": "x", "puzzle": "1 2"}\n')
    elif setup == "trace":
        oracle_bfs_trace(tmp_path / "t.jsonl")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["show", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1 and needle in err


def test_missing_trace_from_the_shell_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "solver.tools.cli", "show", "missing.jsonl"], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr == "tot: error: trace file not found: missing.jsonl\n"
