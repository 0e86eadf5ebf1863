"""Recorded real outputs of the embedded model, replayed without loading it."""

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from solver.lm.base import GenParams, LMError
from solver.lm.cache import Cache, CacheMiss
from solver.lm.client import LMClient
from solver.run import ModelSettings, SearchSettings, Settings, solve
from solver.searches.tot import BfsOptions
from solver.trace import Trace
from tasks.game24 import Game24
from tests import references as ref
from tests.fakes import ReplayOnly, ScriptedBackend

DATA = Path(__file__).parent / "data"
RUNS = json.loads((DATA / "game24_gemma.json").read_text())


NoModel = ReplayOnly


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r['puzzle']}-{r['generator']}-{r['evaluator']}")
def test_replay_reproduces_recorded_run(run, tmp_path):
    db = tmp_path / "store.sqlite"
    shutil.copy(DATA / "game24_gemma.sqlite", db)
    # Recorded before grammars existed: unconstrained requests, so replayed with --grammar off.
    s = Settings(search=SearchSettings(generator=run["generator"], evaluator=run["evaluator"],
                                       options=BfsOptions(breadth=run["breadth"])),
                 model=ModelSettings(cache=str(db), cache_mode="replay", grammar=False))
    client = LMClient(NoModel(), Cache(db), "replay")
    trace = Trace()
    res = asyncio.run(solve(Game24(), run["puzzle"], s, client, trace))
    got = res.summary()
    # The same recorded answers take the same path: a determinism check against the recording.
    for key in ("answer", "proposed", "expanded", "calls", "tokens"):
        assert got[key] == run[key], key
    assert got["backend_calls"] == 0
    # Verdicts are not taken from the recording but derived independently: every thought the model
    # proposed is re-judged by the sympy reference from its parent's numbers, and the answer too.
    states = {e["node"]: e["state"] for e in trace.of("root") + trace.of("verdict") if "node" in e and "state" in e}
    thoughts = {e["node"]: e["thought"] for e in trace.of("proposal") if "node" in e}
    rejected = 0
    for e in trace.of("proposal"):
        have = [ref.read_number(x) for x in states[e["parent"]].split()]
        ok = any(_step_true(have, r) for r in ref.read_step(e["thought"]))
        rejected += not ok
        assert ok == ("node" in e), e["thought"]
        if "node" in e:
            assert thoughts[e["node"]] == e["thought"]
    assert got["rejected"] == rejected
    tree = ref.read_tree(got["answer"]) if got["answer"] is not None else None
    assert got["verified"] == (tree is not None and ref.answer_ok([int(x) for x in run["puzzle"].split()], tree))


def _step_true(have: list, reading: ref.Reading) -> bool:
    a, op, b, c, left = reading
    rest = list(have)
    for x in (a, b):
        if x not in rest:
            return False
        rest.remove(x)
    if op == "/" and b == 0:
        return False
    true_c = ref.SYM_OPS[op](a, b)
    return c == true_c and left is not None and sorted(left) == sorted(rest + [true_c])


def test_replay_miss_is_a_clear_error(tmp_path):
    client = LMClient(NoModel(), Cache(tmp_path / "empty.sqlite"), "replay")
    with pytest.raises(CacheMiss, match="replay-only cache has no recording"):
        asyncio.run(client.session().complete("never seen", GenParams()))


def test_record_then_replay_with_fake(tmp_path):
    db = tmp_path / "s.sqlite"
    backend = ScriptedBackend(lambda p, g, i: f"{p}#{i}")
    rec = LMClient(backend, Cache(db), "record")
    texts = asyncio.run(rec.session().complete("hello", GenParams(n=3)))
    assert texts == ["hello#0", "hello#1", "hello#2"]
    asyncio.run(rec.close())

    class Dead(ScriptedBackend):
        async def complete(self, prompt, params):
            raise LMError("must not be called")

    dead = Dead()
    dead.name, dead.model = backend.name, backend.model
    rep = LMClient(dead, Cache(db), "replay")
    assert asyncio.run(rep.session().complete("hello", GenParams(n=3))) == texts
    with pytest.raises(CacheMiss):  # a different temperature is a different request
        asyncio.run(rep.session().complete("hello", GenParams(n=3, temperature=0.1)))
