"""A task ships its own adapters (Game of 24's in tasks/game24/adapters/, declared by its plugin):
the command line hands them to the run, ``--adapter auto`` takes the default one for the embedded
model, and the adapter is recorded and keyed as before the move (file name, sha256, tag)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from solver.lm.base import LMError
from solver.run import make_backend
from solver.tools.cli import build_parser, settings_from
from solver.tools.plugins import load_plugins
from tasks.game24.cli import SHIPPED_ADAPTER

SHA256 = "eb05eec219e1d1dab19a48ff246e1a364eea809be93655e595262dd13716089d"  # its manifest's, since it shipped


def _settings(argv: list[str]) -> Any:
    return settings_from(build_parser(load_plugins()).parse_args(argv))


def test_the_plugin_declares_the_adapter_and_the_command_line_hands_it_to_the_run() -> None:
    assert SHIPPED_ADAPTER.is_file() and SHIPPED_ADAPTER.with_suffix(".json").is_file()
    shipped = (str(SHIPPED_ADAPTER),)
    assert _settings(["solve", "game24", "4 9 10 13"]).model.shipped_adapters == shipped
    assert _settings(["bench", "game24", "--range", "901-901", "--out", "x"]).model.shipped_adapters == shipped
    assert _settings(["solve", "sudoku", "--size", "4", "--seed", "1"]).model.shipped_adapters == ()


class _Local:
    """Stands in for the embedded model: what make_backend hands it."""

    def __init__(self, model: str | None, context: int | None = None, adapter: Any = None) -> None:
        self.adapter = adapter


@pytest.mark.parametrize("argv,file", [
    ([], "game24.gguf"),  # --adapter auto: the task's default adapter
    (["--adapter", "off"], None),
    (["--adapter", str(SHIPPED_ADAPTER)], "game24.gguf"),
    (["--model", __file__], None),  # another model: auto takes none
])
def test_auto_off_and_a_path_with_the_embedded_model(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                     file: str | None) -> None:
    monkeypatch.setattr("solver.lm.local.LocalBackend", _Local)
    backend = make_backend(_settings(["solve", "game24", "4 9 10 13", *argv]).model)
    adapter = backend.adapter  # type: ignore[attr-defined]
    if file is None:
        assert adapter is None
    else:  # the trace's record and the model-name/cache-key tag, as before the adapter moved
        assert adapter.describe() == {"file": file, "sha256": SHA256}
        assert adapter.tag == f"game24@{SHA256[:12]}" and adapter.default


def test_the_server_launcher_finds_a_tasks_adapter_through_its_plugin(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    from solver.lm import llama_server_binary as launcher

    monkeypatch.setattr("solver.lm.local.model_path", lambda: tmp_path / "m.gguf")
    assert launcher.task_adapters("game24") == (SHIPPED_ADAPTER,)
    assert launcher.task_adapters("sudoku") == ()
    with pytest.raises(LMError, match="ships no default adapter"):
        launcher.server_args(["--adapter", "sudoku"])
