"""The Task protocol in parts: a user's core-only task runs with parts of their own; every
built-in part that needs a capability the task lacks (or a model) stops the run with one line
naming both; our tasks have exactly the capabilities docs/task-protocol.md says they have.

The expected messages and the capability table below are written out by hand, not built from
solver/task_capabilities.py, so that a changed message or a lost capability fails here."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from solver import baseline_capabilities as bcap
from solver import task_capabilities as cap
from solver.baselines import run_baseline
from solver.evaluators import EVALUATORS, Value, make_evaluator
from solver.generators import GENERATORS, Propose, make_generator
from solver.node import NodeFactory
from solver.run import SearchSettings, Settings, check_settings, needs_model, solve
from solver.searches import run_search
from solver.searches.controller import long_search
from solver.task import Task
from solver.tools import cli
from tasks.crosswords.task import Crosswords
from tasks.game24.task import Game24
from tasks.planning.task import Planning
from tasks.sudoku.task import Sudoku
from tasks.writing.task import Writing

DOC = Path(__file__).resolve().parents[1] / "docs" / "task-protocol.md"


def _doc_blocks() -> tuple[list[str], list[str]]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S), re.findall(r"```text\n(.*?)```", text, re.S)


def _run_doc() -> tuple[dict[str, Any], str]:
    """Run the doc's Python blocks in order, as written (our own doc, not model output)."""
    code, _ = _doc_blocks()
    namespace: dict[str, Any] = {"__name__": "task_protocol_doc"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in code:
            exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own example
    return namespace, out.getvalue()


DOC_NS, DOC_OUT = _run_doc()
Change, EveryCoin, LeastLeft = DOC_NS["Change"], DOC_NS["EveryCoin"], DOC_NS["LeastLeft"]


def _paid(answer: str) -> int:
    """A separate reading of an answer: the sum of its coins, each checked to be 1, 2 or 5."""
    coins = [int(c) for c in answer.replace("+", " ").split()]
    assert set(coins) <= {1, 2, 5}
    return sum(coins)


def test_the_doc_example_runs_and_prints_what_the_doc_says() -> None:
    _, expected = _doc_blocks()
    assert DOC_OUT == "".join(expected)
    task = Change()
    assert isinstance(task, Task)
    assert not any(cap.has(task, part) for part in CAPABILITY_NAMES.values())


# ---- a core-only task runs with a user's own generator and evaluator ------------------------

@pytest.mark.parametrize("amount", [1, 4, 13, 23])
def test_a_core_only_task_runs_bfs_dfs_and_the_complete_search(amount: int) -> None:
    task = Change()
    runs = [run_search("tot-bfs", task, str(amount), EveryCoin(), LeastLeft(), None, breadth=2),
            run_search("tot-dfs", task, str(amount), EveryCoin(), LeastLeft(), None),
            run_search("tot-complete", task, str(amount), EveryCoin(), LeastLeft(), None)]
    for res in (asyncio.run(r) for r in runs):
        assert res.answer is not None and res.verified
        assert _paid(res.answer) == amount


def test_a_core_only_task_without_a_solution_in_reach_returns_none() -> None:
    # 8 coins pay at most 40
    res = asyncio.run(run_search("tot-complete", Change(), "41", EveryCoin(), LeastLeft(), None))
    assert res.answer is None and not res.verified


# ---- built-in parts on a task that lacks what they need: one line naming both ---------------

LACKS = {
    "propose": "generator `propose` needs a task with a propose prompt and parser "
               "(ProposePrompts: propose_prompt, parse_proposals); Change has none",
    "sample": "generator `sample` needs a task with a sample prompt and parser "
              "(SamplePrompts: sample_prompt, parse_proposals); Change has none",
    "enumerate": "generator `enumerate` needs a task with legal-move enumeration "
                 "(LegalMoves: legal_thoughts(state) -> thoughts); Change has none",
    "enumerate-rank": "generator `enumerate-rank` needs a task with legal-move enumeration "
                      "(LegalMoves: legal_thoughts(state) -> thoughts); Change has none",
    "enumerate-choice": "generator `enumerate-choice` needs a task with legal-move enumeration "
                        "(LegalMoves: legal_thoughts(state) -> thoughts); Change has none",
    "value": "evaluator `value` needs a task with a value prompt and parser "
             "(ValuePrompts: value_prompt, parse_value); Change has none",
    "likelihood": "evaluator `likelihood` needs a task with a value prompt and parser "
                  "(ValuePrompts: value_prompt, parse_value); Change has none",
    "vote": "evaluator `vote` needs a task with a vote prompt (VotePrompt: vote_prompt(states, chat)); "
            "Change has none",
    "oracle": "evaluator `oracle` needs a task with an exact oracle (HasOracle: oracle(state) -> bool); "
              "Change has none",
}


def _search(name: str, task: Any, gen: Any, ev: Any, client: Any = None, **kw: Any) -> Any:
    if name == "bfs":
        return run_search("tot-bfs", task, "13", gen, ev, client, **kw)
    if name == "dfs":
        return run_search("tot-dfs", task, "13", gen, ev, client, **kw)
    if name == "complete":
        return run_search("tot-complete", task, "13", gen, ev, client, **kw)
    return long_search(task, "13", gen, client, evaluator=ev, **kw)  # it ranks with any evaluator it is given


@pytest.mark.parametrize("search", ["bfs", "dfs", "complete", "long"])
@pytest.mark.parametrize("generator", [g for g in GENERATORS])
def test_each_builtin_generator_names_the_capability_the_task_lacks(search: str, generator: str) -> None:
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(_search(search, Change(), make_generator(generator), LeastLeft()))
    assert str(err.value) == LACKS[generator]
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


class _Counting(EveryCoin):  # type: ignore[misc, valid-type]
    """The doc's generator, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, task: Any, state: Any, client: Any) -> Any:
        self.calls += 1
        return await super().__call__(task, state, client)


@pytest.mark.parametrize("search", ["bfs", "dfs", "complete", "long"])
@pytest.mark.parametrize("evaluator", ["value", "likelihood", "vote", "oracle"])
def test_each_builtin_evaluator_names_the_capability_the_task_lacks_before_the_search_starts(
        search: str, evaluator: str) -> None:
    from solver.trace import Trace

    gen, trace = _Counting(), Trace()
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(_search(search, Change(), gen, make_evaluator(evaluator), trace=trace))
    assert str(err.value) == LACKS[evaluator]
    assert gen.calls == 0 and trace.events == []  # checked at the start, not met halfway


@pytest.mark.parametrize("evaluator", ["prior", "random"])
def test_the_model_free_evaluators_need_nothing(evaluator: str) -> None:
    res = asyncio.run(run_search("tot-bfs", Change(), "13", EveryCoin(), make_evaluator(evaluator), None))
    assert res.answer is not None and _paid(res.answer) == 13


def test_the_generator_is_named_before_the_evaluator() -> None:
    with pytest.raises(cap.MissingCapability, match=r"^generator `propose` needs"):
        asyncio.run(run_search("tot-bfs", Change(), "13", make_generator("propose"), make_evaluator("oracle"), None))


def test_a_search_without_the_gate_needs_the_unchecked_mode() -> None:
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(run_search("tot-bfs", Sudoku(), "1***|**1*|*1**|***1", make_generator("enumerate"),
                               make_evaluator("prior"), None, gate=False))
    assert str(err.value) == ("a search without the gate (gate=False) needs a task with an unchecked mode "
                              "(Unchecked: apply_unchecked(state, thought)); Sudoku has none")


def test_a_task_without_the_whole_core_is_named_with_what_it_lacks() -> None:
    class Old:  # an older plugin: no report_answer
        name, max_depth = "old", 1

        def root(self, puzzle: str) -> str:
            return ""

        def check(self, state: str, thought: Any) -> Any:
            raise AssertionError("never reached")

        answer = describe = root

        def verify_answer(self, puzzle: str, answer: str) -> None:
            return None

    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(run_search("tot-bfs", Old(), "x", EveryCoin(), LeastLeft(), None))  # type: ignore[arg-type]
    assert str(err.value) == "a search needs a task with the core Task protocol; Old lacks report_answer"


# ---- a model part without a model: one line, not an AssertionError ---------------------------

@pytest.mark.parametrize("generator,evaluator,user", [
    ("propose", "oracle", "generator `propose`"),
    ("sample", "prior", "generator `sample`"),
    ("enumerate-rank", "prior", "generator `enumerate-rank`"),
    ("enumerate-choice", "oracle", "generator `enumerate-choice`"),
    ("enumerate", "value", "evaluator `value`"),
    ("enumerate", "likelihood", "evaluator `likelihood`"),
    ("enumerate", "vote", "evaluator `vote`"),
])
def test_a_model_part_without_a_client_says_it_needs_a_model(generator: str, evaluator: str, user: str) -> None:
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(run_search("tot-bfs", Game24(), "4 9 10 13", make_generator(generator), make_evaluator(evaluator),
                               None))
    assert str(err.value) == f"{user} needs a model; pass an LMClient"


def test_calling_a_model_part_directly_without_a_client_gives_the_same_line() -> None:
    task = Game24()
    node = NodeFactory().make(task.root("4 9 10 13"), None)
    with pytest.raises(cap.MissingCapability, match=r"^evaluator `value` needs a model; pass an LMClient$"):
        asyncio.run(Value()(task, [node], None))
    with pytest.raises(cap.MissingCapability, match=r"^generator `propose` needs a model; pass an LMClient$"):
        asyncio.run(Propose()(task, node.state, None))
    with pytest.raises(cap.MissingCapability, match=r"^evaluator `oracle` needs a task with an exact oracle"):
        asyncio.run(make_evaluator("oracle")(Change(), [node], None))


# ---- solver.run.solve, the baselines and the CLI ----------------------------------------------

def test_solve_names_the_missing_capability_before_writing_a_trace() -> None:
    from solver.trace import Trace

    trace = Trace()
    s = Settings(search=SearchSettings(generator="enumerate", evaluator="oracle", method="tot-complete"))
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(solve(Change(), "13", s, None, trace))
    assert str(err.value) == LACKS["enumerate"] and trace.events == []
    with pytest.raises(cap.MissingCapability, match=r"^generator `enumerate` needs a task with legal-move"):
        check_settings(Writing(), Settings(search=SearchSettings(generator="enumerate", evaluator="prior")))
    check_settings(Game24(), Settings(search=SearchSettings(generator="enumerate",
                                                            evaluator="oracle")))  # has both: no error


def test_the_baselines_name_what_they_need() -> None:
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(run_baseline(Change(), "13", "io", None))  # type: ignore[arg-type]
    assert str(err.value) == ("baseline `io` needs a task with baseline prompts and an answer parser "
                              "(BaselinePrompts: io_prompt, cot_prompt, parse_answer); Change has none")
    class Prompts(Change):  # the baseline prompts, but no refine prompt
        def io_prompt(self, puzzle: str, chat: bool) -> str:
            return puzzle

        cot_prompt = io_prompt

        def parse_answer(self, puzzle: str, text: str) -> str | None:
            return text

    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(run_baseline(Prompts(), "13", "refine", None))  # type: ignore[arg-type]
    assert str(err.value) == ("baseline `refine` needs a task with a refine prompt "
                              "(RefinePrompt: refine_prompt(puzzle, attempt, feedback, chat)); Prompts has none")
    # Writing brings its own refine (OwnBaselines), which needs only its answer parser and a model.
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(run_baseline(Writing(), "Ab. Cd. Ef. Gh.", "refine", None))  # type: ignore[arg-type]
    assert str(err.value) == "baseline `refine` needs a model; pass an LMClient"
    with pytest.raises(cap.MissingCapability) as err:
        asyncio.run(run_baseline(Game24(), "4 9 10 13", "cot", None))  # type: ignore[arg-type]
    assert str(err.value) == "baseline `cot` needs a model; pass an LMClient"


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a model was loaded before the capability check")


@pytest.mark.parametrize("argv,message", [
    (["solve", "writing", "Ab. Cd. Ef. Gh.", "--generator", "enumerate", "--evaluator", "prior"],
     "tot: error: generator `enumerate` needs a task with legal-move enumeration "
     "(LegalMoves: legal_thoughts(state) -> thoughts); Writing has none"),
    (["solve", "sudoku", "1***|**1*|*1**|***1", "--generator", "enumerate-choice", "--evaluator", "oracle"],
     "tot: error: generator `enumerate-choice` needs a task with a choice prompt "
     "(ChoicePrompt: choice_prompt(state, thoughts, chat)); Sudoku has none"),
])
def test_tot_solve_prints_one_line_and_exits_2_before_loading_a_model(
        argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "make_client", _no_model)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == message + "\n"


class _ChangePlugin:
    """A user's plugin for the doc's task (what an entry point in ``tot.tasks`` would load)."""

    name, help = "change", "pay an amount with coins"

    def add_solve_args(self, parser: Any) -> None:
        parser.add_argument("amount")

    def puzzles(self, args: Any) -> list[tuple[str, str]]:
        return [("1", args.amount)]

    def make_task(self, args: Any) -> Any:
        return Change()

    def add_verify_args(self, parser: Any) -> None:
        parser.add_argument("amount")

    def verify(self, args: Any) -> tuple[bool, str]:
        return False, ""


@pytest.mark.parametrize("generator", ["enumerate", "propose", "sample"])
def test_tot_solve_on_a_users_task_names_what_it_lacks(
        generator: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real = cli.load_plugins()
    monkeypatch.setattr(cli, "load_plugins", lambda: {**real, "change": _ChangePlugin()})
    monkeypatch.setattr(cli, "make_client", _no_model)
    assert cli.main(["solve", "change", "13", "--generator", generator, "--evaluator", "oracle"]) == 2
    assert capsys.readouterr().err == f"tot: error: {LACKS[generator]}\n"


# ---- our tasks have the capabilities they are documented to have ------------------------------

CAPABILITY_NAMES: dict[str, type] = {
    "LegalMoves": cap.LegalMoves, "ProposePrompts": cap.ProposePrompts, "SamplePrompts": cap.SamplePrompts,
    "ValuePrompts": cap.ValuePrompts, "VotePrompt": cap.VotePrompt, "ChoicePrompt": cap.ChoicePrompt,
    "HasOracle": cap.HasOracle, "Restorable": cap.Restorable, "Unchecked": cap.Unchecked,
    "HasOptions": cap.HasOptions, "OwnGenerators": cap.OwnGenerators, "OwnEvaluators": cap.OwnEvaluators,
    "TunesParts": cap.TunesParts, "BaselinePrompts": bcap.BaselinePrompts, "RefinePrompt": bcap.RefinePrompt,
    "AnswerParser": bcap.AnswerParser, "OwnBaselines": bcap.OwnBaselines,
    "BaselineStops": bcap.BaselineStops, "BaselineTokens": bcap.BaselineTokens, "AnswerKey": bcap.AnswerKey,
    "ChainSteps": bcap.ChainSteps, "SoftScore": bcap.SoftScore, "AnswerRules": cap.AnswerRules,
    "ThoughtGrammar": cap.ThoughtGrammar, "LimitedMoves": cap.LimitedMoves, "AnswerGrammar": bcap.AnswerGrammar,
    "TrainingPrompts": cap.TrainingPrompts, "HasDistance": cap.HasDistance,
}

# Written by hand from what each task is documented to do (docs/task-protocol.md, the table).
EXPECTED: dict[str, set[str]] = {
    "game24": {"LegalMoves", "ProposePrompts", "SamplePrompts", "ValuePrompts", "VotePrompt", "ChoicePrompt",
               "HasOracle", "Restorable", "Unchecked", "HasOptions", "BaselinePrompts", "RefinePrompt",
               "BaselineStops", "ChainSteps", "AnswerParser", "ThoughtGrammar", "AnswerGrammar", "TrainingPrompts"},
    "sudoku": {"LegalMoves", "ProposePrompts", "SamplePrompts", "ValuePrompts", "VotePrompt", "HasOracle",
               "Restorable", "HasOptions", "TunesParts", "AnswerParser", "OwnBaselines", "BaselineStops",
               "ThoughtGrammar", "AnswerGrammar", "TrainingPrompts"},
    "crosswords": {"LegalMoves", "ProposePrompts", "SamplePrompts", "ValuePrompts", "VotePrompt", "HasOracle",
                   "Restorable", "HasOptions", "OwnEvaluators", "TunesParts", "AnswerRules", "ThoughtGrammar",
                   "LimitedMoves"},
    "writing": {"ProposePrompts", "SamplePrompts", "ValuePrompts", "VotePrompt", "HasOracle", "Unchecked",
                "HasOptions", "OwnGenerators", "TunesParts", "BaselinePrompts", "BaselineStops",
                "BaselineTokens", "SoftScore", "AnswerParser", "OwnBaselines"},
    "planning": {"LegalMoves", "ProposePrompts", "SamplePrompts", "ValuePrompts", "VotePrompt", "HasOracle",
                 "Restorable", "HasOptions", "OwnEvaluators", "ThoughtGrammar", "TrainingPrompts", "HasDistance"},
}

OUR_TASKS = {"game24": Game24, "sudoku": Sudoku, "crosswords": Crosswords, "writing": Writing,
             "planning": Planning}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_of_our_tasks_has_exactly_its_documented_capabilities(name: str) -> None:
    task = OUR_TASKS[name]()
    assert isinstance(task, Task)
    has = {cname for cname, part in CAPABILITY_NAMES.items() if cap.has(task, part)}
    assert has == EXPECTED[name]


def test_the_capability_list_is_the_modules_and_each_has_a_message() -> None:
    assert set(CAPABILITY_NAMES.values()) == set(cap.CAPABILITIES)  # the baselines' registered in it too
    assert set(bcap.BASELINE_CAPABILITIES) <= set(cap.CAPABILITIES)


def test_the_declared_model_need_agrees_with_what_the_cli_loads() -> None:
    for g in GENERATORS:
        for e in EVALUATORS:
            declared = cap.needs_of(make_generator(g)).model or cap.needs_of(make_evaluator(e)).model
            assert needs_model(Settings(search=SearchSettings(generator=g, evaluator=e))) == declared, (g, e)


@pytest.mark.parametrize("argv,message", [
    (["writing", "Ab. Cd. Ef. Gh.", "--methods", "tot-bfs:enumerate:prior"],
     "generator `enumerate` needs a task with legal-move enumeration "
     "(LegalMoves: legal_thoughts(state) -> thoughts); Writing has none"),
    (["sudoku", "1***|**1*|*1**|***1", "--methods", "refine"],
     "baseline `refine` needs a task with baseline prompts and an answer parser "
     "(BaselinePrompts: io_prompt, cot_prompt, parse_answer); Sudoku has none"),
    (["sudoku", "1***|**1*|*1**|***1", "--no-gate", "--methods", "tot-bfs:enumerate:oracle"],
     "method `tot-bfs:enumerate:oracle:no-gate` (no gate) needs a task with an unchecked mode "
     "(Unchecked: apply_unchecked(state, thought)); Sudoku has none"),
])
def test_tot_bench_names_what_a_method_needs_before_it_writes_anything(
        argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    assert cli.main(["bench", *argv, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"tot: error: {message}\n"
    assert not out.exists()
