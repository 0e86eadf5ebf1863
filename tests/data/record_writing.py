"""Re-record the embedded model's real Creative Writing outputs used by tests/test_writing_replay.py.

    python tests/data/record_writing.py

Runs benchmarks/writing.py on input 0 with small settings (k=2, 2 votes, 2 refine rounds,
2 coherence samples), recording every model output in writing_gemma.sqlite; what each method
found goes to writing_gemma.jsonl. Takes several minutes on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))

from benchmarks.writing import run, table  # noqa: E402

ARGS = argparse.Namespace(index="0", data=None, methods="tot-plan,tot-paragraphs,refine,io,cot", k=2,
                          n_evaluate=2, rounds=2, score_samples=2, seed=0, model=None, base_url=None,
                          cache=str(HERE / "writing_gemma.sqlite"), cache_mode="record",
                          out=str(HERE / "writing_gemma.jsonl"))

if __name__ == "__main__":
    print(table(asyncio.run(run(ARGS))))
