"""Security: API keys never reach traces, caches, logs, output or error messages; model text
never reaches eval, exec, compile-for-execution, sympy's parsers or pickle; cache and trace files
are plain data (JSON values in sqlite, JSON lines)."""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import sqlite3
import sys
import traceback
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

from solver.evaluators import Value, Vote
from solver.expansion import rule_failure
from solver.generators import Propose, Sample
from solver.lm.base import GenParams, LMError
from solver.lm.client import LMClient
from solver.lm.openai_backend import OpenAIBackend
from solver.searches import run_search
from solver.task_capabilities import ProposePrompts, find
from solver.tools.cli import main
from solver.trace import Trace
from solver.trace_reader import read_trace
from tasks.game24 import Game24
from tests.fake_server import FakeOpenAIServer
from tests.fakes import ScriptedBackend
from verifiers.verdict import Invalid

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-tot-test-9f8e7d6c5b4a39281706"  # a made-up key, unique enough to grep for


# ---- API keys -------------------------------------------------------------------------------------


def _scan(where: str, blob: bytes | str) -> None:
    text = blob.decode("utf-8", "replace") if isinstance(blob, bytes) else blob
    assert KEY not in text, f"the API key leaked into {where}"
    assert KEY[8:] not in text, f"part of the API key leaked into {where}"


@pytest.mark.parametrize("modes", [["ok"], ["echo-key"], ["500"], ["ok", "echo-key", "malformed", "ok"]],
                         ids=["ok", "server-quotes-key", "server-error", "mixed"])
def test_api_key_never_reaches_trace_cache_logs_or_output(modes: list[str], tmp_path: Path, capsys: Any,
                                                         caplog: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    caplog.set_level(logging.DEBUG)  # openai's and the HTTP library's own debug logging included
    trace, cache = tmp_path / "run.jsonl", tmp_path / "cache.sqlite"
    with FakeOpenAIServer(modes, text="13 - 9 = 4 (left: 4 4 10)") as srv:
        # --grammar off: the scripted modes go to the run's own requests, not to the grammar probe
        # (whose failures are not recorded anywhere, so they cannot leak the key).
        code = main(["solve", "game24", "4 9 10 13", "--base-url", srv.url, "--model", "fake-model",
                     "--generator", "propose", "--evaluator", "value", "--retries", "1", "--json",
                     "--trace", str(trace), "--cache", str(cache), "--grammar", "off"])
        sent = [r.headers.get("authorization", "") for r in srv.requests]
    out = capsys.readouterr()
    assert code == 0, out.err
    assert sent and all(h == f"Bearer {KEY}" for h in sent)  # the key was really in play
    _scan("stdout", out.out)
    _scan("stderr", out.err)
    _scan("the logs", caplog.text + "".join(str(r.args) for r in caplog.records))
    _scan("the trace file", trace.read_bytes())
    _scan("the cache file", cache.read_bytes())
    for side in cache.parent.glob("cache.sqlite*"):  # journal or WAL files, if any
        _scan(side.name, side.read_bytes())
    if "echo-key" in modes:  # the server's error quoted the key; the recorded error must not
        errors = [e["error"] for e in read_trace(trace) if e["event"] == "lm_error"]
        assert errors and all("***" in e for e in errors if "bad request" in e)


def test_explicit_key_is_scrubbed_from_errors_even_without_the_environment(monkeypatch: Any) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def go(url: str) -> str:
        backend = OpenAIBackend("m", url, api_key=KEY, max_retries=0)
        try:
            await backend.complete("hi", GenParams())
        except LMError as exc:
            # What a log line or a TOT_DEBUG traceback would show of the failure.
            return repr(exc) + "".join(traceback.format_exception(exc))
        finally:
            await backend.close()
        raise AssertionError("expected a failure")

    with FakeOpenAIServer(["echo-key"]) as srv:
        message = asyncio.run(go(srv.url))
    assert "bad request" in message and "***" in message
    _scan("the error message", message)


def test_backend_object_does_not_show_the_key() -> None:
    backend = OpenAIBackend("m", "http://127.0.0.1:9/v1", api_key=KEY)
    try:
        _scan("repr of the backend", repr(backend) + str(backend) + backend.name)
    finally:
        asyncio.run(backend.close())


# ---- model text never executed ---------------------------------------------------------------------

# Calls that would run or unpickle text: none may appear in the library's source at all.
_FORBIDDEN_NAMES = {"eval", "exec", "compile", "__import__", "sympify", "parse_expr", "S"}
_FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "cloudpickle", "joblib"}


def _library_files() -> list[Path]:
    return sorted(p for d in ("solver", "verifiers", "tasks", "lexicon") for p in (ROOT / d).rglob("*.py"))


def _problems(source: str, where: str) -> list[str]:
    problems = []
    for node in ast.walk(ast.parse(source, where)):
        at = f"{where}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in _FORBIDDEN_NAMES:
                problems.append(f"{at} calls {f.id}()")
            if isinstance(f, ast.Attribute) and f.attr in {"sympify", "parse_expr"}:
                problems.append(f"{at} calls .{f.attr}()")
            if (isinstance(f, ast.Attribute) and f.attr in {"load", "loads", "safe_load", "unsafe_load"}
                    and isinstance(f.value, ast.Name) and f.value.id in _FORBIDDEN_MODULES | {"yaml"}):
                problems.append(f"{at} calls {f.value.id}.{f.attr}()")
        elif isinstance(node, ast.Import):
            problems += [f"{at} imports {a.name}" for a in node.names if a.name.split(".")[0] in _FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _FORBIDDEN_MODULES:
            problems.append(f"{at} imports from {node.module}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sympy"):
            problems += [f"{at} imports {a.name} from sympy" for a in node.names
                         if a.name in {"sympify", "parse_expr", "S"}]
    return problems


def test_source_has_no_eval_exec_pickle_or_sympy_parsing() -> None:
    files = _library_files()
    assert files, "no source found"
    problems = [p for path in files
                for p in _problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not problems, "\n".join(problems)


def test_source_scan_would_catch_each_forbidden_call() -> None:
    bad = ["eval(text)", "exec(text)", "compile(text, 'x', 'exec')", "import pickle", "pickle.loads(b)",
           "from sympy.parsing.sympy_parser import parse_expr", "sympy.sympify(text)", "from sympy import sympify",
           "yaml.load(text)", "__import__(text)"]
    for line in bad:
        assert _problems(line, "snippet"), line
    assert not _problems("import re\nre.compile('x')\nast.parse(t)\njson.loads(t)", "snippet")


MARKER = "tot_pwned_marker_7c1d"
HOSTILE_LINES = [
    f"__import__('os').system('echo {MARKER}')", f"{MARKER} = 1", f"eval('{MARKER}')",
    f"(lambda: {MARKER})()", f"4 * 6 = 24 (left: {MARKER})", f"Answer: {MARKER}", f"{MARKER}; 24",
    f"exec({MARKER!r})", f"pickle.loads({MARKER!r})", f"The best choice is {MARKER}",
    f"13 - 9 = 4 (left: 4 4 10) # {MARKER}", f"sure {MARKER}",
]

_armed = False
_seen: list[str] = []


def _code_mentions_marker(code: CodeType) -> bool:
    names = code.co_names + code.co_varnames + tuple(str(c) for c in code.co_consts)
    return any(MARKER in n for n in names) or any(
        isinstance(c, CodeType) and _code_mentions_marker(c) for c in code.co_consts)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Audit hooks see every exec/eval of code, every unpickled class and every marshal load in
    # the process, however they were reached. ast.parse also raises "compile", but it only builds
    # a tree (the answer checker's whitelisted walk); running code is the "exec" event.
    if not _armed:
        return
    if event == "exec" and args and isinstance(args[0], CodeType) and _code_mentions_marker(args[0]):
        _seen.append(f"exec of code built from model text: {args[0]!r}")
    elif event in ("pickle.find_class", "marshal.loads", "marshal.load"):
        _seen.append(f"{event}: {args!r}"[:200])
    elif event in ("os.system", "subprocess.Popen", "os.exec", "os.spawn", "os.posix_spawn"):
        _seen.append(f"{event}: {args!r}"[:200])


sys.addaudithook(_audit)


def hostile(prompt: str, params: GenParams, i: int) -> str:
    return "\n".join(HOSTILE_LINES[i % 3:] + ["13 - 9 = 4 (left: 4 4 10)", "10 - 4 = 6 (left: 4 6)", "4 * 6 = 24"])


def test_hostile_model_text_is_never_executed(monkeypatch: Any) -> None:
    global _armed
    import sympy  # noqa: F401 - loaded now, so its own import-time exec is not part of the run

    task = Game24()
    backend = ScriptedBackend(hostile, scorer=lambda p, c: -len(c))
    runs = [("tot-bfs", Propose(), Value(n=2)), ("tot-dfs", Sample(k=3), Value(n=1)), ("tot-bfs", Propose(), Vote(n=3))]
    _seen.clear()
    _armed = True
    try:
        for search, gen, ev in runs:
            client = LMClient(backend)
            res = asyncio.run(run_search(search, task, "4 9 10 13", gen, ev, client))
            assert res.answer is None or MARKER not in res.answer
        for line in HOSTILE_LINES:
            assert rule_failure(task, "4 9 10 13", line) is not None
            st = task.root("4 9 10 13")
            for t in find(task, ProposePrompts).parse_proposals(st, line):
                assert MARKER not in t.text or isinstance(task.check(st, t), Invalid)
    finally:
        _armed = False
    assert backend.requests, "the hostile model was never asked"
    assert not _seen, "\n".join(_seen)


def test_audit_hook_would_catch_an_eval_of_model_text() -> None:
    # The detector itself must work, or the test above proves nothing.
    global _armed
    _seen.clear()
    _armed = True
    try:
        namespace: dict[str, Any] = {MARKER: 1}
        eval(MARKER, namespace)  # noqa: S307 - deliberately, to prove the hook sees it
    finally:
        _armed = False
    assert _seen
    _seen.clear()


# ---- plain-data files ---------------------------------------------------------------------------------


def test_cache_and_trace_files_are_plain_json(tmp_path: Path) -> None:
    from solver.lm.cache import Cache

    db, path = tmp_path / "c.sqlite", tmp_path / "t.jsonl"
    backend = ScriptedBackend(hostile, scorer=lambda p, c: -len(c))
    client = LMClient(backend, Cache(db), "record")
    trace = Trace(path)
    asyncio.run(run_search("tot-bfs", Game24(), "4 9 10 13", Propose(), Value(n=2), client, trace=trace))
    trace.close()
    asyncio.run(client.close())
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert tables == ["outputs"]
        rows = con.execute("SELECT key, value, typeof(value) FROM outputs").fetchall()
    finally:
        con.close()
    assert rows
    for key, value, kind in rows:
        assert kind == "text" and len(key) == 64 and all(c in "0123456789abcdef" for c in key)
        assert isinstance(json.loads(value), (str, list))
        assert not value.startswith("\x80")  # no pickle protocol header
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
