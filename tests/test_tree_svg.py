"""`tot show TRACE --svg`: one run's search tree as a static SVG picture (docs/assets/search-tree.svg
is drawn with it). Checked on a run that needs no model: a BFS over Game of 24 with a beam of 2
ranked by the exact oracle, whose answer must sit three steps below the root (every Game-of-24
solution combines four numbers in three steps)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from solver.tools.cli import main

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture()
def drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> ET.Element:
    trace = tmp_path / "run.jsonl"
    assert main(["solve", "game24", "4 9 10 13", "--method", "tot-bfs", "--generator", "enumerate",
                 "--evaluator", "oracle", "--breadth", "2", "--trace", str(trace)]) == 0
    assert main(["show", str(trace), "--svg", "--oracle"]) == 0
    assert f"wrote {tmp_path / 'run.svg'}" in capsys.readouterr().out
    return ET.parse(tmp_path / "run.svg").getroot()


def test_every_node_is_a_dot_and_every_edge_joins_two_dots(drawn: ET.Element) -> None:
    dots = [c for c in drawn.iter(f"{SVG}circle") if c.get("data-node")]
    centres = {(float(c.get("cx", 0)), float(c.get("cy", 0))) for c in dots}
    assert len(dots) > 40 and len(centres) == len(dots)
    for line in drawn.iter(f"{SVG}line"):
        for end in ("1", "2"):
            assert (float(line.get("x" + end, 0)), float(line.get("y" + end, 0))) in centres
    assert len(list(drawn.iter(f"{SVG}line"))) == len(dots) - 1  # a tree: one edge per node but the root
    legend = [t.text or "" for t in drawn.iter(f"{SVG}text") if re.fullmatch(r"[a-z ]+ \d+", t.text or "")]
    fates = {t.rsplit(" ", 1)[0]: int(t.rsplit(" ", 1)[1]) for t in legend}
    assert sum(n for f, n in fates.items() if f != "false prune") == len(dots)
    assert fates["solution"] == 1 and [c.get("data-fate") for c in dots].count("solution") == 1


def test_the_answers_path_is_three_green_steps_and_false_prunes_are_magenta(drawn: ET.Element) -> None:
    green = [ln for ln in drawn.iter(f"{SVG}line") if ln.get("stroke") == "#2e7d32"]
    assert len(green) == 3
    ys = sorted(float(ln.get("y2", 0)) for ln in green)
    assert len(set(ys)) == 3  # one step per level, root to answer
    magenta = [c for c in drawn.iter(f"{SVG}circle") if c.get("data-node") and c.get("fill") == "#d81b60"]
    legend = [t.text for t in drawn.iter(f"{SVG}text")]
    assert f"false prune {len(magenta)}" in legend and magenta
    assert "answer" in (legend[0] or "") and "[verified]" in (legend[0] or "")
    assert all(c.get("data-fate") in ("beam", "pruned") for c in magenta)


def test_a_trace_of_several_runs_needs_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "two.jsonl"
    for puzzle in ("4 9 10 13", "1 1 4 6"):
        assert main(["solve", "game24", puzzle, "--generator", "enumerate", "--evaluator", "oracle",
                     "--method", "tot-bfs", "--trace", str(trace)]) == 0
    assert main(["show", str(trace), "--svg"]) == 2
    assert "choose one with --run N" in capsys.readouterr().err
    assert main(["show", str(trace), "--svg", "--run", "2", "-o", str(tmp_path / "second.svg")]) == 0
    assert "1 1 4 6" in (tmp_path / "second.svg").read_text(encoding="utf-8")
