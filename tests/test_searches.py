"""Searches, generators and evaluators by name: a user's own registered search runs through
``solve`` and ``tot solve --method`` and gets the gate, the trace and the answer check for free."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

import pytest

from solver.budget import BudgetExhausted
from solver.capabilities import LegalMoves, Needs, require
from solver.evaluators import EVALUATORS
from solver.expansion import Expansion, SearchResult
from solver.generators import GENERATORS, register_generator
from solver.lm.session import Session
from solver.run import ModelSettings, SearchSettings, Settings, solve
from solver.searches import SEARCHES, get_search, register_search, search_names
from solver.task import Task, Thought
from solver.tools.cli import main
from solver.trace import Trace
from tasks.game24 import Game24
from verifiers.arithmetic import verify_answer
from verifiers.verdict import Invalid

BAD = "1 + 1 = 3 (left: 3)"  # a step no Game of 24 state allows


async def random_first(run: Expansion, options: Any) -> SearchResult:
    """Depth-first in a seeded random order of the children: only the order is this search's."""
    rng = random.Random(3)
    run.start("random-first", depth=run.task.max_depth)
    stack = [run.root()]
    try:
        while stack:
            node = stack.pop()
            run.reach(node)
            if node.depth >= run.task.max_depth:
                continue
            children = await run.expand(node)
            hit = run.first_answer(children)
            if hit is not None:
                return run.result(hit[0], hit[1], None)
            open_nodes = [c for c in children if not c.solved]
            rng.shuffle(open_nodes)
            stack.extend(open_nodes)
    except BudgetExhausted as exc:
        return run.result(None, None, exc.which)
    return run.result(None, None, None)


@dataclass(slots=True)
class Noisy:
    """Every legal step, each preceded by one the rules refuse."""

    name: str = "noisy"
    needs: ClassVar[Needs] = Needs((LegalMoves,))
    exhaustive: ClassVar[bool] = False
    log_likelihoods: ClassVar[bool] = False

    async def __call__(self, task: Task[Any], state: Any, model: Session | None) -> list[Thought]:
        moves = require(task, LegalMoves, "generator `noisy`")
        out = []
        for th in moves.legal_thoughts(state):
            out += [Thought(BAD), th]
        return out


@pytest.fixture()
def registered() -> Iterator[None]:
    searches, generators = dict(SEARCHES), dict(GENERATORS)
    register_search("random-first", random_first)
    register_generator("noisy", lambda **_: Noisy())
    try:
        yield
    finally:
        SEARCHES.clear()
        SEARCHES.update(searches)
        GENERATORS.clear()
        GENERATORS.update(generators)


def _gated(events: list[dict[str, Any]], res: SearchResult) -> None:
    """The refused thought was offered, refused every time, and never became a node."""
    refused = [e for e in events if e["event"] == "verdict" and e["verdict"] == "invalid"]
    assert refused and all(e["thought"] == BAD for e in refused)
    assert res.rejected == len(refused)
    assert not any(e["event"] == "proposal" and "node" in e and e["thought"] == BAD for e in events)
    assert res.answer is not None and res.verified
    assert not isinstance(verify_answer([4, 9, 10, 13], res.answer), Invalid)


def test_a_registered_search_runs_through_solve_behind_the_gate(registered: None) -> None:
    trace = Trace()
    s = Settings(search=SearchSettings(method="random-first", generator="noisy", evaluator="prior"),
                 model=ModelSettings(seed=3))
    res = asyncio.run(solve(Game24(), "4 9 10 13", s, None, trace))
    assert [e["method"] for e in trace.events if e["event"] in ("start", "search")] == ["random-first"] * 2
    _gated(trace.events, res)


def test_a_registered_search_runs_through_tot_solve_method(registered: None, tmp_path: Any,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.jsonl"
    code = main(["solve", "game24", "4 9 10 13", "--method", "random-first", "--generator", "noisy",
                 "--evaluator", "prior", "--json", "--trace", str(path)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] and out["rejected"] > 0
    events = [json.loads(line) for line in path.read_text().splitlines()]
    res = SearchResult(out["answer"], out["verified"], rejected=out["rejected"])
    _gated(events, res)
    assert main(["verify", "--trace", str(path)]) == 0  # every verdict of the run re-checks


def test_tot_list_and_help_show_the_registry(registered: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["searches"] == ["tot-complete", "tot-bfs", "tot-dfs", "long", "best-first", "mcts", "beam",
                                 "random-first"]
    assert "noisy" in found["generators"] and "game24" in found["tasks"]
    assert set(found["evaluators"]) == set(EVALUATORS)
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert "searches:\n  tot-complete  DFS over every legal step" in text and "  random-first  Depth-first" in text
    with pytest.raises(SystemExit):
        main(["solve", "game24", "--help"])
    assert "random-first" in capsys.readouterr().out


def test_unknown_names_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    searches = "tot-complete, tot-bfs, tot-dfs, long, best-first, mcts, beam"
    with pytest.raises(ValueError, match=f"^unknown method 'nope'; use one of {searches}$"):
        get_search("nope")
    assert main(["solve", "game24", "4 9 10 13", "--method", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1 and "random-first" not in err


def test_a_plugin_search_is_read_from_the_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    import solver.searches as searches

    ep = EntryPoint("from-plugin", "tests.test_searches:random_first", "tot.searches")
    monkeypatch.setattr(searches, "entry_points", lambda group: [ep] if group == "tot.searches" else [])
    monkeypatch.setattr(searches, "_loaded", False)
    saved = dict(SEARCHES)
    try:
        assert "from-plugin" in search_names()
        assert get_search("from-plugin").run is random_first
    finally:
        SEARCHES.clear()
        SEARCHES.update(saved)


def test_a_generator_that_does_not_declare_what_searches_rely_on_is_refused_in_one_line() -> None:
    from solver.expansion import Expansion
    from tasks.game24 import Game24

    class Undeclared:  # no exhaustive, no log_likelihoods: a search could not tell a proof from a guess
        name = "undeclared"

        async def __call__(self, task: Any, state: Any, model: Any) -> list[Thought]:
            return []

    with pytest.raises(TypeError, match="'undeclared' must declare name, exhaustive and log_likelihoods"):
        Expansion(Game24(), "4 9 10 13", Undeclared(), None, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["tot-complete", "tot-bfs", "tot-dfs", "long", "best-first", "mcts", "beam"])
def test_one_entry_point_runs_every_search_as_solve_does(name: str) -> None:
    import asyncio

    from solver import Settings, make_evaluator, make_generator, run_search, solve
    from solver.settings import SearchSettings
    from tasks.game24 import Game24

    options = {"mcts": {"iterations": 60, "seed": 3}, "tot-bfs": {"breadth": 2}, "beam": {"beam_runs": 3}}.get(name, {})
    mine, theirs = Trace(), Trace()
    got = asyncio.run(run_search(name, Game24(), "4 9 10 13", make_generator("enumerate"), make_evaluator("oracle"),
                                 trace=mine, **options))
    settings = Settings(search=SearchSettings(method=name, generator="enumerate", evaluator="oracle", **options))
    want = asyncio.run(solve(Game24(), "4 9 10 13", settings, None, theirs))
    assert got.verified and (got.answer, got.expanded, got.proposed) == (want.answer, want.expanded, want.proposed)

    def events(t: Trace) -> list[dict[str, Any]]:  # solve's start event says the run's settings; the rest agree
        return [{k: v for k, v in e.items() if k not in ("t", "seconds")} for e in t.events
                if e["event"] != "start"]

    assert events(mine) == events(theirs)


def test_the_entry_point_refuses_an_option_the_search_does_not_take() -> None:
    import asyncio

    from solver import make_evaluator, make_generator, run_search
    from tasks.game24 import Game24

    with pytest.raises(TypeError, match="'breadth' is not an option of search 'mcts'; its options are depth, seed, "
                                        "iterations"):
        asyncio.run(run_search("mcts", Game24(), "4 9 10 13", make_generator("enumerate"), make_evaluator("oracle"),
                               breadth=3))
