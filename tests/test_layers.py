"""The layers of pyproject.toml's ``[tool.importlinter]`` hold, every module of ``solver`` has a
layer, and no two modules import each other, even through others or inside a function.

A package's ``__init__`` importing its own children (to re-export them) is no cycle; every other
import counts, deferred and ``TYPE_CHECKING`` ones included. The linter runs in a child process
on this checkout (``lint-imports`` from the repository root does the same)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: import-linter depends on tomli there
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solver", "verifiers", "lexicon", "tasks")
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the packages under ``root`` with ``root``'s pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}  # one line per contract
    return subprocess.run([sys.executable, "-c", LINT, "--no-cache", "--no-logo"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def module_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of two or more modules that import each other, directly or through others (the
    strongly connected components of the import graph, Tarjan's algorithm), leaving out each
    package's imports of its own descendants."""
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if not i.startswith(m + "."))
             for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def contracts() -> list[dict[str, object]]:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["tool"]["importlinter"]["contracts"]


def test_every_contract_is_kept() -> None:
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Contracts: {len(contracts())} kept, 0 broken." in r.stdout


def test_no_contract_has_an_exception_list() -> None:
    for c in contracts():
        assert "ignore_imports" not in c, c["name"]


def test_every_module_of_solver_has_a_layer() -> None:
    """A new module of the core must be placed in the layers, not slip past them."""
    [layers] = [c for c in contracts() if c["type"] == "layers" and not c.get("containers")]
    named = {m for layer in layers["layers"] for m in re.split(r"[|:]", str(layer))}
    named = {m.strip() for m in named}
    graph = grimp.build_graph("solver", cache_dir=None)
    children = graph.find_children("solver")
    assert children, "grimp found no modules in solver"
    assert sorted(children - named) == []
    assert {"tasks", "verifiers", "lexicon"} <= named


def test_no_import_cycle_between_modules() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert module_cycles(graph) == []


def test_the_cycle_check_finds_a_cycle_and_spares_a_package_re_exporting_its_children() -> None:
    g = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c", "q"):
        g.add_module(m)
    g.add_import(importer="p", imported="p.a")  # the package re-exports its children
    g.add_import(importer="p", imported="p.b")
    g.add_import(importer="p.b", imported="p")  # a child using the package's re-export: fine
    assert module_cycles(g) == []
    g.add_import(importer="p.a", imported="p.c")  # a -> c -> q -> a: a cycle through a third module
    g.add_import(importer="p.c", imported="q")
    g.add_import(importer="q", imported="p.a")
    assert module_cycles(g) == [["p.a", "p.c", "q"]]


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("tasks/game24/task.py", "from solver.tools.cli import main", "Layers:"),
    ("solver/lm/session.py", "from solver.searches.tot import Bfs", "Layers:"),
    ("verifiers/arithmetic.py", "import solver.lm.client", "The exact checkers reach no model code"),
    ("tasks/sudoku/task.py", "import tasks.writing.prompts", "Each task stands alone"),
    ("solver/lm/base.py", "import solver.lm.client", "No import cycle"),
    ("solver/searches/mcts.py", "from solver.searches.best_first import BestFirst", "The searches stand alone"),
    ("solver/expansion.py", "from solver.searches.common import quantise", "Layers:"),
])
def test_a_broken_layer_fails_the_check(tmp_path: Path, module: str, line: str, contract: str) -> None:
    """The linter on a copy of the packages with one forbidden import added: that contract breaks."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("data", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    r = lint(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    broken = [ln for ln in r.stdout.splitlines() if ln.endswith("BROKEN")]
    assert len(broken) >= 1 and any(contract in ln for ln in broken), r.stdout


def test_the_architecture_page_lists_the_layers_from_the_contracts(tmp_path: Path) -> None:
    """The page's list is written from pyproject.toml: a layer added there appears on the page."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import layers_page
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    assert layers_page.MARKER in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    text = layers_page.layers_markdown()
    [layers] = [c for c in contracts() if c["type"] == "layers" and not c.get("containers")]
    for i, layer in enumerate(layers["layers"], 1):  # type: ignore[arg-type]
        first = re.split(r"[|:]", layer)[0].strip()
        assert re.search(rf"^{i}\. `{re.escape(first)}`", text, re.M), (i, layer)
    assert ("`solver.searches.mcts`, `solver.searches.beam`, `solver.searches.controller` import none of each "
            "other") in text
    changed = (ROOT / "pyproject.toml").read_text(encoding="utf-8").replace(
        '"solver.expansion",', '"solver.expansion",\n    "solver.invented",', 1)
    (tmp_path / "pyproject.toml").write_text(changed, encoding="utf-8")
    assert "5. `solver.invented`" in layers_page.layers_markdown(tmp_path / "pyproject.toml")
    assert "Inside `solver.searches`, from the top:\n\n1. `solver.searches.registry`" in text


SEARCH_MODULES = ("tot", "complete", "controller", "best_first", "mcts", "beam", "common")


@pytest.mark.parametrize("name", SEARCH_MODULES)
def test_the_searches_write_no_trace_event_by_name(name: str) -> None:
    """What a search decides reaches the trace through the step's methods (keep, cut, backtrack,
    new_round, result), which write the events; no search calls the trace's emit itself."""
    import ast

    tree = ast.parse((ROOT / "solver" / "searches" / f"{name}.py").read_text(encoding="utf-8"))
    emits = [n.lineno for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "emit"]
    assert emits == [], f"solver/searches/{name}.py calls emit at lines {emits}"


def test_every_core_module_is_held_to_mypy_strict_checks() -> None:
    """pyproject.toml's mypy override lists every module of the core (solver/ but its lm, tools and
    testing packages), so a new core module cannot slip past the strict checks."""
    with (ROOT / "pyproject.toml").open("rb") as fh:
        overrides = tomllib.load(fh)["tool"]["mypy"]["overrides"]
    [strict] = [o for o in overrides if o.get("disallow_untyped_defs") and o.get("warn_return_any")]
    core = {"solver", "solver.searches"} | {f"solver.{p.stem}" for p in (ROOT / "solver").glob("*.py")
                                            if p.stem != "__init__"} | \
        {f"solver.searches.{p.stem}" for p in (ROOT / "solver" / "searches").glob("*.py") if p.stem != "__init__"}
    assert set(strict["module"]) == core
