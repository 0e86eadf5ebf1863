"""The pages under docs/ that are written as one program: each ```python block runs in order in
one namespace, in an empty directory, and must print exactly the ```text block that follows it.

docs/api.md runs the embedded model in its last block, as docs/sessions.md does throughout (the
same end-to-end model tests as tests/test_model.py: the model is installed wherever the suite runs).
"""

from __future__ import annotations

import contextlib
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


def test_the_api_page_names_only_exported_names() -> None:
    import solver

    text = (DOCS / "api.md").read_text(encoding="utf-8")
    used = set(re.findall(r"\bsolver\.([A-Za-z_]+)\b", text)) - {"tools", "lm", "capabilities", "testing",
                                                                   "trace_reader", "run", "task"}
    assert used and used <= set(solver.__all__), sorted(used - set(solver.__all__))
    for name in solver.__all__:
        assert getattr(solver, name) is not None
