"""A recorded run of the embedded model on crossword 1 (propose + per-clue judge), replayed."""

import asyncio
import json
import shutil
from pathlib import Path

from solver.budget import Budget
from solver.lm.cache import Cache
from solver.lm.client import LMClient
from solver.run import ModelSettings, SearchSettings, Settings, solve
from solver.trace import Trace
from tasks.crosswords import Crosswords
from tasks.crosswords.data import load_puzzles
from tasks.datafiles import shared_data
from tests import references as ref
from tests.fakes import ReplayOnly

DATA = Path(__file__).parent / "data"
RUN = json.loads((DATA / "crosswords_gemma.json").read_text())
PUZZLES = shared_data("crosswords/mini0505.json")


NoModel = ReplayOnly


def test_replay_reproduces_recorded_crossword_run(tmp_path):
    db = tmp_path / "store.sqlite"
    shutil.copy(DATA / "crosswords_gemma.sqlite", db)
    # Recorded before grammars existed: unconstrained requests, so replayed with --grammar off.
    s = Settings(search=SearchSettings(method="tot-dfs", generator="propose", evaluator="clues"),
                 model=ModelSettings(cache=str(db), cache_mode="replay", grammar=False),
                 budget=Budget(steps=3))
    client = LMClient(NoModel(), Cache(db), "replay")
    trace = Trace()
    res = asyncio.run(solve(Crosswords(), load_puzzles(PUZZLES)[0].text(), s, client, trace))
    got = res.summary()
    for key in ("proposed", "expanded", "calls"):  # the same recorded answers take the same path
        assert got[key] == RUN[key], key
    assert got["backend_calls"] == 0
    # Verdicts derived independently: each proposal is judged by the plain grid rule from its
    # parent's board (tests/references.py), and each accepted one leads to the board it says.
    boards = {e["node"]: e["state"] for e in trace.of("root") + trace.of("verdict") if "node" in e and "state" in e}
    rejected = 0
    for e in trace.of("proposal"):
        slot, _, word = e["thought"].partition(". ")
        parent = boards[e["parent"]]
        ok = ref.crossword_place_ok(parent, slot, word) and any(parent[c] == "_" for c in ref.SLOTS_5X5[slot])
        rejected += not ok
        assert ok == ("node" in e), e["thought"]
        if ok:
            cells = ref.SLOTS_5X5[slot]
            assert boards[e["node"]] == "".join(word[cells.index(k)] if k in cells else ch
                                                for k, ch in enumerate(parent))
    assert got["rejected"] == rejected
    best = res.solution or res.best
    assert best is not None and best.state.board in boards.values()
    # Every proposal passed the gate, and every judged state was scored by per-clue labels.
    assert all(e["detail"]["labels"] for e in trace.of("score"))
