"""Best-first and MCTS keep their whole state in one object (``solver.searches.common.Steppable``):
stepped N times, saved, loaded into a new run and finished, a run writes the same trace and gives
the same result as one run from start to end (and the run is checked by the kit's invariants)."""

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
from solver.searches.best_first import BestFirst
from solver.searches.common import Steppable
from solver.searches.mcts import Mcts
from solver.settings import SearchSettings
from solver.trace import Trace
from tasks.game24 import Game24
from tests.fakes import ScriptedBackend
from tests.test_properties import GAME24_PUZZLES, examples

# name -> (class, its options)
SEARCHES: dict[str, tuple[type[Steppable], dict[str, Any]]] = {
    "best-first": (BestFirst, {}),
    "mcts": (Mcts, {"iterations": 60, "seed": 1}),
    "mcts-rollouts": (Mcts, {"iterations": 40, "rollout_depth": 2, "seed": 5, "exploration": 0.4}),
    "mcts-answers": (Mcts, {"iterations": 80, "answers": 3, "seed": 2}),
}


def _score(prompt: str, continuation: str) -> float:
    """A fake model's log-probability: a fixed hash of the request, so a new client answers alike."""
    digest = hashlib.sha256(f"{prompt}\0{continuation}".encode()).digest()
    return -int.from_bytes(digest[:4], "big") / 2**32 * 8


def _run(puzzle: str, evaluator: str, trace: Trace, model: bool) -> tuple[Run, ScriptedBackend | None]:
    backend = ScriptedBackend(scorer=_score) if model else None
    client = LMClient(backend) if backend is not None else None
    return open_run(Game24(), puzzle, make_generator("enumerate"), make_evaluator(evaluator), client, trace), backend


def _settings(cls: type[Steppable], options: dict[str, Any]) -> SearchSettings:
    """The settings a search is begun with: its own options (of ``options``), the depth and seed."""
    own = options_of(cls)(**{k: v for k, v in options.items() if k not in ("depth", "seed")})
    return SearchSettings("best-first" if cls is BestFirst else "mcts", depth=options.get("depth"),
                          seed=options.get("seed", 0), options=own)


def _begun(cls: type[Steppable], options: dict[str, Any], run: Run) -> Steppable:
    settings = _settings(cls, options)
    search = cls(settings.options)  # type: ignore[call-arg]
    search.begin(run, settings)
    return search


def _events(trace: Trace) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("t", "seconds")} for e in trace.events]


def _summary(res: SearchResult) -> dict[str, Any]:
    return {k: v for k, v in res.summary().items() if k != "seconds"}


async def _stepped(cls: type[Steppable], options: dict[str, Any], puzzle: str, evaluator: str, n: int,
                   model: bool) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """Step ``n`` times (or to the end), checkpoint, drop everything, resume in a new run with a
    new client, finish: (the two traces' events, the result, the model requests of both clients)."""
    first = Trace()
    run, before = _run(puzzle, evaluator, first, model)
    search = _begun(cls, options, run)
    for _ in range(n):
        if await search.step():
            break
    saved = search.checkpoint()
    del search, run
    second = Trace()
    run, backend = _run(puzzle, evaluator, second, model)
    res = await (await cls.resume(saved, run)).to_end()
    asked = sum(len(b.score_requests) for b in (before, backend) if b is not None)
    return _events(first) + _events(second), _summary(res), asked


async def _whole(cls: type[Steppable], options: dict[str, Any], puzzle: str, evaluator: str,
                 model: bool) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    trace = Trace()
    run, backend = _run(puzzle, evaluator, trace, model)
    res = await _begun(cls, options, run).to_end()
    return _events(trace), _summary(res), len(backend.score_requests) if backend is not None else 0


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(puzzle=GAME24_PUZZLES, name=st.sampled_from(sorted(SEARCHES)),
       evaluator=st.sampled_from(["prior", "random", "oracle", "likelihood"]), n=st.integers(0, 45))
def test_stepping_saving_loading_and_finishing_is_one_run(puzzle: str, name: str, evaluator: str, n: int) -> None:
    cls, options = SEARCHES[name]
    model = evaluator == "likelihood"
    whole, whole_result, _ = asyncio.run(_whole(cls, options, puzzle, evaluator, model))
    parts, parts_result, _ = asyncio.run(_stepped(cls, options, puzzle, evaluator, n, model))
    assert parts == whole
    assert parts_result == whole_result


def test_a_resumed_run_asks_the_model_only_what_the_run_had_not_asked() -> None:
    """The model session's memo travels in the checkpoint: a request the run made before the
    checkpoint is answered from it after, as in one run, so the two clients together are asked
    exactly what one run's client is, wherever the run is cut."""
    cls, options = SEARCHES["mcts-rollouts"]
    for puzzle in ("4 9 10 13", "3 3 8 8"):
        _, whole_result, asked_whole = asyncio.run(_whole(cls, options, puzzle, "likelihood", True))
        assert whole_result["cache_hits"] > 0  # a rollout's state scored again later: the memo answers it
        for n in range(12):
            _, result, asked = asyncio.run(_stepped(cls, options, puzzle, "likelihood", n, True))
            assert (asked, result) == (asked_whole, whole_result), (puzzle, n)


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_the_searches_by_name_are_these_objects(name: str) -> None:
    """The registered best-first and mcts are the objects run to the end: the same trace."""
    cls, options = SEARCHES[name]
    trace = Trace()
    run, _ = _run("3 3 8 8", "prior", trace, False)
    settings = _settings(cls, options)
    res = asyncio.run(get_search(settings.method)(run, settings))
    whole, result, _ = asyncio.run(_whole(cls, options, "3 3 8 8", "prior", False))
    assert _events(trace) == whole and _summary(res) == result


def test_a_wrong_checkpoint_is_one_line() -> None:
    run, _ = _run("4 9 10 13", "prior", Trace(), False)
    saved = _begun(BestFirst, {}, run).checkpoint()
    assert json.loads(saved)["steps"] == 0  # JSON, nothing that runs when read

    def resume(cls: type[Steppable], data: bytes, model: bool = False) -> Any:
        client = LMClient(ScriptedBackend(scorer=_score)) if model else None  # the same parts, another client
        fresh = open_run(Game24(), "4 9 10 13", make_generator("enumerate"), make_evaluator("prior"), client, Trace())
        return asyncio.run(cls.resume(data, fresh))

    for cls, data, says in (
            (Mcts, saved, "^a checkpoint of BestFirst, not of Mcts$"),
            (BestFirst, b"\x80\x04not json", "^not a checkpoint of a search"),
            (BestFirst, json.dumps({"format": 0}).encode(), "^not a checkpoint of format 3$"),
            (BestFirst, saved.replace(b'"steps": 0', b'"steps": -1'), "^a malformed checkpoint"),
            (BestFirst, saved.replace(b'"depth": null', b'"width": 3'), "^the checkpoint's options do not fit"),
            (BestFirst, saved.replace(b'"calls": 0', b'"calls": "many"'), "^the checkpoint's usage is malformed")):
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
