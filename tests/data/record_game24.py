"""Re-record the embedded model's real outputs used by tests/test_replay.py.

    python tests/data/record_game24.py

Writes game24_gemma.sqlite (the record/replay store) and game24_gemma.json (what each run found).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from solver.run import ModelSettings, SearchSettings, Settings, make_client, solve
from solver.searches.tot import BfsOptions
from tasks.game24 import Game24

HERE = Path(__file__).parent
KEYS = ("answer", "verified", "proposed", "rejected", "expanded", "calls", "tokens")
RUNS = [
    ("4 9 10 13", "propose", "value"),
    ("1 1 4 6", "propose", "value"),
    ("1 1 4 6", "enumerate-rank", "likelihood"),
    ("4 9 10 13", "sample", "value"),
]


async def main() -> None:
    db = HERE / "game24_gemma.sqlite"
    db.unlink(missing_ok=True)
    out = []
    for puzzle, gen, ev in RUNS:
        s = Settings(search=SearchSettings(generator=gen, evaluator=ev, options=BfsOptions(breadth=2)),
                     model=ModelSettings(cache=str(db), cache_mode="record"))
        client = make_client(s)
        res = await solve(Game24(), puzzle, s, client)
        summ = res.summary()
        out.append({"puzzle": puzzle, "generator": gen, "evaluator": ev, "breadth": 2,
                    **{k: summ[k] for k in KEYS}})
        print(out[-1])
        assert client is not None
        await client.close()
    (HERE / "game24_gemma.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
