"""Recorded real Creative Writing outputs of the embedded model, replayed without loading it.

The recordings come from ``python tests/data/record_writing.py`` (benchmarks/writing.py on input
0 with k=2, 2 votes, 2 refine rounds, 2 coherence samples). Replaying them through the same code
must reproduce what each method found, call for call, and every returned passage must pass.
"""

import argparse
import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest

from solver.lm.cache import Cache
from solver.lm.client import LMClient
from tests import references as ref
from tests.fakes import ReplayOnly
from verifiers.writing import split_sentences

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.writing import run_one  # noqa: E402

DATA = Path(__file__).parent / "data"
ROWS = [json.loads(line) for line in (DATA / "writing_gemma.jsonl").read_text().splitlines() if line.strip()]


NoModel = ReplayOnly


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['index']}-{r['method']}")
def test_replay_reproduces_recorded_run(row, tmp_path):
    db = tmp_path / "store.sqlite"
    shutil.copy(DATA / "writing_gemma.sqlite", db)
    client = LMClient(NoModel(), Cache(db), "replay")
    args = argparse.Namespace(**{k: row["config"][k] for k in ("k", "n_evaluate", "rounds", "score_samples", "seed")})
    got = asyncio.run(run_one(row["method"], row["input"], client, args))
    # The same recorded answers take the same path (a determinism check against the recording) ...
    for key in ("raw", "answer", "calls", "first_raw", "coherence_answer", "coherence_first_raw"):
        assert got[key] == row[key], key
    # The gate's explanation of a failure is worded by the current verifier; which paragraph
    # failed, and why in outline, is what the recording pins.
    assert (got["reason"] or "").split(":")[0] == (row["reason"] or "").split(":")[0]
    # No call reached the model: ReplayOnly fails any that does (the scoring calls' too).
    assert got["backend_calls"] == 0
    # ... and the verdicts are derived by the separately written ending check, not recorded.
    sentences = split_sentences(row["input"])
    assert got["verified"] == (got["answer"] is not None and ref.passage_ok(sentences, got["answer"]))
    if row["method"] in ("io", "cot"):  # one raw passage: it passed or it did not
        assert got["raw"] == 1 and got["raw_ok"] == int(ref.passage_ok(sentences, got["first_raw"]))
    else:
        assert 0 <= got["raw_ok"] <= got["raw"]
        assert got["raw_ok"] >= (got["answer"] is not None)


def test_recordings_cover_every_method():
    assert {r["method"] for r in ROWS} == {"io", "cot", "refine", "tot-plan", "tot-paragraphs"}
