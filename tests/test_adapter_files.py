"""Broken LoRA adapter files (issue 59): each is one line on stderr and exit 2, never a native
crash of llama.cpp. The files are the ones the issue names (the shipped adapter cut at half its
length, at 32 bytes and 1 KB, missing one byte; ``GGUF`` then random bytes; version 999; huge
tensor and key counts; the base model's own file), each with a manifest that names the base
model's sha256 and no sha256 of its own, so that nothing but the file's contents stops it.

Three guards, each tested on its own: the pure-Python check of the file (solver/lm/gguf_check.py)
before llama.cpp sees it; ``load_llama``, which refuses an adapter llama.cpp did not load
(llama-cpp-python sets the NULL adapter it gets back, and the first decode crashes); and the
start-up check, which loads the adapter in a child process. Every llama.cpp load runs in a child
process, so a crash fails the test instead of killing pytest. The random and mutated files:
tests/test_adapter_fuzz.py."""

from __future__ import annotations

import json
import os
import random
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from solver.lm import startup_check
from solver.lm.adapters import AdapterError, check_adapter_fits, file_sha256, read_adapter
from solver.lm.gguf_check import GGUFError, check_fits, check_lora, read_gguf
from solver.lm.local import model_path
from tasks.game24.cli import SHIPPED_ADAPTER

pytestmark = pytest.mark.model

ADAPTER = SHIPPED_ADAPTER


@pytest.fixture(scope="module")
def model() -> Path:
    return model_path()


def broken_files(model: Path) -> dict[str, bytes | Path]:
    """The issue's files: name -> bytes, or the base model's own path."""
    good = ADAPTER.read_bytes()
    rnd = random.Random(59)
    return {
        "half": good[: len(good) // 2],
        "32-bytes": good[:32],
        "1-KB": good[:1024],
        "one-byte-short": good[:-1],
        "GGUF-then-random": b"GGUF" + bytes(rnd.randrange(256) for _ in range(4096)),
        "version-999": good[:4] + struct.pack("<I", 999) + good[8:],
        "huge-tensor-count": good[:8] + struct.pack("<Q", 1 << 40) + good[16:],
        "huge-key-count": good[:16] + struct.pack("<Q", 1 << 40) + good[24:],
        "the-base-model": model,
    }


def write_adapter(folder: Path, name: str, body: bytes | Path, model: Path) -> Path:
    """``body`` as ``folder/NAME.gguf`` (the base model by a symbolic link) with a manifest that
    names the model's sha256 and no sha256 of the file."""
    path = folder / f"{name}.gguf"
    if isinstance(body, Path):
        path.symlink_to(body)
    else:
        path.write_bytes(body)
    manifest = {"task": "game24", "trained_for": ["value"], "base_model": {"sha256": file_sha256(model)}}
    path.with_suffix(".json").write_text(json.dumps(manifest), encoding="utf-8")
    return path


NAMES = ["half", "32-bytes", "1-KB", "one-byte-short", "GGUF-then-random", "version-999", "huge-tensor-count",
         "huge-key-count", "the-base-model"]


@pytest.mark.parametrize("name", NAMES)
def test_a_broken_adapter_is_one_line_and_exit_2(tmp_path: Path, model: Path, name: str) -> None:
    path = write_adapter(tmp_path, name, broken_files(model)[name], model)
    r = subprocess.run([sys.executable, "-m", "solver.tools.cli", "solve", "game24", "4 9 10 13",
                        "--adapter", str(path)], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tot: error: the adapter"), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_the_check_says_what_is_wrong(tmp_path: Path, model: Path) -> None:
    files = broken_files(model)
    says = {"half": "ends inside the data", "32-bytes": "cut short", "1-KB": "cut short",
            "one-byte-short": "ends inside the data", "GGUF-then-random": "GGUF version",
            "version-999": "GGUF version 999", "huge-tensor-count": "1099511627776 tensors",
            "huge-key-count": "1099511627776 keys", "the-base-model": "general.type is 'model'"}
    for name in NAMES:
        with pytest.raises(AdapterError, match=says[name]) as err:
            read_adapter(write_adapter(tmp_path, name, files[name], model))
        assert "\n" not in str(err.value)


# A child that loads each adapter it is given with load_llama (no check before), completes a token
# and scores one, and prints one line per file: ok, or the one-line error it got.
LOAD_EACH = """
import sys
from solver.lm.base import LMError
from solver.lm.local import load_llama
for path in sys.argv[2:]:
    try:
        llm = load_llama(sys.argv[1], n_ctx=64, threads=1, logits_all=True, lora_path=path)
        llm.create_completion("1 + 1 =", max_tokens=1, temperature=0.0)
        llm.close()
        print("ok", path, flush=True)
    except LMError as exc:
        print("refused", path, type(exc).__name__, str(exc).splitlines()[0], flush=True)
"""


def load_each(model: Path, paths: list[Path]) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    env = {**os.environ, "TOT_THREADS": "1"}
    r = subprocess.run([sys.executable, "-c", LOAD_EACH, str(model), *map(str, paths)], capture_output=True,
                       text=True, timeout=600, env=env, stdin=subprocess.DEVNULL)
    return r, [line.split(" ", 3) for line in r.stdout.splitlines()]


def test_an_adapter_llama_cpp_refuses_is_an_error_not_a_crash(tmp_path: Path, model: Path) -> None:
    """Without the Python check: llama.cpp refuses these files, and load_llama must say so instead
    of setting the NULL adapter on the context (SIGSEGV at the first decode)."""
    files = broken_files(model)
    paths = [write_adapter(tmp_path, name, files[name], model)
             for name in ("half", "32-bytes", "one-byte-short", "version-999", "huge-key-count", "the-base-model")]
    r, lines = load_each(model, paths)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    assert [(line[0], line[2]) for line in lines] == [("refused", "AdapterError")] * len(paths), r.stdout
    assert all("llama.cpp did not load the adapter" in line[3] for line in lines)


def test_the_shipped_adapter_loads_and_runs(model: Path) -> None:
    """The guards let the real adapter through: the checks pass it and the model runs with it."""
    info = check_lora(read_gguf(ADAPTER))
    check_fits(info, read_gguf(model))
    check_adapter_fits(read_adapter(ADAPTER), model)
    assert len(info.pairs) == 126 and info.alpha == 32.0 and info.architecture == "gemma3"
    r, lines = load_each(model, [ADAPTER])
    assert r.returncode == 0 and [line[0] for line in lines] == ["ok"], (r.stdout, r.stderr[-2000:])


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: Path) -> Path:
    """A fresh cache directory (no remembered start-up checks) that still has the model."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / model.name).symlink_to(model)
    monkeypatch.setenv("TOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TOT_THREADS", "1")
    monkeypatch.delenv(startup_check.CRASH_HOOK, raising=False)
    monkeypatch.setattr(startup_check, "_passed_here", set())
    return tmp_path


def test_the_start_up_check_loads_the_adapter_and_remembers_it(cache: Path, model: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    startup_check.check_runtime(model, 1)
    startup_check.check_runtime(model, 1, adapter=ADAPTER)  # a child ran the model with the adapter
    key, parts = startup_check.check_key(model, ADAPTER)
    assert parts["adapter"][0] == str(ADAPTER.resolve())
    assert key != startup_check.check_key(model)[0]
    assert json.loads((cache / "runtime-checks" / f"{key}.json").read_text())["passed"]
    monkeypatch.setattr(startup_check, "_passed_here", set())
    monkeypatch.setenv(startup_check.CRASH_HOOK, "segv")  # any child that runs now crashes
    startup_check.check_runtime(model, 1, adapter=ADAPTER)  # remembered: no child


def test_an_adapter_that_crashes_the_start_up_check_is_one_line_and_exit_2(cache: Path, tmp_path: Path,
                                                                           model: Path) -> None:
    """The model's own check passes; the child with the adapter dies by SIGSEGV (the test hook, as a
    crashing llama.cpp would): the user's file is refused in one line, exit 2."""
    path = tmp_path / "mine.gguf"
    path.write_bytes(ADAPTER.read_bytes())
    path.with_suffix(".json").write_text(json.dumps({"task": "game24", "trained_for": ["value"],
                                                     "base_model": {"sha256": file_sha256(model)}}))
    env = {**os.environ, startup_check.CRASH_HOOK: "segv-adapter"}
    r = subprocess.run([sys.executable, "-m", "solver.tools.cli", "solve", "game24", "4 9 10 13", "--adapter",
                        str(path)], capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1 and "crashed llama.cpp (SIGSEGV)" in r.stderr and "mine.gguf" in r.stderr
    child = subprocess.run([sys.executable, "-m", "solver.lm.startup_child", str(model), "1", str(path)],
                           capture_output=True, text=True, timeout=120, env=env)
    assert child.returncode == -signal.SIGSEGV  # the hook really kills the child


def write_lora(path: Path, arch: str, tensors: dict[str, tuple[int, ...]],
               keys: dict[str, str | float | int] | None = None) -> Path:
    """A small adapter written with the gguf package (the train extra): ``tensors`` name -> numpy
    shape (outermost first, as numpy orders it); ``keys`` replace the adapter's keys (a float is
    written as a float64, an int as a uint32)."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    w = gguf.GGUFWriter(str(path), arch)
    given = {"general.type": "adapter", "adapter.type": "lora", **(keys or {})}
    for key, value in given.items():
        if isinstance(value, str):
            w.add_string(key, value)
        elif isinstance(value, float):
            w.add_float64(key, value)
        else:
            w.add_uint32(key, value)
    if "adapter.lora.alpha" not in given:
        w.add_float32("adapter.lora.alpha", 16.0)
    for name, shape in tensors.items():
        w.add_tensor(name, np.full(shape, 0.01, dtype="float32"))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


GOOD_PAIR = {"blk.0.attn_q.weight.lora_a": (16, 640), "blk.0.attn_q.weight.lora_b": (1024, 16)}


@pytest.mark.parametrize("arch, tensors, says", [
    ("gemma3", GOOD_PAIR, None),
    ("llama", GOOD_PAIR, "architecture 'llama'"),
    ("gemma3", {"blk.99.attn_q.weight.lora_a": (16, 640), "blk.99.attn_q.weight.lora_b": (1024, 16)}, "no tensor"),
    ("gemma3", {"blk.0.attn_q.weight.lora_a": (16, 512), "blk.0.attn_q.weight.lora_b": (1024, 16)}, "do not fit"),
    ("gemma3", {"blk.0.attn_q.weight.lora_a": (16, 640), "blk.0.attn_q.weight.lora_b": (1024, 8)}, "ranks 16 and 8"),
    ("gemma3", {"blk.0.attn_q.weight.lora_a": (16, 640)}, "lacks its .lora_b"),
    ("gemma3", {"blk.0.attn_q.weight": (1024, 640)}, "neither a .lora_a"),
    ("gemma3", {"blk.0.attn_q.weight.lora_a": (2, 16, 640), "blk.0.attn_q.weight.lora_b": (2, 1024, 16)},
     "not two dimensions"),
    ("gemma3", {}, "no LoRA tensors"),
])
def test_an_adapter_is_held_to_the_model(tmp_path: Path, model: Path, arch: str, tensors: dict[str, tuple[int, ...]],
                                        says: str | None) -> None:
    """Architecture, tensor names and shapes, checked in Python against the model's own table."""
    path = write_lora(tmp_path / "a.gguf", arch, tensors)
    try:
        check_fits(check_lora(read_gguf(path)), read_gguf(model))
    except GGUFError as exc:
        assert says is not None and says in str(exc), exc
        assert "\n" not in str(exc)
    else:
        assert says is None
        r, lines = load_each(model, [path])  # and what the check passes, llama.cpp runs
        assert r.returncode == 0 and [line[0] for line in lines] == ["ok"], (r.stdout, r.stderr[-2000:])


@pytest.mark.parametrize("keys, says", [
    ({"general.type": 7}, "general.type is a uint32"),  # llama.cpp asserts on it: SIGABRT
    ({"adapter.lora.alpha": 2.0}, "alpha is not one finite float32"),  # a float64: SIGABRT too
    ({"general.alignment": 3}, "not a power of two"),
])
def test_keys_of_the_wrong_type_are_refused(tmp_path: Path, keys: dict[str, str | float | int], says: str) -> None:
    path = write_lora(tmp_path / "a.gguf", "gemma3", GOOD_PAIR, keys)
    with pytest.raises(GGUFError, match=says):
        check_lora(read_gguf(path))
