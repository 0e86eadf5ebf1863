"""Every built-in search asks and is told (``solver.searches.common.AskTell``): cycled N times,
saved, loaded into a new run and finished, a run writes the same trace and gives the same result
as one run from start to end, for all seven searches (and the run is cut again after loading)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.evaluators import make_evaluator
from solver.expansion import Run, SearchResult, open_run
from solver.generators import make_generator
from solver.lm.client import LMClient
from solver.search_options import options_of
from solver.searches import get_search
from solver.searches.beam import Beam
from solver.searches.best_first import BestFirst
from solver.searches.checkpoint import load, save
from solver.searches.complete import Complete
from solver.searches.controller import Long
from solver.searches.mcts import Mcts
from solver.searches.tot import Bfs, Dfs
from solver.settings import SearchSettings
from solver.trace import Trace
from tasks.game24 import Game24
from tests.fakes import ScriptedBackend
from tests.test_properties import GAME24_PUZZLES, examples

# name -> (class, the registered name, its options, with depth and seed)
SEARCHES: dict[str, tuple[type, str, dict[str, Any]]] = {
    "tot-complete": (Complete, "tot-complete", {}),
    "tot-bfs": (Bfs, "tot-bfs", {"breadth": 2}),
    "tot-dfs": (Dfs, "tot-dfs", {"dfs_children": 2, "prune_below": -50.0}),
    "long": (Long, "long", {"max_children": 2, "max_rounds": 25}),
    "best-first": (BestFirst, "best-first", {}),
    "mcts": (Mcts, "mcts", {"iterations": 60, "seed": 1}),
    "mcts-rollouts": (Mcts, "mcts", {"iterations": 40, "rollout_depth": 2, "seed": 5, "exploration": 0.4}),
    "mcts-answers": (Mcts, "mcts", {"iterations": 80, "answers": 3, "seed": 2}),
    "beam": (Beam, "beam", {"breadth": 2, "candidates": 3, "beam_runs": 3, "seed": 4}),
}


def _score(prompt: str, continuation: str) -> float:
    """A fake model's log-probability: a fixed hash of the request, so a new client answers alike."""
    digest = hashlib.sha256(f"{prompt}\0{continuation}".encode()).digest()
    return -int.from_bytes(digest[:4], "big") / 2**32 * 8


def _run(puzzle: str, evaluator: str, trace: Trace, model: bool) -> tuple[Run, ScriptedBackend | None]:
    backend = ScriptedBackend(scorer=_score) if model else None
    client = LMClient(backend) if backend is not None else None
    return open_run(Game24(), puzzle, make_generator("enumerate"), make_evaluator(evaluator), client, trace), backend


def _settings(name: str) -> SearchSettings:
    """The settings a search is begun with: its own options, the depth and seed."""
    cls, method, options = SEARCHES[name]
    own = options_of(cls)(**{k: v for k, v in options.items() if k not in ("depth", "seed")})
    return SearchSettings(method, depth=options.get("depth"), seed=options.get("seed", 0), options=own)


def _begun(name: str, run: Run) -> Any:
    settings = _settings(name)
    search = SEARCHES[name][0](settings.options)
    assert run.begin(search, settings) is None
    return search


def _events(trace: Trace) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("t", "seconds")} for e in trace.events]


def _summary(res: SearchResult) -> dict[str, Any]:
    return {k: v for k, v in res.summary().items() if k != "seconds"}


async def _stepped(name: str, puzzle: str, evaluator: str, cuts: list[int],
                   model: bool) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """Cycle to each cut in turn (or to the end), save, drop everything, load into a new run with
    a new client; at the end finish: (every part's events, the result, the model requests of all
    clients)."""
    cls = SEARCHES[name][0]
    traces, backends = [Trace()], []
    run, backend = _run(puzzle, evaluator, traces[0], model)
    backends.append(backend)
    search = _begun(name, run)
    for n in cuts:
        for _ in range(n):
            res = await run.cycle(search)
            if res is not None:
                break
        else:
            saved = save(run, search)
            assert json.loads(saved)["format"] == 4
            traces.append(Trace())
            run, backend = _run(puzzle, evaluator, traces[-1], model)
            backends.append(backend)
            search = load(saved, run, cls)
            continue
        break
    else:
        res = await run.drive(search)
    asked = sum(len(b.score_requests) for b in backends if b is not None)
    return [e for t in traces for e in _events(t)], _summary(res), asked


async def _whole(name: str, puzzle: str, evaluator: str,
                 model: bool) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    trace = Trace()
    run, backend = _run(puzzle, evaluator, trace, model)
    res = await run.drive(_begun(name, run))
    return _events(trace), _summary(res), len(backend.score_requests) if backend is not None else 0


@settings(max_examples=examples(90), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(puzzle=GAME24_PUZZLES, name=st.sampled_from(sorted(SEARCHES)),
       evaluator=st.sampled_from(["prior", "random", "oracle", "likelihood"]),
       cuts=st.lists(st.integers(0, 30), min_size=1, max_size=3))
def test_stepping_saving_loading_and_finishing_is_one_run(puzzle: str, name: str, evaluator: str,
                                                          cuts: list[int]) -> None:
    model = evaluator == "likelihood"
    whole, whole_result, _ = asyncio.run(_whole(name, puzzle, evaluator, model))
    parts, parts_result, _ = asyncio.run(_stepped(name, puzzle, evaluator, cuts, model))
    assert parts == whole
    assert parts_result == whole_result


def test_a_resumed_run_asks_the_model_only_what_the_run_had_not_asked() -> None:
    """The model session's memo travels in the checkpoint: a request the run made before the
    checkpoint is answered from it after, as in one run, so the clients together are asked
    exactly what one run's client is, wherever the run is cut."""
    for puzzle in ("4 9 10 13", "3 3 8 8"):
        _, whole_result, asked_whole = asyncio.run(_whole("mcts-rollouts", puzzle, "likelihood", True))
        assert whole_result["cache_hits"] > 0  # a rollout's state scored again later: the memo answers it
        for n in range(12):
            _, result, asked = asyncio.run(_stepped("mcts-rollouts", puzzle, "likelihood", [n], True))
            assert (asked, result) == (asked_whole, whole_result), (puzzle, n)


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_the_searches_by_name_are_these_objects(name: str) -> None:
    """The registered searches are the objects cycled to the end: the same trace."""
    trace = Trace()
    run, _ = _run("3 3 8 8", "prior", trace, False)
    settings = _settings(name)
    res = asyncio.run(get_search(settings.method)(run, settings))
    whole, result, _ = asyncio.run(_whole(name, "3 3 8 8", "prior", False))
    assert _events(trace) == whole and _summary(res) == result


def test_a_wrong_checkpoint_is_one_line() -> None:
    run, _ = _run("4 9 10 13", "prior", Trace(), False)
    saved = save(run, _begun("best-first", run))
    body = json.loads(saved)

    def resign(change: Any) -> bytes:
        """The checkpoint changed, with a new digest (as a forger would write it)."""
        from solver.searches.checkpoint import _digest
        tree = json.loads(saved)
        del tree["digest"]
        change(tree)
        return json.dumps({**tree, "digest": _digest(tree)}).encode()

    def resume(cls: type, data: bytes, model: bool = False) -> Any:
        client = LMClient(ScriptedBackend(scorer=_score)) if model else None  # the same parts, another client
        fresh = open_run(Game24(), "4 9 10 13", make_generator("enumerate"), make_evaluator("prior"), client, Trace())
        return load(data, fresh, cls)

    assert body["state"]["max_depth"] == 3  # JSON, nothing that runs when read
    for cls, data, says in (
            (Mcts, saved, "^a checkpoint of 'BestFirst', not of Mcts$"),
            (BestFirst, b"\x80\x04not json", "^not a checkpoint of a search"),
            (BestFirst, json.dumps({"format": 0}).encode(), "^not a checkpoint of format 4$"),
            (BestFirst, saved.replace(b'"max_depth": 3', b'"max_depth": 5'), "^the checkpoint was changed since"),
            (BestFirst, resign(lambda t: t["state"].__setitem__("max_depth", "3")),
             "^a malformed checkpoint \\(max_depth\\)"),
            (BestFirst, resign(lambda t: t["options"].__setitem__("width", 3)), "^the checkpoint's options do not fit"),
            (BestFirst, resign(lambda t: t["books"].__setitem__("made", -1)), "^a malformed checkpoint"),
            (BestFirst, resign(lambda t: t["nodes"][0].__setitem__(2, "4 + 9 = 13")),
             "^a malformed checkpoint \\(node 0"),
            (BestFirst, resign(lambda t: t["nodes"].append([9, 0, "4 * 4 = 16", None, False, None, None])),
             "^a malformed checkpoint \\(node 1: its thought does not pass the checker"),
            (BestFirst, resign(lambda t: t["books"]["usage"][0].__setitem__(1, "many")), "^a malformed checkpoint")):
        with pytest.raises(ValueError, match=says):
            resume(cls, data)
    with pytest.raises(ValueError, match="saved with no model client; resume it the same way"):
        resume(BestFirst, saved, model=True)


@settings(max_examples=examples(200), deadline=None)
@given(seen=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6)), max_size=30),
       asked=st.tuples(st.integers(0, 5), st.integers(0, 6)), any_depth=st.booleans())
def test_the_one_table_of_seen_states_knows_a_state_seen_no_deeper(seen: list[tuple[int, int]],
                                                                   asked: tuple[int, int], any_depth: bool) -> None:
    """SeenStates (every search's memory of states) against a list of what was recorded: a state
    is known where it was recorded at the asked depth or shallower (at any depth with any_depth)."""
    from solver.node import Node, SeenStates

    table: SeenStates[int] = SeenStates(any_depth=any_depth)
    for state, depth in seen:
        table.record(Node(0, state, None, depth))
    state, depth = asked
    depths = [d for s, d in seen if s == state]
    assert table.known(Node(1, state, None, depth)) == bool(depths and (any_depth or min(depths) <= depth))
    fresh = table.fresh(Node(2, state, None, depth))
    assert fresh == (not (depths and (any_depth or min(depths) <= depth)))
    assert table.known(Node(3, state, None, depth))  # recorded by fresh, or known before
