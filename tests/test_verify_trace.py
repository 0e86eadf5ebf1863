"""``tot verify --trace``: a trace is a certificate. Real traces re-check (exit 0); traces tampered
with in each way (a thought, a state, an answer, a verdict, the rule set, a truncated or garbage
line, wrong field types, no header) give exit 1 with the first mismatch or exit 2, in one line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from solver.run import SearchSettings, Settings, make_client, solve
from solver.searches.tot import BfsOptions
from solver.task_capabilities import HasOptions, find
from solver.tools.cli import main
from solver.trace import Trace
from tasks.game24.task import Game24
from tasks.sudoku.task import Sudoku
from tasks.writing.task import Writing
from tests.fakes import ScriptedBackend

LINE = "The kettle began to sing. Nobody had fed the goldfish. Maria laughed until she cried. The storm passed."


def _game24_with_rejections(path: Path, policy: str = "reject") -> None:
    """A scripted model proposes right and wrong steps: the trace holds rejected thoughts too."""
    def respond(prompt: str, params: Any, i: int) -> str:
        return ("4 + 9 = 14 (left: 10 13 14)\n10 - 4 = 6 (left: 6 9 13)\n13 - 9 = 4 (left: 4 4 10)\n"
                "6 * 4 = 24 (left: 24)\n13 - 9 = 4 (left: 4 6)\n4 * 6 = 24 (left: 24)\n9 / 0 = 1 (left: 1)")

    s = Settings(search=SearchSettings(generator="propose", evaluator="oracle", options=BfsOptions(breadth=3)))
    client = make_client(s, ScriptedBackend(respond))
    trace = Trace(path)
    asyncio.run(solve(Game24(policy), "4 9 10 13", s, client, trace))  # type: ignore[arg-type]
    trace.close()


def _writing_paragraphs(path: Path) -> None:
    def respond(prompt: str, params: Any, i: int) -> str:
        wanted = prompt.rsplit('(ends with "', 1)[-1].split('"', 1)[0]  # the last line asks for this ending
        return f"Some words here. {wanted}" if i % 2 == 0 else "A paragraph that ends wrongly."

    s = Settings(search=SearchSettings(generator="sample", evaluator="oracle", k=2, options=BfsOptions(breadth=1)))
    client = make_client(s, ScriptedBackend(respond))
    trace = Trace(path)
    asyncio.run(solve(Writing("paragraphs"), LINE, s, client, trace))
    trace.close()


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("traces") / "run.jsonl"
    _game24_with_rejections(path)
    assert main(["solve", "sudoku", "--size", "4", "--seed", "3", "--method", "long", "--generator", "enumerate",
                 "--evaluator", "oracle", "--trace", str(path)]) == 0
    _game24_with_rejections(path, "repair")
    _writing_paragraphs(path)
    return path


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]


def _verify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", "--trace", str(path)])
    cap = capsys.readouterr()
    out = cap.out + cap.err
    assert out.count("\n") == 1 and "Traceback" not in out, out  # one line, always
    return code, out


def test_real_traces_verify(trace_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _events(trace_file)
    assert {e["verdict"] for e in events if e["event"] == "verdict"} >= {"invalid", "valid", "solved"}
    assert [e["task"] for e in events if e["event"] == "start"] == ["game24", "sudoku", "game24", "writing"]
    code, out = _verify(trace_file, capsys)
    assert code == 0 and out.startswith("trace verified: 4 run(s)")
    ends = [e for e in events if e["event"] == "end"]
    assert all(e["verified"] for e in ends), ends  # every run found its answer, so each is re-verified


def _tamper(src: Path, dst: Path, pick: Any, change: Any) -> Path:
    events = _events(src)
    k = next(i for i, e in enumerate(events) if pick(e))
    change(events[k])
    dst.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return dst


def _set(key: str, value: Any) -> Any:
    return lambda e: e.__setitem__(key, value)


@pytest.mark.parametrize("name, pick, change, needle", [
    ("accepted thought", lambda e: e["event"] == "proposal" and "node" in e and e["thought"].startswith("10 - 4"),
     _set("thought", "10 - 4 = 7 (left: 7 9 13)"), "the gate now rejects the accepted thought"),
    ("rejected thought", lambda e: e["event"] == "verdict" and e["verdict"] == "invalid",
     _set("thought", "10 - 4 = 6 (left: 6 9 13)"), "the gate now accepts the rejected thought"),
    ("state", lambda e: e["event"] == "verdict" and e["verdict"] == "valid", _set("state", "6 9 14"),
     "the trace says '6 9 14'"),
    ("answer", lambda e: e["event"] == "answer", _set("answer", "(10 - 4) * (13 - 9) + 0"), "answer is"),
    ("verdict", lambda e: e["event"] == "verdict" and e["verdict"] == "solved", _set("verdict", "valid"),
     "recorded as valid, the gate now says solved"),
    ("verified flag", lambda e: e["event"] == "end" and e["verified"], _set("verified", False),
     "the trace says verified=False"),
    ("report", lambda e: e["event"] == "answer",
     lambda e: e["report"]["checks"][-1].__setitem__("passed", False), "recorded report differs"),
    ("rule set", lambda e: e["event"] == "start" and e["task"] == "sudoku", _set("options", {"rules": "latin"}),
     "run 2"),
    ("policy", lambda e: e["event"] == "start" and e.get("options", {}).get("policy") == "repair",
     _set("options", {"policy": "reject"}), "run 3"),
    ("writing paragraph", lambda e: e["event"] == "proposal" and "node" in e and "kettle" in e["thought"],
     _set("thought", "Some words here. The kettle began to sin."), "the gate now rejects"),
    ("returned answer", lambda e: e["event"] == "end" and e.get("answer"), _set("answer", "4 * 9 - 10 - 13 + 23"),
     "which no answer event re-verified"),
])
def test_tampered_traces_fail_with_the_first_mismatch(trace_file: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str], name: str, pick: Any,
                                                      change: Any, needle: str) -> None:
    bad = _tamper(trace_file, tmp_path / "bad.jsonl", pick, change)
    code, out = _verify(bad, capsys)
    assert code == 1 and out.startswith("mismatch: ") and needle in out, (name, out)


@pytest.mark.parametrize("name, edit, needle", [
    ("truncated line", lambda ls: ls[:3] + [ls[3][: len(ls[3]) // 2]] + ls[4:], "line 4 is not JSON"),
    ("garbage", lambda ls: ["{{{ not json"] + ls, "line 1 is not JSON"),
    ("not an event", lambda ls: ls[:2] + ["[1, 2, 3]"] + ls[2:], "line 3 is not a trace event"),
    ("wrong type", lambda ls: [ln.replace('"node": 0,', '"node": [0],') for ln in ls], "'node'"),
    # ls[0] is the writer's format header, ls[1] the first run's header
    ("no header", lambda ls: ls[:1] + ls[2:], "before any run header"),
    ("unknown task", lambda ls: ls[:1] + [ls[1].replace('"game24"', '"chess"', 1)] + ls[2:], "unknown task 'chess'"),
    ("empty", lambda ls: [], "no run header"),
    ("dangling parent", lambda ls: ls[:2] + [json.dumps({"event": "verdict", "parent": 99, "thought": "1 + 1 = 2",
                                                         "verdict": "invalid"})], "no earlier event created"),
])
def test_malformed_traces_exit_2_in_one_line(trace_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             name: str, edit: Any, needle: str) -> None:
    lines = trace_file.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["event"] == "trace" and json.loads(lines[1])["event"] == "start"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(ln + "\n" for ln in edit(lines)), encoding="utf-8")
    code, out = _verify(bad, capsys)
    assert code == 2 and out.startswith("tot: error:") and needle in out, (name, out)
    for cmd in (["show", str(bad), "--text"], ["audit", str(bad)]):  # the other trace readers agree
        capsys.readouterr()
        assert main(cmd) in (0, 2)
        err = capsys.readouterr().err
        assert "internal error" not in err and err.count("\n") <= 1


def test_a_killed_runs_half_line_is_not_an_error(trace_file: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    text = trace_file.read_text(encoding="utf-8")
    cut = tmp_path / "killed.jsonl"
    cut.write_text(text[: len(text) - 40], encoding="utf-8")  # the last line, half written, no newline
    code, out = _verify(cut, capsys)
    assert code == 0 and "cut off before their end event" in out


def test_verify_needs_a_task_or_a_trace(capsys: pytest.CaptureFixture[str], trace_file: Path) -> None:
    assert main(["verify"]) == 2
    assert main(["verify", "--trace", str(trace_file), "game24", "1 2 3 4", "1*2*3*4"]) == 2
    assert "not both" in capsys.readouterr().err


def test_a_sudoku_trace_records_its_rule_set(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    for extra in ([], ["--latin"]):
        assert main(["solve", "sudoku", "--size", "4", "--seed", "1", "--generator", "enumerate", "--evaluator",
                     "oracle", "--trace", str(path), *extra]) == 0
    starts = [e for e in _events(path) if e["event"] == "start"]
    assert [s["options"] for s in starts] == [{"rules": "standard"}, {"rules": "latin"}]
    answers = [e for e in _events(path) if e["event"] == "answer"]
    assert "2x2 boxes" in answers[0]["report"]["rules"] and "Latin square" in answers[1]["report"]["rules"]
    assert find(Sudoku(), HasOptions).options() == {"rules": "standard"}


def test_an_answer_event_claiming_verified_is_re_verified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A keyed crossword whose search stops at a wrong complete grid: the answer event says
    # verified=false. Claiming verified=true (and dropping the report) must be caught by re-checking
    # the answer itself, not only by comparing the recorded report.
    puzzle = tmp_path / "p.json"
    puzzle.write_text(json.dumps({"clues": [f"c{k}" for k in range(10)], "board": "AGENDMOTORARTSYSALLESLEER"}))
    path = tmp_path / "cw.jsonl"
    assert main(["solve", "crosswords", "--puzzle", str(puzzle), "--generator", "enumerate", "--evaluator", "prior",
                 "--trace", str(path)]) == 0
    answers = [e for e in _events(path) if e["event"] == "answer"]
    assert answers and answers[-1]["verified"] is False and answers[-1]["accepted"] is True

    def claim(e: dict[str, Any]) -> None:
        e["verified"] = True
        del e["report"]

    bad = _tamper(path, tmp_path / "bad.jsonl", lambda e: e["event"] == "answer", claim)
    code, out = _verify(bad, capsys)
    assert code == 1 and "the trace says verified=True, the answer check says False" in out


def test_garbled_field_types_never_end_in_an_internal_error(trace_file: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import random

    events = _events(trace_file)[:300]
    values: list[Any] = [None, [1], {"a": 1}, "x", -1, 1.5, True, 10**30, "", "1 2", 0]
    rng = random.Random(7)
    for trial in range(25):
        garbled = [dict(e) for e in events]
        for _ in range(3):
            e = rng.choice(garbled)
            e[rng.choice(sorted(e))] = rng.choice(values)
        bad = tmp_path / f"g{trial}.jsonl"
        bad.write_text("".join(json.dumps(e) + "\n" for e in garbled), encoding="utf-8")
        for cmd in (["verify", "--trace", str(bad)], ["show", str(bad), "--text"], ["audit", str(bad)]):
            capsys.readouterr()
            code = main(cmd)
            err = capsys.readouterr().err
            assert code in (0, 1, 2) and "internal error" not in err, (cmd, err)


def test_a_baseline_trace_re_checks_its_raw_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from solver.baselines import BaselineConfig, run_baseline
    from solver.lm.client import LMClient

    answers = iter([" (10 - 4) * (13 - 8) = 24", " (10 - 4) * (13 - 9) = 24"])
    client = LMClient(ScriptedBackend(lambda p, g, i: next(answers)))
    path = tmp_path / "b.jsonl"
    trace = Trace(path)
    res = asyncio.run(run_baseline(Game24(), "4 9 10 13", "io-best", client, BaselineConfig(samples=2), trace))
    trace.close()
    assert res.verified
    code, _ = _verify(path, capsys)
    assert code == 0
    bad = _tamper(path, tmp_path / "bad.jsonl", lambda e: e["event"] == "raw_answer" and not e["valid"],
                  _set("valid", True))
    code, out = _verify(bad, capsys)
    assert code == 1 and "the trace says valid=True" in out


def test_audit_and_show_judge_with_the_rule_set_the_run_used(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # This Latin-square puzzle has no completion under the standard rules (its root is unsolvable
    # with boxes), so an oracle with default options would call every state unsolvable.
    path = tmp_path / "latin.jsonl"
    assert main(["solve", "sudoku", "--size", "4", "--seed", "1", "--latin", "--generator", "enumerate",
                 "--evaluator", "oracle", "--trace", str(path)]) == 0
    puzzle = next(e["puzzle"] for e in _events(path) if e["event"] == "start")
    from verifiers.sudoku import parse_board, solutions

    assert solutions(parse_board(puzzle), boxes=True) == [] and solutions(parse_board(puzzle), boxes=False)
    capsys.readouterr()
    assert main(["audit", str(path), "--json"]) == 0
    [group] = json.loads(capsys.readouterr().out)["groups"]
    assert group["options"] == {"rules": "latin"} and group["puzzles_solvable"] == 1
    from solver.tools.plugins import load_plugins
    from solver.tools.show import load_trees

    [tree] = load_trees(str(path), plugins=load_plugins())
    root = tree.nodes[tree.root]  # type: ignore[index]
    assert root.solvable is True
