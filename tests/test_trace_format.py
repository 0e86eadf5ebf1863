"""One trace format: the documented schema is the reader's table; every writer writes only what it
documents; headers mark each appended part; old traces without a header still read; every kind of
malformed input is one line, naming the file and line, through every command that reads traces."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any, Callable

import pytest

from solver.lm.base import Completion, LMError
from solver.lm.client import LMClient
from solver.run import SearchSettings, Settings, make_client, solve
from solver.searches import get_search
from solver.tools.cli import main
from solver.trace import Trace
from solver.trace_format import EVENTS, FIELDS, check_event
from solver.trace_reader import check_events, parse_trace, read_trace
from tasks.game24.task import Game24
from tasks.sudoku.task import Sudoku
from tests.fakes import ScriptedBackend

DOC = Path(__file__).resolve().parent.parent / "docs" / "trace-format.md"
HEADER = {"event": "trace", "format": "verified-tot-trace", "version": 2}


# ---- the page and the table agree --------------------------------------------------------------

def _doc_rows(section: str) -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in ln.strip().strip("|").split(" | ")] for ln in body.splitlines()
            if ln.startswith("| `")]
    assert rows, section
    return rows


def test_the_documented_fields_are_the_table() -> None:
    doc = {re.fullmatch(r"`(\w+)`", r[0]).group(1): (r[1], r[2]) for r in _doc_rows("Fields")}  # type: ignore[union-attr]
    assert doc == FIELDS


def test_the_documented_events_are_the_table() -> None:
    def names(cell: str) -> tuple[tuple[str, bool], ...]:
        return tuple((m.group(1), bool(m.group(2))) for m in re.finditer(r"`(\w+)`( \(may be null\))?", cell))

    doc = {r[0].strip("`"): (names(r[1]), names(r[2]), r[3]) for r in _doc_rows("Events")}
    table = {k: (tuple((f, f in e.nullable) for f in e.required), tuple((f, False) for f in e.optional), e.meaning)
             for k, e in EVENTS.items()}
    assert doc == table
    for e in EVENTS.values():  # every field an event names has a type
        assert set(e.required + e.optional + e.nullable) <= set(FIELDS)


# ---- every writer writes only documented events and fields ---------------------------------------

def _documented(events: list[dict[str, Any]]) -> set[str]:
    seen = set()
    for ev in events:
        assert check_event(ev) is None, ev
        spec = EVENTS[ev["event"]]  # KeyError: an undocumented event
        extra = set(ev) - {"event", "t"} - set(spec.required) - set(spec.optional)
        assert not extra, (ev["event"], extra)
        seen.add(ev["event"])
    return seen


def _propose(prompt: str, params: Any, i: int) -> str:
    return "4 + 9 = 14 (left: 10 13 14)\n10 - 4 = 6 (left: 6 9 13)\n13 - 9 = 4 (left: 4 6)\n4 * 6 = 24 (left: 24)"


def test_every_writer_writes_only_documented_events_and_fields(tmp_path: Path) -> None:
    seen: set[str] = set()
    for method in ("tot-complete", "tot-bfs", "tot-dfs", "long"):
        s = Settings(search=SearchSettings(method=method, generator="propose", evaluator="oracle",
                                           options=get_search(method).options_from({"breadth": 2})))
        trace = Trace()
        asyncio.run(solve(Game24(), "4 9 10 13", s, make_client(s, ScriptedBackend(_propose)), trace))
        seen |= _documented(trace.events)
    for method, puzzle, gate in (("tot-bfs", "4 9 10 13", False), ("tot-complete", "1 1 1 1", True),
                                 ("tot-dfs", "1 1 1 1", True)):
        s = Settings(search=SearchSettings(method=method, generator="enumerate", evaluator="random", gate=gate,
                                           options=get_search(method).options_from({"breadth": 1})))
        trace = Trace()
        asyncio.run(solve(Game24("reject"), puzzle, s, None, trace))
        seen |= _documented(trace.events)

    # A crossword enumeration cut by --candidates writes the incomplete event.
    from lexicon import build_lexicon
    from tasks.crosswords import Crosswords

    words = ["AGEND", "MOTOR", "ARTSY", "SALLE", "SLEER", "AMASS", "GORAL", "ETTLE", "NOSLE", "DRYER", "ADAMS"]
    board = "AGENDMOTORARTSYSALLESLEER"
    puzzle = json.dumps({"clues": [f"clue {i}" for i in range(10)], "board": board})
    s = Settings(search=SearchSettings(method="tot-dfs", generator="enumerate", evaluator="oracle"))
    trace = Trace()
    asyncio.run(solve(Crosswords(build_lexicon(sources=(), user_words=words), candidates=1), puzzle, s, None, trace))
    seen |= _documented(trace.events)

    def fail(prompt: str, params: Any, i: int) -> str:
        raise LMError("the server is down")

    s = Settings(search=SearchSettings(method="tot-bfs", generator="propose", evaluator="oracle"))
    trace = Trace()
    asyncio.run(solve(Game24(), "4 9 10 13", s, make_client(s, ScriptedBackend(fail)), trace))
    seen |= _documented(trace.events)

    class Thinks(ScriptedBackend):  # a reasoning model: thinking beside each answer
        async def complete(self, prompt: str, params: Any) -> Completion:
            out = await super().complete(prompt, params)
            out.thinking, out.reasoning_tokens = ["13 - 9 = 4? no."] * len(out.texts), 4
            return out

    s = Settings(search=SearchSettings(method="tot-bfs", generator="propose", evaluator="oracle"))
    trace = Trace()
    asyncio.run(solve(Game24(), "4 9 10 13", s, make_client(s, Thinks(_propose)), trace))
    seen |= _documented(trace.events)

    from solver.baselines import BaselineConfig, run_baseline

    answers = iter([" (10 - 4) * (13 - 8) = 24", " (10 - 4) * (13 - 9) = 24"])
    client = LMClient(ScriptedBackend(lambda p, g, i: next(answers)))
    trace = Trace()
    asyncio.run(run_baseline(Game24(), "4 9 10 13", "io-best", client, BaselineConfig(samples=2), trace))
    seen |= _documented(trace.events)

    from tasks.sudoku.generator import generate

    puzzle = generate(4, 3).text
    for reply in ("no board here", "1234|3412|2143|4321"):
        trace = Trace()
        client = LMClient(ScriptedBackend(lambda p, g, i, r=reply: r))  # type: ignore[misc]
        asyncio.run(run_baseline(Sudoku(), puzzle, "zero-shot", client, trace=trace))  # Sudoku's own baseline
        seen |= _documented(trace.events)
    assert seen >= set(EVENTS) - {"trace"}, set(EVENTS) - seen


def test_the_official_log_importers_build_documented_events() -> None:
    from tasks.game24.official_logs import entry_events
    from tests.test_audit import OFFICIAL_ENTRY

    _documented(entry_events(OFFICIAL_ENTRY))
    from tasks.crosswords.official_logs import import_log as crosswords_log

    log = Path(__file__).parent / "data" / "tot_logs" / "crosswords_infoss_dfs_prune.json"
    try:
        events = crosswords_log(log)
    except ValueError as exc:  # the paper's mini0505.json is not shipped everywhere
        pytest.skip(str(exc))
    _documented(events)


# ---- headers, appended parts, old traces, killed runs ---------------------------------------------

def _run(path: Path | None, puzzle: str = "4 9 10 13", method: str = "tot-bfs") -> list[dict[str, Any]]:
    s = Settings(search=SearchSettings(method=method, generator="enumerate", evaluator="oracle",
                                       options=get_search(method).options_from({"breadth": 2})))
    trace = Trace(path)
    asyncio.run(solve(Game24(), puzzle, s, None, trace))
    trace.close()
    return trace.events


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]


def test_each_writer_heads_its_part_and_the_reader_returns_only_events(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = _run(path)
    second = _run(path, "1 1 4 6", "tot-dfs")
    lines = _lines(path)
    assert [i for i, ev in enumerate(lines) if ev["event"] == "trace"] == [0, len(first) + 1]
    assert lines[0] == HEADER and lines[len(first) + 1] == HEADER
    assert all(ev["event"] != "trace" for ev in first + second)  # never in memory
    assert read_trace(path) == first + second
    assert Trace(tmp_path / "unused.jsonl").events == [] and not (tmp_path / "unused.jsonl").read_text()


def test_a_trace_written_before_the_version_existed_reads_the_same(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    events = _run(path) + _run(path, "1 1 4 6")
    old = tmp_path / "old.jsonl"
    old.write_text("".join(ln + "\n" for ln in path.read_text().splitlines() if '"event": "trace"' not in ln))
    assert '"version"' not in old.read_text()
    assert read_trace(old) == events == read_trace(path)
    outputs = []
    for p in (path, old):
        capsys.readouterr()
        assert main(["audit", str(p), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        for g in report["groups"]:
            g.pop("source")
        outputs.append(report)
        assert main(["verify", "--trace", str(p)]) == 0
    assert outputs[0] == outputs[1]


def test_a_killed_runs_half_line_is_skipped_even_when_another_run_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = _run(path)
    text = path.read_text()
    path.write_text(text[:-30])  # killed while writing its last line
    assert read_trace(path) == first[:-1]
    second = _run(path, "1 1 4 6")
    lines = path.read_text().splitlines()
    cut = next(i for i, ln in enumerate(lines) if ln.startswith('{"event": "trace"') and i) - 1
    assert json.loads(lines[cut + 1]) == {**HEADER, "previous_line_cut": True}
    assert read_trace(path) == first[:-1] + second
    assert main(["verify", "--trace", str(path)]) == 0
    # The same broken line under a header that does not say so is an error: only a cut is forgiven.
    lines[cut + 1] = json.dumps(HEADER)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))} line {cut + 1} is not JSON"):
        read_trace(path)


# ---- malformed input: one line, naming the file and line, through every reader --------------------

def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


MALFORMED: list[tuple[str, Callable[[list[str]], list[str]], str]] = [
    ("not JSON", lambda ls: ls[:5] + ['{"event": "keep", "node": 3'] + ls[5:], "line 6 is not JSON"),
    ("not an event", lambda ls: ls[:2] + ['["keep", 3]'] + ls[2:], "line 3 is not a trace event"),
    ("wrong field type", lambda ls: [ln.replace('"depth": 1,', '"depth": "one",') for ln in ls],
     "has 'depth' that is not a whole number"),
    ("bool for a number", lambda ls: [ln.replace('"score": 1.0', '"score": true') for ln in ls],
     "has 'score' that is not a number"),
    ("required field missing", lambda ls: [ln.replace('"puzzle": "4 9 10 13", ', '') for ln in ls],
     "line 2 is a 'start' event without 'puzzle'"),
    ("required field null", lambda ls: ls[:3] + ['{"event": "root", "node": null, "state": "1 2"}'] + ls[3:],
     "line 4 is a 'root' event without 'node'"),
    ("unknown version", lambda ls: ls + ['{"event": "trace", "format": "verified-tot-trace", "version": 3}'] + ls[1:],
     "trace format version 3 is newer than this reader"),
    ("another format", lambda ls: ['{"event": "trace", "format": "other", "version": 1}'] + ls[1:],
     "line 1 is a header of format 'other'"),
    ("version of the wrong type", lambda ls: ['{"event": "trace", "format": "verified-tot-trace", "version": "1"}']
     + ls[1:], "line 1 has 'version' that is not a whole number"),
]


def _commands(path: Path) -> list[list[str]]:
    return [["show", str(path), "--text"], ["show", str(path), "-o", str(path.with_suffix(".html"))],
            ["audit", str(path)], ["verify", "--trace", str(path)]]


def _one_line_error(cmd: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    code = main(cmd)
    cap = capsys.readouterr()
    assert code == 2 and cap.err.startswith("tot: error: ") and cap.err.count("\n") == 1, (cmd, code, cap.err)
    assert "Traceback" not in cap.err + cap.out
    return cap.err


@pytest.mark.parametrize("name, edit, needle", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_traces_are_one_line_errors_naming_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   name: str, edit: Any, needle: str) -> None:
    good = tmp_path / "good.jsonl"
    _run(good)
    lines = good.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(ln + "\n" for ln in edit(lines)))
    assert bad.read_text() != good.read_text(), name
    for cmd in _commands(bad):
        err = _one_line_error(cmd, capsys)
        assert f"{bad} line " in err and needle in err, (name, cmd, err)
    with pytest.raises(ValueError, match=re.escape(needle)):
        parse_trace(bad.read_text(), "bad.jsonl")


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo", "oversize", "not UTF-8"])
def test_files_that_are_not_readable_traces_are_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str], kind: str) -> None:
    path = tmp_path / "t.jsonl"
    needle = {"missing": "trace file not found", "directory": "is a directory", "fifo": "is not a regular file",
              "oversize": "at most 1000 are read", "not UTF-8": "is not UTF-8"}[kind]
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        _fifo(path)  # reading it would block forever: it must be refused before it is opened
    elif kind == "oversize":
        _run(path)
        monkeypatch.setattr("solver.trace_reader.MAX_TRACE_FILE", 1000)
    elif kind == "not UTF-8":
        path.write_bytes(b'{"event": "start", "task": "\xff"}\n')
    for cmd in _commands(path):
        err = _one_line_error(cmd, capsys)
        assert str(path) in err and needle in err, (kind, cmd, err)


def test_events_given_in_memory_are_checked_the_same_way() -> None:
    events = _run(None)
    assert check_events(events) == events
    assert check_events([HEADER, *events]) == events
    with pytest.raises(ValueError, match=r"^events event 2 has 'node' that is not a whole number: not a trace$"):
        check_events([events[0], {**events[1], "node": "0"}])
    with pytest.raises(ValueError, match="version 9 is newer"):
        check_events([{**HEADER, "version": 9}])
    with pytest.raises(ValueError, match="event 1 is not a trace event"):
        check_events([["start"]])


def test_unknown_events_and_fields_are_read_not_refused(tmp_path: Path) -> None:
    events = _run(None)
    extra = [events[0], {"event": "note", "text": "a later writer's event"}, {**events[1], "colour": "red"}]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + "".join(json.dumps(e) + "\n" for e in extra))
    assert read_trace(path) == extra
    path.write_text(json.dumps({"event": "note", "node": "x"}) + "\n")  # a known field keeps its type
    with pytest.raises(ValueError, match="'node' that is not a whole number"):
        read_trace(path)


def test_the_event_names_writers_may_use_are_the_formats() -> None:
    """Trace.emit takes an EventName (mypy refuses any other name): exactly the format's events but
    its header; the model layer's own two are among them."""
    from typing import get_args

    from solver.lm.session import LmEvent
    from solver.trace_format import EVENTS, HEADER_EVENT, EventName

    assert set(get_args(EventName)) == set(EVENTS) - {HEADER_EVENT}
    assert set(get_args(LmEvent)) <= set(get_args(EventName))
