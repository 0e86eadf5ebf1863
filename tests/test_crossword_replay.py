"""A recorded run of the embedded model on crossword 1 (propose + per-clue judge), replayed."""

import asyncio
import json
import shutil
from pathlib import Path

from solver.budget import Budget, Usage
from solver.lm.cache import Cache
from solver.lm.client import LMClient
from solver.run import Settings, solve
from solver.trace import Trace
from tasks.crosswords import Crosswords
from tasks.crosswords.data import load_puzzles
from tests.fakes import ReplayOnly

DATA = Path(__file__).parent / "data"
RUN = json.loads((DATA / "crosswords_gemma.json").read_text())
PUZZLES = Path(__file__).resolve().parents[1] / "tasks" / "data" / "tot" / "crosswords" / "mini0505.json"


NoModel = ReplayOnly


def test_replay_reproduces_recorded_crossword_run(tmp_path):
    db = tmp_path / "store.sqlite"
    shutil.copy(DATA / "crosswords_gemma.sqlite", db)
    s = Settings(method="tot-dfs", generator="propose", evaluator="clues", budget=Budget(steps=3),
                 cache=str(db), cache_mode="replay")
    client = LMClient(NoModel(), Usage(), Cache(db), "replay")
    trace = Trace()
    res = asyncio.run(solve(Crosswords(), load_puzzles(PUZZLES)[0].text(), s, client, trace))
    got = res.summary()
    for key in ("proposed", "rejected", "expanded", "calls"):
        assert got[key] == RUN[key], key
    assert got["backend_calls"] == 0
    best = res.solution or res.best
    assert best is not None and best.state.board == RUN["board"]
    # Every proposal passed the gate, and every judged state was scored by per-clue labels.
    assert all(e["detail"]["labels"] for e in trace.of("score"))
