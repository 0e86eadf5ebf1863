"""mkdocs hook: the command-line page's marker becomes the reference written from this checkout's
real `tot` parser (solver.tools.cli_reference), and the searches page's marker the table of every
search's own options as the searches declare them, at every build."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- cli-reference -->"
OPTIONS_MARKER = "<!-- search-options -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri not in ("cli.md", "searches.md"):
        return markdown
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # document this checkout's parser, whatever is installed
    from solver.tools.cli import build_parser
    from solver.tools.cli_reference import reference_markdown, search_options_markdown
    from solver.tools.plugins import load_plugins

    if page.file.src_uri == "searches.md":
        if OPTIONS_MARKER not in markdown:
            raise ValueError(f"searches.md lost its {OPTIONS_MARKER} marker")
        return markdown.replace(OPTIONS_MARKER, search_options_markdown())

    if MARKER not in markdown:
        raise ValueError(f"cli.md lost its {MARKER} marker")
    return markdown.replace(MARKER, reference_markdown(build_parser(load_plugins())))
