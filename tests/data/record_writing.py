"""Re-record the embedded model's real Creative Writing outputs used by tests/test_writing_replay.py.

    TOT_THREADS=1 python tests/data/record_writing.py

Runs, on input 0 with small settings (k=2, 2 votes, 2 refine rounds, 2 coherence samples), the
code `tot bench writing` runs for each method (the test's own replay path, here in record mode on
the embedded model), recording every model output in writing_gemma.sqlite; what each method found
goes to writing_gemma.jsonl. Takes several minutes on 2 CPU cores.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))

from solver.budget import Usage  # noqa: E402
from solver.lm.cache import Cache  # noqa: E402
from solver.lm.client import LMClient  # noqa: E402
from solver.lm.local import LocalBackend  # noqa: E402
from tasks.writing.data import default_data, load_lines  # noqa: E402
from tests.test_writing_replay import _replay  # noqa: E402

CONFIG = {"k": 2, "n_evaluate": 2, "rounds": 2, "score_samples": 2, "seed": 0}
METHODS = ("tot-plan", "tot-paragraphs", "refine", "io", "cot")


async def main() -> None:
    [(index, line)] = load_lines(default_data(), "0")
    client = LMClient(LocalBackend(), Usage(), Cache(HERE / "writing_gemma.sqlite"), "record")
    try:
        with (HERE / "writing_gemma.jsonl").open("w", encoding="utf-8") as fh:
            for method in METHODS:
                row = {"index": index, "method": method, "config": CONFIG, "input": line}
                row.update(await _replay(row, client))
                row["verified"] = row["answer"] is not None
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                print(method, "verified" if row["verified"] else "no answer", f"calls={row['calls']}")
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main())
