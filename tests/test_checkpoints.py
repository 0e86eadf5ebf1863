"""The checkpoint reader (``Steppable.resume``) under hostile input: a checkpoint is a file a user
hands back, so a malformed, altered or foreign one is refused in one line (ValueError), and one
that is accepted replays without asking the model anything and gives a correct result.

The property at the end feeds it thousands of random mutations of real checkpoints (best-first
and MCTS; model-free, scored by a model, judged by a model's texts; with failed calls and budget
stops) and requires, of each, a one-line ValueError or a resumed run that asked the model nothing
during its replay and whose answer (if any) the independent reference accepts, and whose proof of
"no solution" (if any) the reference confirms."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.budget import Budget, Usage
from solver.evaluators import make_evaluator
from solver.expansion import Run, open_run
from solver.generators import make_generator
from solver.lm.base import GenParams, LMError
from solver.lm.client import LMClient
from solver.searches.best_first import BestFirst
from solver.searches.common import Steppable
from solver.searches.mcts import Mcts
from solver.trace import Trace
from tasks.game24 import Game24
from tests.fakes import ScriptedBackend
from tests.profiles import examples
from tests.references import game24_ok, sym_solvable
from tests.test_steppable import _begun


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:4], "big")


class Flaky(ScriptedBackend):
    """A scripted model, the same on every client: scores and value judgements are a hash of the
    request; ``fail`` of every 7 requests (by hash) fail, as a server's errors would."""

    def __init__(self, fail: int = 0) -> None:
        super().__init__(respond=self._respond, scorer=self._score)
        self.fail = fail

    def _respond(self, prompt: str, params: GenParams, i: int) -> str:
        return ("sure", "likely", "impossible")[_digest(prompt, str(i)) % 3]

    @staticmethod
    def _score(prompt: str, continuation: str) -> float:
        return -_digest(prompt, continuation) / 2**32 * 8

    def _fails(self, *parts: str) -> bool:
        return _digest("fail", *parts) % 7 < self.fail

    async def complete(self, prompt: str, params: GenParams) -> Any:
        if self._fails(prompt):
            self.requests.append((prompt, params))
            raise LMError("scripted failure")
        return await super().complete(prompt, params)

    async def score(self, prompt: str, continuations: Any) -> tuple[list[float], int]:
        if self._fails(prompt, *continuations):
            self.score_requests.append((prompt, tuple(continuations)))
            raise LMError("scripted failure")
        return await super().score(prompt, continuations)

    def asked(self) -> int:
        return len(self.requests) + len(self.score_requests)


def _run(puzzle: str, evaluator: str, model: bool, fail: int = 0, budget: Budget | None = None,
         trace: Trace | None = None) -> tuple[Run[Any], Flaky | None]:
    backend = Flaky(fail) if model else None
    client = LMClient(backend) if backend is not None else None
    usage = Usage(budget=budget) if budget is not None else None
    return open_run(Game24(), puzzle, make_generator("enumerate"), make_evaluator(evaluator), client,
                     trace if trace is not None else Trace(), usage), backend


def _events(trace: Trace) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("t", "seconds")} for e in trace.events]


def _summary(res: Any) -> dict[str, Any]:
    return {k: v for k, v in res.summary().items() if k != "seconds"}


async def _saved(cls: type[Steppable[Any]], options: dict[str, Any], puzzle: str, evaluator: str, model: bool,
                 n: int, fail: int = 0, budget: Budget | None = None) -> bytes:
    run, _ = _run(puzzle, evaluator, model, fail, budget)
    search = _begun(cls, options, run)
    for _ in range(n):
        if await search.step():
            break
    return search.checkpoint()


def _resume(cls: type[Steppable[Any]], data: bytes, puzzle: str = "4 9 10 13", evaluator: str = "likelihood",
            model: bool = True, fail: int = 0) -> tuple[Steppable[Any], Flaky | None]:
    run, backend = _run(puzzle, evaluator, model, fail)
    return asyncio.run(cls.resume(data, run)), backend


def _edit(data: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    saved = json.loads(data)
    change(saved)
    return json.dumps(saved).encode()


def _one_line(cls: type[Steppable[Any]], data: bytes, says: str, **kw: Any) -> Flaky | None:
    """Resume; it must be refused with one line matching ``says``, the model asked nothing."""
    run, backend = _run(kw.get("puzzle", "4 9 10 13"), kw.get("evaluator", "likelihood"), kw.get("model", True))
    with pytest.raises(ValueError, match=says) as got:
        asyncio.run(cls.resume(data, run))
    assert "\n" not in str(got.value)
    assert backend is None or backend.asked() == 0
    return backend


SAVED = asyncio.run(_saved(BestFirst, {}, "4 9 10 13", "likelihood", True, 4))


def test_malformed_memo_values_are_one_line() -> None:
    saved = json.loads(SAVED)
    memo = saved["books"]["memo"]
    key = next(iter(memo["scores"]))
    for part, value in (("scores", 5), ("scores", ["x"]), ("scores", [10**400]), ("scores", [True]),
                        ("texts", [3]), ("texts", "sure"), ("logprobs", [["a"]]), ("failed", ["never"]),
                        ("failed", [None])):
        bad = copy.deepcopy(saved)
        bad["books"]["memo"][part] = {key: value}
        _one_line(BestFirst, json.dumps(bad).encode(), "^the checkpoint's model memo is malformed")
    for memo_value in ([memo["texts"], memo["scores"]], {"texts": {}}, "memo"):
        bad = copy.deepcopy(saved)
        bad["books"]["memo"] = memo_value
        _one_line(BestFirst, json.dumps(bad).encode(), "^the checkpoint's model memo is malformed")


def test_values_out_of_range_or_of_the_wrong_type_are_one_line() -> None:
    for path, value, says in (
            (("books", "elapsed"), 10**400, "usage is malformed"),
            (("books", "elapsed"), float("inf"), "usage is malformed"),
            (("books", "elapsed"), float("nan"), "usage is malformed"),
            (("books", "elapsed"), -1.0, "usage is malformed"),
            (("books", "elapsed"), "1", "usage is malformed"),
            (("books", "usage", "calls"), -3, "usage is malformed"),
            (("books", "usage", "prompt_tokens"), -1, "usage is malformed"),
            (("books", "usage", "steps"), 10**400, "usage is malformed"),
            (("books", "usage", "cache_hits"), 1.0, "usage is malformed"),
            (("options", "depth"), "3", "options do not fit BestFirst: depth is '3'"),
            (("options", "depth"), 10**400, "options do not fit BestFirst"),
            (("options", "decimals"), 3, "options do not fit BestFirst: it takes no option 'decimals'"),
            (("options", "seed"), None, "options do not fit BestFirst"),
            (("steps",), 10**400, "malformed checkpoint"),
            (("steps",), True, "malformed checkpoint"),
            (("stopped",), "patience", "malformed checkpoint"),
            (("run",), None, "malformed checkpoint")):
        def change(saved: dict[str, Any], path: tuple[str, ...] = path, value: Any = value) -> None:
            inner = saved
            for k in path[:-1]:
                inner = inner[k]
            inner[path[-1]] = value

        _one_line(BestFirst, _edit(SAVED, change), says)
    mcts = asyncio.run(_saved(Mcts, {"iterations": 30, "seed": 3}, "4 9 10 13", "likelihood", True, 3))
    for option, value in (("seed", 1.5), ("exploration", "0.5"), ("iterations", 0), ("exploration", -1),
                          ("rollout_depth", [2]), ("answers", None)):
        _one_line(Mcts, _edit(mcts, lambda s, o=option, v=value: s["options"].__setitem__(o, v)),
                  "^the checkpoint's options do not fit Mcts")


def test_more_steps_than_saved_ask_the_model_nothing_and_are_refused() -> None:
    """The steps beyond the saved ones would need answers the checkpoint does not hold: refused,
    with no model call (they used to be made during the replay, untraced, and their count reset)."""
    for cls, options in ((BestFirst, {}), (Mcts, {"iterations": 40, "rollout_depth": 1, "seed": 2})):
        for evaluator in ("likelihood", "value"):
            data = asyncio.run(_saved(cls, options, "4 9 10 13", evaluator, True, 3))
            for more in (1, 2, 50):
                _one_line(cls, _edit(data, lambda s, m=more: s.__setitem__("steps", s["steps"] + m)),
                          "^the checkpoint does not replay on this run: its steps (make more model calls|take "
                          "more search steps)", evaluator=evaluator)
            _one_line(cls, _edit(data, lambda s: s.__setitem__("steps", s["steps"] - 1)),
                      "^the checkpoint's steps replay to", evaluator=evaluator)
    free = asyncio.run(_saved(BestFirst, {}, "4 9 10 13", "prior", False, 3))  # no model: the steps still count
    _one_line(BestFirst, _edit(free, lambda s: s.__setitem__("steps", 9)),
              "^the checkpoint does not replay on this run: its steps take more search steps", evaluator="prior",
              model=False)


def test_altered_counts_are_refused() -> None:
    for name in ("calls", "score_calls", "failed_calls", "steps"):
        _one_line(BestFirst, _edit(SAVED, lambda s, n=name: s["books"]["usage"].__setitem__(n, s["books"]["usage"][n]
                                                                                            + 1)),
                  f"^the checkpoint's steps replay to .* {name.replace('_', ' ')}, not the ")


def test_a_checkpoint_of_another_run_is_refused() -> None:
    _one_line(BestFirst, SAVED, r"^the checkpoint is of another run: its puzzle is '4 9 10 13', this run's "
                                r"'1 2 3 4'$", puzzle="1 2 3 4")
    _one_line(BestFirst, SAVED, "^the checkpoint is of another run: its evaluator is 'likelihood', this run's "
                                "'value'$", evaluator="value")
    _one_line(BestFirst, _edit(SAVED, lambda s: s["run"].__setitem__("puzzle", "1\n2 3 4")),
              r"^the checkpoint is of another run: its puzzle is '1\\n2 3 4'")
    _one_line(BestFirst, _edit(SAVED, lambda s: s.__setitem__("search", "Mcts\nBestFirst")),
              r"^a checkpoint of 'Mcts\\nBestFirst', not of BestFirst$")
    # the memo answers of another puzzle (with this run's name on it): its requests are not there
    other = asyncio.run(_saved(BestFirst, {}, "1 2 3 4", "likelihood", True, 4))
    _one_line(BestFirst, _edit(SAVED, lambda s: s["books"].__setitem__("memo", json.loads(other)["books"]["memo"])),
              "^the checkpoint does not replay on this run: it does not hold the model's answer")


@pytest.mark.parametrize("cls,options", [(BestFirst, {}), (Mcts, {"iterations": 40, "rollout_depth": 2, "seed": 4})])
@pytest.mark.parametrize("evaluator", ["likelihood", "value"])
def test_failed_calls_fail_again_in_the_replay_and_the_run_is_one_run(cls: type[Steppable[Any]],
                                                                      options: dict[str, Any],
                                                                      evaluator: str) -> None:
    """A request that failed before the checkpoint fails again in the replay, without asking the
    model (it used to be sent again, untraced, and a success then rebuilt another run than the
    first part's): the two parts are one run, event for event, wherever they are cut."""
    whole_trace = Trace()
    run, _ = _run("4 9 10 13", evaluator, True, fail=2, trace=whole_trace)
    whole = asyncio.run(_begun(cls, options, run).to_end())
    assert whole.usage.failed_calls > 0
    for n in (1, 3, 6, 10):
        first, second = Trace(), Trace()
        run, _ = _run("4 9 10 13", evaluator, True, fail=2, trace=first)
        search = _begun(cls, options, run)
        for _ in range(n):
            if asyncio.run(search.step()):
                break
        data = search.checkpoint()
        run, backend = _run("4 9 10 13", evaluator, True, fail=2, trace=second)
        resumed = asyncio.run(cls.resume(data, run))
        assert backend is not None and backend.asked() == 0  # the replay asked nothing
        res = asyncio.run(resumed.to_end())
        assert _events(first) + _events(second) == _events(whole_trace), n
        assert _summary(res) == _summary(whole), n


def test_a_run_stopped_by_its_budget_resumes_stopped_without_asking() -> None:
    """A tokens budget stops a run where a replay (which spends no tokens) would not: the saved
    stop is replayed, so the resumed run ends as the run did, asking nothing."""
    for budget in (Budget(tokens=300), Budget(calls=9), Budget(steps=3)):
        run, _ = _run("4 9 10 13", "likelihood", True, budget=budget)
        search = _begun(BestFirst, {}, run)
        while not asyncio.run(search.step()):
            pass
        assert search.stopped is not None
        whole = _summary(search.finish())
        resumed, backend = _resume(BestFirst, search.checkpoint())
        assert backend is not None and backend.asked() == 0
        assert _summary(asyncio.run(resumed.to_end())) == whole


# --- the property: thousands of mutated checkpoints ------------------------------------------

BASES: list[tuple[type[Steppable[Any]], str, str, bool, int, bytes]] = []  # cls, puzzle, evaluator, model, fail, data
for _cls, _options in ((BestFirst, {}), (BestFirst, {"depth": 2}), (Mcts, {"iterations": 25, "seed": 1}),
                       (Mcts, {"iterations": 25, "rollout_depth": 2, "seed": 7})):
    for _puzzle, _evaluator, _model, _fail, _n, _budget in (
            ("4 9 10 13", "likelihood", True, 0, 3, None), ("3 3 8 8", "value", True, 2, 5, None),
            ("1 1 1 1", "prior", False, 0, 4, None), ("4 9 10 13", "likelihood", True, 1, 30, Budget(tokens=200))):
        BASES.append((_cls, _puzzle, _evaluator, _model, _fail,
                      asyncio.run(_saved(_cls, _options, _puzzle, _evaluator, _model, _n, _fail, _budget))))

HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([10**400, -(10**400), 0, 1, -1, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
    st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=3), st.floats()), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(-3, 3), max_size=2))


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*here, i))
    return out


def _at(tree: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        tree = tree[k]
    return tree


@st.composite
def mutated(draw: st.DrawFn) -> tuple[int, bytes, str, str]:
    """A base checkpoint changed by 1-3 mutations (of its JSON, or of its bytes), and the run it
    is resumed on (mostly its own; sometimes another puzzle or evaluator)."""
    i = draw(st.integers(0, len(BASES) - 1))
    _, puzzle, evaluator, *_ = BASES[i]
    tree = json.loads(BASES[i][5])
    raw: bytes | None = None
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(tree)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        kind = draw(st.sampled_from(["replace", "replace", "nudge", "nudge", "delete", "swap", "bytes"]))
        if not path:
            kind = "bytes"
        target = _at(tree, path[:-1]) if path else None
        if kind == "replace":
            target[path[-1]] = draw(HOSTILE)
        elif kind == "nudge":  # a near value: a count, a step, a score or a text a little off
            old = target[path[-1]]
            if isinstance(old, bool) or not isinstance(old, (int, float, str)):
                target[path[-1]] = draw(HOSTILE)
            elif isinstance(old, str):
                target[path[-1]] = draw(st.sampled_from(["sure", "impossible", "", old + " ", old[::-1]]))
            else:
                target[path[-1]] = old + draw(st.sampled_from([-2, -1, 1, 2, 0.5, -0.001]))
        elif kind == "delete":
            del target[path[-1]]
        elif kind == "swap":  # another value of the same checkpoint in its place
            others = [p for p in paths if p and p != path and p[:len(path)] != path and path[:len(p)] != p]
            if others:
                target[path[-1]] = copy.deepcopy(_at(tree, others[draw(st.integers(0, len(others) - 1))]))
        if kind == "bytes":
            data = bytearray(json.dumps(tree).encode())
            at = draw(st.integers(0, len(data)))
            how = draw(st.sampled_from(["cut", "flip", "insert"]))
            if how == "cut":
                del data[at:]
            elif how == "flip" and at < len(data):
                data[at] ^= 1 << draw(st.integers(0, 7))
            else:
                data[at:at] = draw(st.binary(min_size=1, max_size=4))
            raw = bytes(data)
            break
    data = raw if raw is not None else json.dumps(tree).encode()
    on = draw(st.sampled_from([(puzzle, evaluator)] * 8 + [("1 2 3 4", evaluator), (puzzle, "oracle")]))
    return i, data, on[0], on[1]


TRIED = {"refused": 0, "resumed": 0}


@settings(max_examples=examples(2200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_a_mutated_checkpoint_is_refused_in_one_line_or_resumes_correctly(case: tuple[int, bytes, str, str]) -> None:
    i, data, puzzle, evaluator = case
    cls, _, _, model, fail, _ = BASES[i]
    run, backend = _run(puzzle, evaluator, model and evaluator != "oracle", fail, budget=Budget(steps=60, calls=600))
    try:
        search = asyncio.run(cls.resume(data, run))
    except ValueError as exc:
        assert str(exc) and "\n" not in str(exc), repr(exc)
        assert backend is None or backend.asked() == 0
        TRIED["refused"] += 1
        return
    TRIED["resumed"] += 1
    assert backend is None or backend.asked() == 0  # the replay asked the model nothing
    res = asyncio.run(search.to_end())
    if res.answer is not None and res.verified:
        assert game24_ok(puzzle, res.answer), (res.answer, puzzle)
    if res.exhausted:
        assert not sym_solvable(puzzle.split()), puzzle


def test_the_fuzzed_checkpoints_were_both_refused_and_resumed() -> None:
    """Run after the property (file order): the mutations reached both outcomes; ``-s`` prints
    the counts."""
    if sum(TRIED.values()) == 0:
        pytest.skip("the property did not run in this session")
    print(f"\nmutated checkpoints: {TRIED['refused']} refused in one line, {TRIED['resumed']} resumed correctly")
    assert TRIED["refused"] > 0 and TRIED["resumed"] > 0
