"""The documentation site: it builds with `mkdocs build --strict` (no warning: a broken link, a
page outside the navigation or an unresolved API reference fails), its command-line page lists
every subcommand and flag of the real parser, the pictures regenerate with the documented
command, and the README keeps its promises (at most 200 lines, the test command .ci/run runs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_the_site_builds_in_strict_mode_without_a_warning(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "WARNING" not in run.stderr, run.stderr[-4000:]
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "--budget-seconds" in cli and "tot solve game24" in cli and "tot bench report" in cli
    api = (tmp_path / "site" / "reference" / "index.html").read_text(encoding="utf-8")
    assert "register_search" in api and "audit_trace" in api


def test_the_command_line_page_has_every_subcommand_and_flag() -> None:
    import argparse

    from solver.tools.cli import build_parser
    from solver.tools.cli_reference import commands, reference_markdown
    from solver.tools.plugins import load_plugins

    parser = build_parser(load_plugins())
    page = reference_markdown(parser)
    sections = dict(re.findall(r"^## `([^`]+)`\n(.*?)(?=^## `|\Z)", page, re.S | re.M))
    found = commands(parser)
    assert len(found) > 15 and "tot solve game24" in sections and "tot bench report" in sections
    for name, sub in found:
        assert name in sections, f"no section for {name}"
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for flag in action.option_strings or [action.dest.upper()]:
                if action.option_strings:
                    assert f"`{flag}" in sections[name] or f", {flag}" in sections[name], f"{name}: {flag} missing"


def test_the_pictures_regenerate_with_the_documented_command(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(ROOT / "docs" / "pictures.py"), "--out", str(tmp_path)],
                         env=_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    made = (tmp_path / "calibration.png").read_bytes()
    shipped = (ROOT / "docs" / "assets" / "calibration.png").read_bytes()
    assert made[:8] == shipped[:8] == b"\x89PNG\r\n\x1a\n"
    for page in ("docs/index.md", "docs/audit.md"):
        assert "calibration.png" in (ROOT / page).read_text(encoding="utf-8")
    # The tree is text: the regenerated picture is the shipped one, byte for byte.
    assert (tmp_path / "search-tree.svg").read_text() == (ROOT / "docs" / "assets" / "search-tree.svg").read_text()
    for page in ("README.md", "docs/index.md", "docs/viewer.md"):
        assert "search-tree.svg" in (ROOT / page).read_text(encoding="utf-8")


def test_the_readme_is_short_and_its_test_command_is_the_one_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert 'pip install . && tot solve game24 "4 9 10 13"' in readme
    assert "pip install -e '.[test]' && python -m pytest" in readme
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if ln.strip() and not ln.lstrip().startswith("#")]
    assert ci[-2].endswith("-m pip install --quiet --disable-pip-version-check -e '.[test]'"), ci[-2]
    # CI may set variables for the run (CI=1: optional backends the test extra installs are required)
    assert re.fullmatch(r'(?:[A-Z_]+="[^"]*" )*"\$work/venv/bin/python" -m pytest', ci[-1]), ci[-1]


def test_every_link_of_the_readme_reaches_a_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    assert len(links) > 15
    for link in links:
        assert (ROOT / link).is_file(), link


def test_the_readme_shows_the_output_the_getting_started_page_checks() -> None:
    # tests/test_docs.py compares the getting-started page's block with what the command prints.
    def first_output(page: str) -> str:
        text = (ROOT / page).read_text(encoding="utf-8")
        return re.findall(r"```text\n(answer: .*?)```", text, re.S)[0]

    assert first_output("README.md") == first_output("docs/getting-started.md") == first_output("docs/index.md")
