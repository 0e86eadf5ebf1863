"""The pages under docs/ that are written as one program: each ```python block runs in order in
one namespace, in an empty directory, and must print exactly the ```text block that follows it.

docs/api.md runs the embedded model in its last block, as docs/sessions.md does throughout (the
same end-to-end model tests as tests/test_model.py: the model is installed wherever the suite runs).
Those blocks print only what the model cannot change (verified, each check of the answer, a proof,
counts that hold in any order): which answer the model's order reaches first differs by CPU, as
llama.cpp's kernels differ by instruction set (measured: AVX-512 and AVX2 builds answer 4 9 10 13
otherwise). So each page is also run with seeded random scores in place of the model's, and must
print the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"^```(python|text|)\n(.*?)^```$", re.S | re.M)


def run_page(name: str) -> list[tuple[str, str]]:
    """(printed, expected) for each python block of the page that a text block follows."""
    blocks = BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))
    assert blocks, f"{name} has no code blocks"
    namespace: dict[str, object] = {"__name__": f"docs.{name}"}
    pairs = []
    for k, (kind, body) in enumerate(blocks):
        if kind != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(body, f"{name} block {k}", "exec"), namespace)  # our own documentation, not model text
        follows = blocks[k + 1] if k + 1 < len(blocks) else None
        if follows is not None and follows[0] != "python":
            pairs.append((out.getvalue(), follows[1]))
    return pairs


@pytest.mark.parametrize("page", ["api.md", "sessions.md"])
def test_the_page_prints_what_it_says(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOT_THREADS", "2")
    pairs = run_page(page)
    assert pairs, f"{page} shows no output to compare"
    for printed, expected in pairs:
        assert printed == expected


def _random_scores(seed: int) -> object:
    """A stand-in for the embedded model whose scores are drawn from (seed, prompt, continuation):
    every order of the states a model might give, as another CPU's near-ties do."""
    import hashlib

    from tests.fakes import ScriptedBackend

    def scorer(prompt: str, continuation: str) -> float:
        digest = hashlib.sha256(f"{seed}|{prompt}|{continuation}".encode()).digest()
        return -5 * int.from_bytes(digest[:4], "big") / 2**32

    return ScriptedBackend(scorer=scorer, name="random-scores")


@pytest.mark.parametrize("page", ["api.md", "sessions.md"])
def test_the_page_prints_the_same_whatever_the_models_scores(page: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """What the model pages print holds on any CPU: run with 30 seeded random scorers in place of
    the embedded model, each page prints what it says (the complete search of 4 9 10 13 takes from
    46 to 271 calls over 300 such seeds, and reaches several answers)."""
    import solver.run

    made: list[object] = []
    for seed in range(30):
        (tmp_path / str(seed)).mkdir()
        monkeypatch.chdir(tmp_path / str(seed))  # the page writes its files afresh

        def backend(_settings: object, seed: int = seed) -> object:
            made.append(_random_scores(seed))
            return made[-1]

        monkeypatch.setattr(solver.run, "make_backend", backend)
        pairs = run_page(page)
        assert pairs and made, page
        for printed, expected in pairs:
            assert printed == expected, (page, seed)
    answers = {req for b in made for req in b.score_requests}  # type: ignore[attr-defined]
    assert len(answers) > 100  # the scorers were asked, not bypassed


def test_the_api_page_names_only_exported_names() -> None:
    import solver

    text = (DOCS / "api.md").read_text(encoding="utf-8")
    used = set(re.findall(r"\bsolver\.([A-Za-z_]+)\b", text)) - {"tools", "lm", "task_capabilities", "testing",
                                                                   "trace_reader", "run", "task"}
    assert used and used <= set(solver.__all__), sorted(used - set(solver.__all__))
    for name in solver.__all__:
        assert getattr(solver, name) is not None


# ---- every shell example of the README and the site ------------------------------------------------
#
# Each ```sh block runs as written, in order, in one scratch directory per page (which sees the
# repository's tests/, benchmarks/ and examples/ as links), with `tot` meaning this checkout's
# `python -m solver.tools.cli`. `tot solve` and `tot bench` get `--cache tests/data/docs_replay.sqlite
# --cache-mode replay` appended (unless the line names a --cache of its own), so an example that
# needs the embedded model replays its recorded outputs and a request that was never recorded
# fails the test. Re-record with the model: TOT_DOCS_RECORD=1 TOT_THREADS=1 python -m pytest
# tests/test_docs.py -k shell. Each command must exit 0, or N where its comment says `# exit N`.
# A ```text block introduced by a line starting with "prints" must equal the block's output
# (seconds masked). Two marks, written just above a block, leave it unrun, with the reason shown:
# `<!-- docs-test: not run (WHY) -->` (illustrative: installs, servers, GPUs) and
# `<!-- docs-test: measurement (WHY) -->` (the command that measured a table: minutes to hours).
# Every `tot` command in every block, run or not, must still parse with the real parser, so a
# renamed flag breaks a test, not a reader.

ROOT = DOCS.parent
REPLAY = ROOT / "tests" / "data" / "docs_replay.sqlite"
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[a-z]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!-- docs-test: (not run|measurement) \((.+)\) -->\s*$")
PRINTS = re.compile(r"^prints\b")
SECONDS = re.compile(r"\b\d+(\.\d+)? s\b")
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md"))]


@dataclasses.dataclass
class Block:
    page: str
    line: int
    lang: str
    body: str
    mark: tuple[str, str] | None  # (kind, reason)
    prints: str | None  # the text block the page says this block prints


def blocks_of(page: str) -> list[Block]:
    text = (ROOT / page).read_text(encoding="utf-8")
    found = list(FENCE.finditer(text))
    out: list[Block] = []
    for i, m in enumerate(found):
        indent = len(m.group("indent"))
        body = "\n".join(ln[indent:] for ln in m.group("body").splitlines()) + "\n"
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        prints = None
        if i + 1 < len(found) and found[i + 1].group("lang") == "text":
            between = text[m.end(): found[i + 1].start()].strip()
            if PRINTS.match(between) and "\n\n" not in between:
                prints = found[i + 1].group("body")
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, m.group("lang"), body,
                         (mark.group(1), mark.group(2)) if mark else None, prints))
    return out


def logical_lines(body: str) -> list[str]:
    """The block's commands: continuation lines joined, blank lines and comment lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [ln for ln in joined.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def tot_commands(block: Block) -> list[list[str]]:
    """The arguments of every `tot` command in a block (`$ ` prompts of a transcript included;
    simple NAME=value assignments of the block expanded)."""
    import shlex

    names: dict[str, str] = {}
    commands = []
    if block.lang not in ("sh", "console", "text"):
        return []
    for line in logical_lines(block.body):
        if block.lang in ("console", "text"):
            if not line.startswith("$ "):
                continue
            line = line[2:]
        tokens = shlex.split(line, comments=True)
        segment: list[str] = []
        for tok in [*tokens, "&&"]:
            if tok in ("&&", "||", ";", "|"):
                while segment and re.fullmatch(r"[A-Z_]+=.*", segment[0]):
                    key, _, value = segment.pop(0).partition("=")
                    names[key] = value
                if segment and segment[0] == "export":
                    for kv in segment[1:]:
                        key, _, value = kv.partition("=")
                        names[key] = value
                elif segment and segment[0] == "tot":
                    commands.append([re.sub(r"\$(\w+)", lambda v: names.get(v.group(1), v.group(0)), a)
                                     for a in segment[1:]])
                segment = []
            else:
                segment.append(tok)
    return commands


ALL_BLOCKS = [b for page in PAGES for b in blocks_of(page)]
# console blocks are transcripts: their `$ tot` lines are parsed, not run
SHELL = [b for b in ALL_BLOCKS if b.lang == "sh"]


def test_every_tot_command_on_every_page_parses() -> None:
    from solver.tools.cli import build_parser
    from solver.tools.plugins import load_plugins

    parser = build_parser(load_plugins())
    seen = 0
    for block in ALL_BLOCKS:
        for argv in tot_commands(block):
            seen += 1
            try:
                parser.parse_args(argv)
            except Exception as exc:  # UsageError, or SystemExit from --help
                pytest.fail(f"{block.page}:{block.line}: tot {' '.join(argv)}: {exc}")
    assert seen > 50, seen


def test_every_shell_block_is_run_or_says_why_not() -> None:
    for block in ALL_BLOCKS:
        if block.lang == "":
            pytest.fail(f"{block.page}:{block.line}: a code block without a language (sh, text, python, ...)")
        if block.mark is not None and not block.mark[1].strip():
            pytest.fail(f"{block.page}:{block.line}: a docs-test mark without a reason")
    assert [b for b in SHELL if b.mark is None]


_SHIM = r"""
tot() {
  local extra=()
  if [[ ( "$1" == solve || ( "$1" == bench && "$2" != report && "$2" != merge ) ) && " $* " != *" --cache "* ]]; then
    extra=(--cache "$TOT_DOCS_REPLAY" --cache-mode "$TOT_DOCS_CACHE_MODE")
  fi
  "$TOT_DOCS_PYTHON" -m solver.tools.cli "$@" "${extra[@]}"
}
# the pages' `python` is the interpreter the project is installed in (a venv need not be on PATH)
python() { "$TOT_DOCS_PYTHON" "$@"; }
"""


def shell_script(block: Block) -> str:
    lines = [_SHIM]
    for cmd in logical_lines(block.body):
        installed = re.match(r"pip install\b[^&]*(&&\s*(.*))?$", cmd)
        if installed:  # the suite runs on the installed package: only what follows the install runs
            if not installed.group(2):
                continue
            cmd = installed.group(2)
        expected = re.search(r"#\s*exit (\d+)", cmd)
        want = int(expected.group(1)) if expected else 0
        lines.append(cmd)
        lines.append(f"__rc=$?; if [ $__rc -ne {want} ]; then echo {shlex_quote('docs-test: ' + cmd)} "
                     f"\"exited $__rc, expected {want}\" >&2; exit 99; fi")
    return "\n".join(lines) + "\n"


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _masked(text: str) -> str:
    """Seconds, cache hits and token counts masked: the pages show a live run, the suite replays it,
    and a replay counts identical requests in flight together once where a live run pays for each
    (the known bug kept as a strict xfail in tests/test_kit_tasks.py), so tokens may differ by a few."""
    text = re.sub(r"\(cached \d+,", "(cached N,", text)
    text = re.sub(r"tokens \d+ \(prompt \d+, completion \d+\)", "tokens N (prompt N, completion N)", text)
    return SECONDS.sub("N s", text)


def _page_dir(tmp_path_factory: pytest.TempPathFactory, page: str) -> Path:
    where = tmp_path_factory.getbasetemp() / ("page-" + re.sub(r"\W", "_", page))
    if not where.exists():
        where.mkdir()
        for name in ("tests", "benchmarks", "examples"):
            (where / name).symlink_to(ROOT / name)
    return where


@pytest.mark.parametrize("block", [b for b in SHELL if b.mark is None], ids=lambda b: f"{b.page}:{b.line}")
def test_shell_examples_run_as_written(block: Block, tmp_path_factory: pytest.TempPathFactory) -> None:
    import os
    import subprocess
    import sys

    record = os.environ.get("TOT_DOCS_RECORD") == "1"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TOT_DOCS_PYTHON": sys.executable, "TOT_DOCS_REPLAY": str(REPLAY),
           "TOT_DOCS_CACHE_MODE": "record" if record else "replay", "TOT_THREADS": os.environ.get("TOT_THREADS", "2")}
    run = subprocess.run(["bash", "-c", shell_script(block)], cwd=_page_dir(tmp_path_factory, block.page), env=env,
                         capture_output=True, text=True, timeout=900)
    where = f"{block.page}:{block.line}"
    assert run.returncode == 0, f"{where}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    if block.prints is not None:
        assert _masked(run.stdout) == _masked(block.prints), where


# ---- every Python example: run here, or by the test module named for its page ----------------------

PYTHON_RUN_BY = {"docs/api.md": "tests/test_docs.py", "docs/sessions.md": "tests/test_docs.py",
                 "docs/testing.md": "tests/test_docs_testing.py",
                 "docs/task-protocol.md": "tests/test_task_protocol.py",  # its ```py excerpts: test_examples.py
                 "docs/false-prune-audit.md": "tests/test_audit_api.py",
                 "docs/searches.md": "tests/test_searches.py"}  # it registers a search: restored there


def test_every_python_example_is_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's ```python blocks are run by the test module named for it (which must name the
    page), or else here, in order, each printing the ```text block that follows it."""
    monkeypatch.chdir(tmp_path)
    pages = sorted({b.page for b in ALL_BLOCKS if b.lang in ("python", "py") and b.mark is None})
    assert set(PYTHON_RUN_BY) <= set(pages), "a page named here lost its Python examples"
    for page in pages:
        module = PYTHON_RUN_BY.get(page)
        if module is not None:
            assert Path(page).name in (ROOT / module).read_text(encoding="utf-8"), (page, module)
            continue
        for printed, expected in run_page(str(Path(page).relative_to("docs"))):
            assert printed == expected, page
