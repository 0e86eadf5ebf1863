"""Searches, generators and evaluators by name: a user's own registered search runs through
``solve`` and ``tot solve --method`` and gets the gate, the trace and the answer check for free."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Iterator

import pytest

from solver.evaluators import EVALUATORS, make_evaluator
from solver.expansion import Run, SearchResult
from solver.generators import GENERATORS, make_generator, register_generator
from solver.lm.session import Session
from solver.run import ModelSettings, SearchSettings, Settings, solve
from solver.search_options import Options, check_value, option, option_specs
from solver.searches import SEARCHES, get_search, register_search, run_search, search_names
from solver.searches.common import begin
from solver.task import Task, Thought
from solver.task_capabilities import LegalMoves, Needs, require
from solver.tools.cli import main
from solver.trace import Trace
from tasks.game24 import Game24
from verifiers.arithmetic import verify_answer
from verifiers.verdict import Invalid

BAD = "1 + 1 = 3 (left: 3)"  # a step no Game of 24 state allows


@dataclass(frozen=True)
class RandomFirstOptions:
    """A user's search declares its own options once; tot makes its flags from this."""

    shuffle_seed: int = option(3, "seed of the random order of children", at_least=0)
    shuffle: bool = option(True, "shuffle the children (off: generation order)")


async def random_first(run: Run, settings: SearchSettings) -> SearchResult:
    """Depth-first in a seeded random order of the children: only the order is this search's (a
    budget that runs out ends the run outside it: Run.conduct)."""
    own = settings.own(RandomFirstOptions)
    rng = random.Random(own.shuffle_seed)
    run.start("random-first", depth=run.task.max_depth)
    stack = [run.root()]
    while stack:
        node = stack.pop()
        run.reach(node)
        if node.depth >= run.task.max_depth:
            continue
        children = await run.step.expand(node)
        hit = run.first_answer(children)
        if hit is not None:
            return run.result(hit[0], hit[1], None)
        open_nodes = [c for c in children if not c.solved]
        if own.shuffle:
            rng.shuffle(open_nodes)
        stack.extend(open_nodes)
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
    register_search("random-first", random_first, options=RandomFirstOptions)
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

    import solver.searches.registry as searches

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
    from solver.expansion import open_run
    from tasks.game24 import Game24

    class Undeclared:  # no exhaustive, no log_likelihoods: a search could not tell a proof from a guess
        name = "undeclared"

        async def __call__(self, task: Any, state: Any, model: Any) -> list[Thought]:
            return []

    with pytest.raises(TypeError, match="'undeclared' must declare name, exhaustive and log_likelihoods"):
        open_run(Game24(), "4 9 10 13", Undeclared(), None, None)  # type: ignore[arg-type]


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
    own = {k: v for k, v in options.items() if k != "seed"}
    settings = Settings(search=SearchSettings(method=name, generator="enumerate", evaluator="oracle",
                                              seed=options.get("seed", 0), options=get_search(name).options_from(own)))
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


# ---- options declared once per search -------------------------------------------------------------

def _expanded(path: Any) -> list[str]:
    """The states a run expanded, in order (its trace's expand events)."""
    return [json.loads(line)["node"] for line in path.read_text().splitlines()
            if json.loads(line)["event"] == "expand"]


def test_a_users_search_gets_flags_listing_and_keywords_from_its_declaration(
        registered: None, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["solve", "game24", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--shuffle-seed N random-first: seed of the random order of children (default 3)" in text
    assert "--no-shuffle random-first: turns off: shuffle the children" in text
    runs = {}
    for name, flags in (("3", []), ("given 3", ["--shuffle-seed", "3"]), ("9", ["--shuffle-seed", "9"]),
                        ("plain", ["--no-shuffle"])):
        path = tmp_path / f"{name}.jsonl"
        assert main(["solve", "game24", "4 9 10 13", "--method", "random-first", "--evaluator", "prior", "--json",
                     "--trace", str(path), *flags]) == 0
        assert json.loads(capsys.readouterr().out)["verified"]
        runs[name] = _expanded(path)
    assert runs["3"] == runs["given 3"] != runs["9"] != runs["plain"]  # the flags reach the search
    trace = Trace()  # the same option as a keyword of the one entry point
    asyncio.run(run_search("random-first", Game24(), "4 9 10 13", make_generator("enumerate"),
                           make_evaluator("prior"), trace=trace, shuffle_seed=9))
    assert [e["node"] for e in trace.events if e["event"] == "expand"] == runs["9"]
    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["search_options"]
    assert listed["random-first"] == [
        {"name": "shuffle_seed", "flag": "--shuffle-seed", "type": "int", "default": 3,
         "help": "seed of the random order of children", "at_least": 0},
        {"name": "shuffle", "flag": "--no-shuffle", "type": "bool", "default": True,
         "help": "shuffle the children (off: generation order)"}]
    assert [o["flag"] for o in listed["tot-complete"]] == ["--prune-proven"]
    assert [o["flag"] for o in listed["long"]] == ["--max-children", "--max-rounds"]
    for argv, says in ((["--method", "random-first", "--shuffle-seed", "-1"], "--shuffle-seed must be at least 0"),
                       (["--method", "tot-bfs", "--shuffle-seed", "4"], "--shuffle-seed is not an option of "
                                                                         "--method tot-bfs"),
                       (["--method", "random-first", "--iterations", "4"], "--iterations is not an option of "
                                                                           "--method random-first; its own options "
                                                                           "are --shuffle-seed, --no-shuffle")):
        assert main(["solve", "game24", "4 9 10 13", "--evaluator", "prior", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith(f"tot: error: {says}"), err
    with pytest.raises(TypeError, match="'iterations' is not an option of search 'random-first'; its options are "
                                        "depth, seed, shuffle_seed, shuffle$"):
        asyncio.run(run_search("random-first", Game24(), "4 9 10 13", make_generator("enumerate"),
                               make_evaluator("prior"), iterations=3))
    with pytest.raises(ValueError, match="^shuffle_seed must be at least 0, not -2$"):
        asyncio.run(run_search("random-first", Game24(), "4 9 10 13", make_generator("enumerate"),
                               make_evaluator("prior"), shuffle_seed=-2))


@dataclass(frozen=True)
class WideOptions:
    breadth: int = option(3, "another default for the BFS's flag")


@dataclass(frozen=True)
class TimeoutOptions:
    timeout: float = option(1.0, "a name tot's own flags already use")


def test_a_declaration_that_would_give_one_flag_two_meanings_is_refused(registered: None,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="^search 'wide' declares option 'breadth' unlike 'tot-bfs' does"):
        register_search("wide", random_first, options=WideOptions)
    assert "wide" not in SEARCHES
    with pytest.raises(TypeError, match="must be made by solver.search_options.option"):
        register_search("bare", random_first, options=dataclass(frozen=True)(type("Bare", (), {"__annotations__": {
            "x": int}, "x": 1})))
    with pytest.raises(TypeError, match="^option Zero.n's default: n must be at least 1, not 0$"):
        register_search("zero", random_first, options=dataclass(frozen=True)(type("Zero", (), {
            "__annotations__": {"n": int}, "n": option(0, "a default its own bound refuses", at_least=1)})))
    register_search("timeout-user", random_first, options=TimeoutOptions)
    assert main(["solve", "game24", "4 9 10 13"]) == 2
    assert capsys.readouterr().err.strip() == ("tot: error: search 'timeout-user': its option --timeout is already a "
                                               "flag of tot; rename the option")


def test_the_built_in_options_are_declared_once_and_read_from_the_command_line() -> None:
    from solver.tools.cli import build_parser, settings_from
    from solver.tools.plugins import load_plugins

    parser = build_parser(load_plugins())
    given = {"--breadth": "2", "--no-early-stop": None, "--prune-below": "0.25", "--dfs-children": "4",
             "--max-children": "3", "--max-rounds": "7", "--iterations": "11", "--exploration": "0.75",
             "--rollout-depth": "2", "--answers": "3", "--beam-candidates": "9", "--lambda": "0.125", "--tau": "2",
             "--decay": "0.25", "--beam-runs": "4"}
    argv = ["solve", "game24", "1 2 3 4"] + [a for k, v in given.items() for a in ([k] if v is None else [k, v])]
    def options(argv: list[str]) -> dict[str, Any]:
        """Every search's options as ``tot solve --method M`` makes them (one options instance)."""
        out: dict[str, Any] = {}
        for method in ("tot-bfs", "tot-dfs", "long", "mcts", "beam"):
            own = settings_from(parser.parse_args([*argv, "--method", method])).search.options
            assert type(own) is get_search(method).options
            out.update(asdict(own))
        return out

    assert options(argv) == {
        "breadth": 2, "early_stop": False, "prune_below": 0.25, "dfs_children": 4, "max_children": 3,
        "max_rounds": 7, "iterations": 11, "exploration": 0.75, "rollout_depth": 2, "answers": 3, "candidates": 9,
        "mix": 0.125, "tau": 2.0, "decay": 0.25, "beam_runs": 4}
    # The papers' and libraries' values (docs/searches.md), written here apart from the declarations.
    assert options(["solve", "game24", "1 2 3 4"]) == {
        "breadth": 5, "early_stop": True, "prune_below": None, "dfs_children": None, "max_children": 5,
        "max_rounds": 100, "iterations": 200, "exploration": 1.0, "rollout_depth": 0, "answers": 1,
        "candidates": 16, "mix": 0.5, "tau": 0.5, "decay": 0.5, "beam_runs": 100}


@pytest.mark.parametrize("bounds, good, bad", [
    ({"at_least": 1}, [1, 2, 10**9], [0, -1]),
    ({"above": 0.0}, [1e-9, 0.5, 3], [0, -0.5]),
    ({"at_least": 0, "at_most": 1}, [0, 0.5, 1], [-0.01, 1.01]),
    ({"above": 0, "at_most": 1}, [0.01, 1], [0, 1.5]),
    ({}, [-5.5, 0, 7], []),
])
def test_bounds_are_checked_and_said_in_one_line(bounds: dict[str, float], good: list[float],
                                                 bad: list[float]) -> None:
    @dataclass(frozen=True)
    class Bounded:
        x: float = option(float(good[0]), "a bounded number", **bounds)

    [spec] = option_specs(Bounded)
    for v in good:
        assert check_value(spec, v) == v
    for v in [*bad, float("nan"), float("inf"), "1", None, True]:
        with pytest.raises(ValueError, match="^x must ") as caught:
            check_value(spec, v)
        assert "\n" not in str(caught.value)


def test_the_searches_page_examples_run_and_print_what_they_say(registered: None) -> None:
    """docs/searches.md's Python examples (a search of your own, a run stepped, saved and resumed),
    run as written, in order, each printing the block after it (the search it registers is
    unregistered by the fixture)."""
    import contextlib
    import io
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "searches.md").read_text(encoding="utf-8")
    found = re.findall(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", text, re.S)
    assert len(found) == 2 == text.count("```python")
    namespace = {"__name__": "docs_searches"}
    for code, printed in found:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):  # as a user's script: no future import of this module's
            exec(compile(code, "docs/searches.md", "exec", dont_inherit=True), namespace)
        assert out.getvalue() == printed
    assert [s.name for s in get_search("random-first").specs] == ["shuffle_seed"]


# ---- a search is its options: one new field reaches everything ----------------------------------------

@dataclass(frozen=True)
class PatienceOptions(Options):
    patience: int = option(2, "levels to go down the first child", at_least=1)


@dataclass(frozen=True)
class Patient:
    """Down the first child for --patience levels: a search class, its options its one argument."""

    options: PatienceOptions = PatienceOptions()
    read: ClassVar[list[int]] = []

    async def __call__(self, run: Run, settings: SearchSettings) -> SearchResult:
        begin(run, settings, self.options)
        node = run.root()
        Patient.read.append(self.options.patience)
        for _ in range(self.options.patience):
            children = await run.step.expand(node)
            if not children:
                break
            node = children[0]
            run.keep(node)
        return run.result(None, None, None)


def test_an_option_is_one_field_of_its_dataclass_and_nothing_else_names_it(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The field ``patience`` is declared once, above; registering the class is all: the flag, its
    help and check, the settings, the search's own value and the trace's search event follow."""
    from solver.tools.cli import build_parser, settings_from
    from solver.tools.plugins import load_plugins

    saved = dict(SEARCHES)
    try:
        register_search("patient", Patient)
        with pytest.raises(SystemExit):
            main(["solve", "game24", "--help"])
        assert "--patience N patient: levels to go down the first child (default 2)" in " ".join(
            capsys.readouterr().out.split())
        args = build_parser(load_plugins()).parse_args(["solve", "game24", "4 9 10 13", "--method", "patient",
                                                        "--patience", "3"])
        assert settings_from(args).search.options == PatienceOptions(patience=3)
        path = tmp_path / "run.jsonl"
        assert main(["solve", "game24", "4 9 10 13", "--method", "patient", "--patience", "3", "--evaluator",
                     "prior", "--trace", str(path)]) == 0
        events = [json.loads(line) for line in path.read_text().splitlines()]
        [search] = [e for e in events if e["event"] == "search"]
        assert search["method"] == "patient" and search["search_options"] == {"patience": 3}
        assert Patient.read[-1] == 3 and sum(e["event"] == "expand" for e in events) == 3
        asyncio.run(run_search("patient", Game24(), "4 9 10 13", make_generator("enumerate"),
                               make_evaluator("prior"), patience=1))
        assert Patient.read[-1] == 1
        assert main(["solve", "game24", "4 9 10 13", "--method", "patient", "--patience", "0"]) == 2
        assert capsys.readouterr().err.strip() == "tot: error: --patience must be at least 1, not 0"
        with pytest.raises(ValueError, match="^patience must be at least 1, not 0$"):
            PatienceOptions(0)  # checked where it is made, once
    finally:
        SEARCHES.clear()
        SEARCHES.update(saved)
