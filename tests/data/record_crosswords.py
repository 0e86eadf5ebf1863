"""Re-record the embedded model's real outputs used by tests/test_crossword_replay.py.

    python tests/data/record_crosswords.py

Runs the CLI command below with a fresh record store (several minutes on 2 cores), then writes
crosswords_gemma.json with what the run found, as replayed from that store.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from solver.tools.cli import main

HERE = Path(__file__).parent
DB = HERE / "crosswords_gemma.sqlite"
ARGS = ["solve", "crosswords", "--index", "1", "--generator", "propose", "--evaluator", "clues",
        "--budget-steps", "3"]
KEYS = ("proposed", "rejected", "expanded", "calls", "board", "stopped_by", "letters", "words")


def run(mode: str) -> dict[str, object]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([*ARGS, "--cache", str(DB), "--cache-mode", mode, "--json"]) == 0
    return json.loads(buf.getvalue())


if __name__ == "__main__":
    DB.unlink(missing_ok=True)
    recorded = run("record")
    replayed = run("replay")
    assert all(recorded[k] == replayed[k] for k in KEYS), "replay differs from the recorded run"
    out = {"args": ARGS, **{k: recorded[k] for k in KEYS}}
    (HERE / "crosswords_gemma.json").write_text(json.dumps(out, indent=1) + "\n")
    print(out)
