"""``tot bench writing``: the constrained and the paper's generators side by side (``@GENERATOR``),
whole-passage baselines, and coherence scoring by the run's model or a separate one
(``--score-model``/``--score-base-url``, here the fake OpenAI server)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from solver.tools import bench
from solver.tools.cli import UsageError, build_parser
from solver.tools.plugins import load_plugins
from tests.fake_server import FakeOpenAIServer
from tests.fakes import ScriptedBackend

LINE = "A cat sat. It rained. We hid. The end came."


def respond(prompt, params, i):
    if "Coherence score:" in prompt[-30:]:
        return " 7"
    if prompt.endswith("Plan:"):
        return " A cat, rain, hiding, an end."
    if prompt.rstrip().endswith("Answer:"):
        return " The best choice is 1"
    if prompt.endswith("Passage:\n"):  # the paper's free passage (and IO): it misses the endings
        return "One cat.\n\nRain.\n\nHiding.\n\nThe end."
    return "Then something happened."


def run(tmp_path: Path, *extra: str, backend=None):
    plugins = load_plugins()
    args = build_parser(plugins).parse_args(["bench", "writing", LINE, "--out", str(tmp_path / "out"),
                                             "--no-plots", "--k", "2", "--n-evaluate", "1", *extra])
    backend = backend or ScriptedBackend(respond)
    code = asyncio.run(bench.run_bench(args, plugins, backend=backend))
    text = (tmp_path / "out" / "results.jsonl").read_text()
    rows = {r["method"]: r for r in (json.loads(x) for x in text.splitlines())}
    return code, rows, backend


def test_constrained_and_paper_tot_side_by_side_with_coherence(tmp_path, capsys):
    code, rows, backend = run(tmp_path, "--methods", "io,cot,tot-bfs,tot-bfs:no-gate@sample", "--score-samples", "2")
    assert code == 0
    assert rows["tot-bfs"]["verified"] and rows["tot-bfs"]["soft_scored"] == "passed"
    assert not rows["tot-bfs:no-gate@sample"]["verified"]
    assert rows["tot-bfs:no-gate@sample"]["soft_scored"] == "refused"  # scored all the same
    assert rows["tot-bfs:no-gate@sample"]["unverified_answer"].startswith("One cat.")
    for r in rows.values():
        assert r["soft_score"] == 7.0 and r["soft_scores"] == [7, 7] and r["score_model"] == "scripted"
    # whole passages for the baselines, not the core's 48 tokens
    io_params = [g for p, g in backend.requests if p.endswith("Passage:\n") and "Plan:" not in p[-200:]]
    assert io_params and io_params[0].max_tokens >= 200
    out = capsys.readouterr().out
    assert "coherence 1-10 mean [95% CI]" in out and "tot-bfs:no-gate@sample" in out
    assert "1/1 100%" in out


def test_separate_scoring_model_on_a_server(tmp_path):
    with FakeOpenAIServer(["ok"], text="9") as srv:
        code, rows, backend = run(tmp_path, "--methods", "tot-bfs", "--score-samples", "3",
                                  "--score-model", "judge-model", "--score-base-url", srv.url)
        served = srv.requests
    assert code == 0
    row = rows["tot-bfs"]
    assert row["score_model"] == "judge-model" and row["soft_scores"] == [9, 9, 9]
    assert served and all("Coherence score:" in (r.body or {}).get("prompt", "") for r in served)
    assert not any("Coherence score:" in p for p, _ in backend.requests)  # the writer did not judge


@pytest.mark.parametrize("extra, message", [
    (["--methods", "io@sample"], "only a search takes @GENERATOR"),
    (["--methods", "tot-bfs@nope"], "unknown generator 'nope'"),
    (["--score-model", "x"], "need --score-samples"),
    (["--score-samples", "-1"], "0 or more"),
])
def test_bad_bench_options(tmp_path, extra, message):
    with pytest.raises(UsageError, match=message):
        run(tmp_path, *extra)


def test_mean_interval_known_values():
    from solver.tools.stats import mean_interval

    m, lo, hi = mean_interval([2, 4, 4, 4, 5, 5, 7, 9])
    # mean 5, sample variance 32/7, half-width 1.959964 * sqrt(32/7) / sqrt(8) = 1.48157...
    assert m == 5 and abs(hi - 6.48157) < 1e-4 and abs(lo - 3.51843) < 1e-4
    assert mean_interval([]) is None and mean_interval([3.0]) == (3.0, 3.0, 3.0)
