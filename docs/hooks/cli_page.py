"""mkdocs hook: the command-line page's marker becomes the reference written from this checkout's
real `tot` parser (solver.tools.cli_reference), at every build."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != "cli.md":
        return markdown
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # document this checkout's parser, whatever is installed
    from solver.tools.cli import build_parser
    from solver.tools.cli_reference import reference_markdown
    from solver.tools.plugins import load_plugins

    if MARKER not in markdown:
        raise ValueError(f"cli.md lost its {MARKER} marker")
    return markdown.replace(MARKER, reference_markdown(build_parser(load_plugins())))
