"""A start-up check of the embedded model in a child process, so that a native crash of llama.cpp
(a segfault in a CPU-specific kernel, an illegal instruction) becomes a one-line error instead of
killing the user's process.

Before a process first uses a model file with the installed llama.cpp, ``check_runtime`` runs
``main([MODEL, THREADS])`` of ``solver.lm.startup_child`` in a child Python with the parent's
``sys.path``: it loads the model both ways the backend does (a generation context and a scoring
context) through ``solver.lm.local.load_llama``, completes a few tokens and scores one continuation.
This module is the parent's side only and imports no backend: ``LocalBackend`` calls it. A success is remembered in
``<cache dir>/runtime-checks/<key>.json``, keyed by the llama-cpp-python version and its shared
libraries, the model file (size and modification time), the CPU (its flags) and the platform, so
it runs once per machine, model and runtime. A failure is not remembered: the next run checks again.

With a LoRA adapter (``check_runtime(..., adapter=PATH)``, after the model's own check and after
solver/lm/adapters.py has checked the file against the model), the child loads the model with the
adapter, completes and scores with it: an adapter file that crashes llama.cpp, or that llama.cpp
refuses, is a one-line AdapterError (the user's input, exit 2). Its success is remembered under a
key that adds the adapter file (path, size, modification time).

Test hook: the child (and only the child) reads ``TOT_STARTUP_CHECK_CRASH``; set to ``segv`` it
kills itself with SIGSEGV before loading anything, as a crashing llama.cpp would; set to
``segv-adapter``, only when it is given an adapter.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from solver.lm.adapters import AdapterError
from solver.lm.base import LMError
from solver.lm.cache import cache_dir

__all__ = ["CHILD_CODE", "CRASH_HOOK", "FIX", "PATH_VAR", "TIMEOUT_S", "check_key", "check_runtime"]

TIMEOUT_S = 600.0
CRASH_HOOK = "TOT_STARTUP_CHECK_CRASH"
FIX = ("rebuild llama-cpp-python without CPU-specific kernels "
       "(CMAKE_ARGS=-DGGML_NATIVE=OFF pip install --force-reinstall --no-cache-dir llama-cpp-python), "
       "or use a model server with --base-url")

_passed_here: set[str] = set()  # keys checked by this process


def _cpu_identity() -> str:
    """The first processor's model name and feature flags (Linux), else what ``platform`` knows."""
    info = Path("/proc/cpuinfo")
    wanted = ("model name", "flags", "features", "cpu model", "isa")
    lines: list[str] = []
    if info.exists():
        try:
            with info.open(encoding="utf-8", errors="replace") as f:
                for _ in range(200):  # the first processor's block is a few dozen lines
                    line = f.readline(65536)
                    if not line.strip():
                        break
                    name = line.split(":", 1)[0].strip().lower()
                    if name in wanted:
                        lines.append(line.strip())
        except OSError:
            pass
    return "\n".join(lines) or platform.processor()


def _runtime_identity() -> dict[str, Any]:
    """llama-cpp-python's version and the size and mtime of its shared libraries (a rebuild of the
    same version for other CPU flags is another runtime)."""
    import llama_cpp

    libs = {}
    lib_dir = Path(llama_cpp.__file__).parent / "lib"
    if lib_dir.is_dir():
        for p in sorted(lib_dir.iterdir()):
            if p.is_file() and not p.is_symlink():
                st = p.stat()
                libs[p.name] = [st.st_size, st.st_mtime_ns]
    return {"llama_cpp": getattr(llama_cpp, "__version__", "?"), "libs": libs}


def check_key(model: Path, adapter: Path | None = None) -> tuple[str, dict[str, Any]]:
    st = model.stat()
    parts = {
        "runtime": _runtime_identity(),
        "model": [str(model.resolve()), st.st_size, st.st_mtime_ns],
        "cpu": _cpu_identity(),
        "platform": [platform.platform(), platform.machine(), sys.version],
    }
    if adapter is not None:
        sa = adapter.stat()
        parts["adapter"] = [str(adapter.resolve()), sa.st_size, sa.st_mtime_ns]
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]
    return digest, parts


def _record_path(key: str) -> Path:
    return cache_dir() / "runtime-checks" / f"{key}.json"


def _passed_before(path: Path) -> bool:
    try:
        if not path.is_file() or path.stat().st_size > 65536:
            return False
        return bool(json.loads(path.read_text(encoding="utf-8")).get("passed"))
    except (OSError, ValueError, AttributeError):
        return False


def _remember(path: Path, record: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.part")
        tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache only means the check runs again next time


PATH_VAR = "TOT_STARTUP_CHECK_SYS_PATH"
# The child imports this same ``solver`` package, from exactly the parent's module search path.
CHILD_CODE = (f"import json, os, sys; sys.path[:] = json.loads(os.environ.pop({PATH_VAR!r})); "
              "from solver.lm.startup_child import main; raise SystemExit(main(sys.argv[1:]))")


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def check_runtime(model: Path, threads: int, adapter: Path | None = None) -> None:
    """Return when this model (with the LoRA ``adapter``, if given) runs with this llama.cpp on this
    CPU (checked once and remembered); raise LMError with the cause and the fix otherwise, or
    AdapterError when the adapter is what fails."""
    if not model.is_file():
        raise LMError(f"no such model file: {model}")
    try:
        key, parts = check_key(model, adapter)
    except OSError as exc:
        if adapter is None:
            raise
        raise AdapterError(f"the adapter {adapter} cannot be read: {exc.strerror or exc}") from None
    if key in _passed_here:
        return
    record_path = _record_path(key)
    if _passed_before(record_path):
        _passed_here.add(key)
        return
    version = parts["runtime"]["llama_cpp"]
    start = time.perf_counter()
    args = [str(model), str(threads)] + ([str(adapter)] if adapter is not None else [])
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD_CODE, *args],
                              capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S,
                              env={**os.environ, PATH_VAR: json.dumps(sys.path)}, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise LMError(f"the embedded model's start-up check did not finish in {TIMEOUT_S:.0f} s "
                      f"(llama-cpp-python {version}); the machine may be overloaded: try again") from None
    seconds = time.perf_counter() - start
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    if adapter is not None and proc.returncode < 0:  # the model alone passed its check: the adapter did this
        raise AdapterError(f"the adapter {adapter.name} crashed llama.cpp ({_signal_name(-proc.returncode)}) "
                           f"in its start-up check with llama-cpp-python {version}; it is not a LoRA adapter "
                           f"this model can run")
    if adapter is not None and proc.returncode != 0:
        cause = lines[-1] if lines else f"exit status {proc.returncode}"
        raise AdapterError(f"the adapter {adapter.name} failed its start-up check with llama-cpp-python "
                           f"{version}: {cause}")
    if proc.returncode < 0:
        raise LMError(f"the embedded model crashed llama.cpp ({_signal_name(-proc.returncode)}) in its start-up "
                      f"check with llama-cpp-python {version} on this CPU; fix: {FIX}")
    if proc.returncode != 0:
        cause = lines[-1] if lines else f"exit status {proc.returncode}"
        raise LMError(f"the embedded model failed its start-up check with llama-cpp-python {version}: {cause}")
    _remember(record_path, {"passed": True, "seconds": round(seconds, 2),
                            "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **parts})
    _passed_here.add(key)
