"""The embedded model's start-up check: a native crash of llama.cpp in the child becomes one line
on stderr and exit 3, never a dead ``tot``. No real model is loaded here (see test_model.py)."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from solver.lm import startup_check
from solver.lm.base import LMError

MODEL_NAME = "gemma3-270m-q4_k_m.gguf"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache dir whose 'embedded model' is a file llama.cpp cannot load."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / MODEL_NAME).write_bytes(b"not a gguf file\n" * 64)
    monkeypatch.setenv("TOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TOT_THREADS", "1")
    monkeypatch.delenv(startup_check.CRASH_HOOK, raising=False)
    monkeypatch.setattr(startup_check, "_passed_here", set())
    return tmp_path


def tot_solve(env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    return subprocess.run([sys.executable, "-m", "solver.tools.cli", "solve", "game24", "1 2 4 7"],
                          capture_output=True, text=True, timeout=300, env=env)


def test_a_crashing_runtime_is_one_line_and_exit_3(cache):
    r = tot_solve({startup_check.CRASH_HOOK: "segv"})
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tot: model error:")
    assert "SIGSEGV" in r.stderr and "fix:" in r.stderr and "Traceback" not in r.stderr
    assert not (cache / "runtime-checks").exists() or not any((cache / "runtime-checks").iterdir())


def test_the_hook_really_kills_the_child_with_sigsegv(cache):
    """The parent's message above rests on this: the child died by the signal, not by an exit code."""
    env = {**os.environ, startup_check.CRASH_HOOK: "segv"}
    r = subprocess.run([sys.executable, "-m", "solver.lm.startup_child", str(cache / "models" / MODEL_NAME), "1"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == -signal.SIGSEGV


def test_a_model_that_does_not_load_is_one_line_and_exit_3(cache):
    r = tot_solve({})
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and "failed its start-up check" in r.stderr
    assert "Failed to load model" in r.stderr and "Traceback" not in r.stderr


def test_a_passed_check_is_remembered_per_model_file(cache, monkeypatch):
    model = cache / "models" / MODEL_NAME
    key, parts = startup_check.check_key(model)
    record = cache / "runtime-checks" / f"{key}.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"passed": True, **parts}))
    monkeypatch.setenv(startup_check.CRASH_HOOK, "segv")  # any child that runs now crashes
    startup_check.check_runtime(model, 1)  # remembered: no child, no crash
    model.write_bytes(b"another file\n")  # another size: another model, checked again
    monkeypatch.setattr(startup_check, "_passed_here", set())
    with pytest.raises(LMError, match="SIGSEGV"):
        startup_check.check_runtime(model, 1)


def test_the_key_names_runtime_model_cpu_and_platform(cache):
    model = cache / "models" / MODEL_NAME
    key, parts = startup_check.check_key(model)
    assert set(parts) == {"runtime", "model", "cpu", "platform"}
    assert parts["model"][1] == model.stat().st_size
    import llama_cpp

    assert parts["runtime"]["llama_cpp"] == llama_cpp.__version__
    if Path("/proc/cpuinfo").exists():
        assert "flags" in parts["cpu"] or "Features" in parts["cpu"]
