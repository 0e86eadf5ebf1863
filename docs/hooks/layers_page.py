"""mkdocs hook: the architecture page's marker becomes the layers and independence rules written
from pyproject.toml's import-linter contracts (the ones `lint-imports` and tests/test_layers.py
check), at every build, so the page cannot drift from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- layers -->"


def _names(layer: str) -> str:
    sep = "|" if "|" in layer else ":"
    mods = [f"`{m.strip()}`" for m in layer.split(sep)]
    if len(mods) == 1:
        return mods[0]
    return ", ".join(mods) + (" (none imports another)" if sep == "|" else " (they may import each other)")


def layers_markdown(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The layers contract as a numbered list, top first, then every independence contract."""
    with pyproject.open("rb") as fh:
        contracts = tomllib.load(fh)["tool"]["importlinter"]["contracts"]
    out = []
    for c in contracts:
        if c["type"] == "layers" and not c.get("containers"):
            out += ["Layers, from the top (a module imports only from layers below its own):", ""]
            out += [f"{i}. {_names(layer)}" for i, layer in enumerate(c["layers"], 1)]
            out.append("")
    for c in contracts:
        for container in c.get("containers", []) if c["type"] == "layers" else []:
            out += [f"Inside `{container}`, from the top:", ""]
            out += [f"{i}. {_names(' | '.join(f'{container}.{m.strip()}' for m in layer.split('|')))}"
                    for i, layer in enumerate(c["layers"], 1)]
            out.append("")
    for c in contracts:
        if c["type"] == "independence":
            out.append(f"- **{c['name']}**: " + ", ".join(f"`{m}`" for m in c["modules"]) + " import none of each "
                       "other, not even through other modules.")
    for c in contracts:
        if c["type"] == "forbidden":
            out.append(f"- **{c['name']}**: " + ", ".join(f"`{m}`" for m in c["source_modules"]) + " import no "
                       + ", ".join(f"`{m}`" for m in c["forbidden_modules"])
                       + (" directly" if c.get("allow_indirect_imports") else "") + ".")
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != "architecture.md":
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"architecture.md lost its {MARKER} marker")
    return markdown.replace(MARKER, layers_markdown())
