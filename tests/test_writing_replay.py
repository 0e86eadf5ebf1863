"""Recorded real Creative Writing outputs of the embedded model, replayed without loading it.

The recordings come from ``python tests/data/record_writing.py`` (input 0 with k=2, 2 votes,
2 refine rounds, 2 coherence samples; first made with the former benchmarks/writing.py). Replaying
them through the code ``tot bench writing`` runs (the core's baseline runner with this task's
prompts and its own refine; the search with the sample generator and vote evaluator) must
reproduce what each method found, call for call, and every returned passage must pass.
"""

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from solver.baseline_capabilities import AnswerParser, BaselineTokens
from solver.baselines import BaselineConfig, run_baseline
from solver.lm.cache import Cache
from solver.lm.client import LMClient
from solver.run import ModelSettings, SearchSettings, Settings, solve
from solver.searches.tot import BfsOptions
from solver.task_capabilities import find
from solver.trace import Trace
from tasks.writing.coherence import coherence
from tasks.writing.task import Writing
from tests import references as ref
from tests.fakes import ReplayOnly
from verifiers.writing import split_sentences

DATA = Path(__file__).parent / "data"
ROWS = [json.loads(line) for line in (DATA / "writing_gemma.jsonl").read_text().splitlines() if line.strip()]


NoModel = ReplayOnly


def _proposals(trace: Trace, leaf_depth: int | None) -> tuple[int, int, str | None]:
    """(thoughts proposed at ``leaf_depth`` (None: at every depth), how many the gate let in,
    the first one's text), read from the trace."""
    depth: dict[int, int] = {}
    total = passed = 0
    first = None
    for ev in trace.events:
        if ev["event"] == "root":
            depth[ev["node"]] = 0
        elif ev["event"] == "proposal":
            d = ev["depth"] if "node" in ev else depth.get(ev["parent"], -2) + 1
            if "node" in ev:
                depth[ev["node"]] = d
            if leaf_depth is None or d == leaf_depth:
                total += 1
                passed += "node" in ev
                first = first if first is not None else ev["thought"]
    return total, passed, first


async def _replay(row: dict, client: LMClient) -> dict:
    cfg = row["config"]
    line = row["input"]
    if row["method"] in ("io", "cot", "refine"):
        task = Writing()
        tokens = find(task, BaselineTokens).baseline_tokens
        bc = BaselineConfig(rounds=cfg["rounds"], seed=cfg["seed"], io_tokens=tokens["io"], cot_tokens=tokens["cot"])
        res = await run_baseline(task, line, row["method"], client, bc)
        got = {"raw": res.raw_answers, "raw_ok": res.raw_answers - res.invalid_answers, "answer": res.answer,
               "calls": res.usage.calls, "backend_calls": res.usage.backend_calls,
               "first_raw": find(task, AnswerParser).parse_answer(line, res.texts[0]) if res.texts else None}
    else:
        plan = row["method"] == "tot-plan"
        s = Settings(search=SearchSettings(generator="sample", evaluator="vote", k=cfg["k"],
                                           n_evaluate=cfg["n_evaluate"], options=BfsOptions(breadth=1)),
                     model=ModelSettings(seed=cfg["seed"]))
        trace = Trace()
        result = await solve(Writing("plan" if plan else "paragraphs"), line, s, client, trace)
        total, ok, first = _proposals(trace, 2 if plan else None)
        got = {"raw": total, "raw_ok": ok, "answer": result.answer, "calls": result.usage.calls,
               "backend_calls": result.usage.backend_calls, "first_raw": first if plan else None}
    scoring = client.session()  # scoring is not the method's cost
    for key in ("answer", "first_raw"):  # what tot bench --score-samples asks of the answer
        text = got[key]
        got[f"coherence_{key}"] = (await coherence(scoring, text, cfg["score_samples"], seed=cfg["seed"])).mean \
            if text else None
    return got


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['index']}-{r['method']}")
def test_replay_reproduces_recorded_run(row, tmp_path):
    db = tmp_path / "store.sqlite"
    shutil.copy(DATA / "writing_gemma.sqlite", db)
    client = LMClient(NoModel(), Cache(db), "replay")
    got = asyncio.run(_replay(row, client))
    # The same recorded answers take the same path (a determinism check against the recording) ...
    for key in ("raw", "raw_ok", "answer", "calls", "first_raw", "coherence_answer", "coherence_first_raw"):
        assert got[key] == row[key], key
    # No call reached the model: ReplayOnly fails any that does (the scoring calls' too).
    assert got["backend_calls"] == 0
    # ... and the verdicts are derived by the separately written ending check, not recorded.
    sentences = split_sentences(row["input"])
    assert row["verified"] == (got["answer"] is not None)
    if got["answer"] is not None:
        assert ref.passage_ok(sentences, got["answer"])
    if row["method"] in ("io", "cot"):  # one raw passage: it passed or it did not
        assert got["raw"] == 1 and got["raw_ok"] == int(ref.passage_ok(sentences, got["first_raw"] or ""))
    else:
        assert 0 <= got["raw_ok"] <= got["raw"]
        assert got["raw_ok"] >= (got["answer"] is not None)


def test_recordings_cover_every_method():
    assert {r["method"] for r in ROWS} == {"io", "cot", "refine", "tot-plan", "tot-paragraphs"}
