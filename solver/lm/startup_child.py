"""What the embedded model's start-up check runs in its child process (``solver.lm.startup_check``
starts it): load, complete and score as ``LocalBackend`` does, so that a native crash of
llama.cpp kills only this process. ``python -m solver.lm.startup_child MODEL.gguf THREADS
[ADAPTER.gguf]``: with an adapter (and its manifest beside it), the model runs with it.

Test hook: this child (and only it) reads ``TOT_STARTUP_CHECK_CRASH``; set to ``segv`` it kills
itself with SIGSEGV before loading anything, as a crashing llama.cpp would; set to
``segv-adapter``, only when it is given an adapter.
"""

from __future__ import annotations

import os
import signal
import sys

from solver.lm.adapters import read_adapter
from solver.lm.base import GenParams, LMError
from solver.lm.local import LocalBackend
from solver.lm.startup_check import CRASH_HOOK

__all__ = ["main"]


def _child(model: str, threads: int, adapter_path: str | None = None) -> None:
    """Load, complete and score as ``LocalBackend`` does; any native crash kills only this process."""
    hook = os.environ.get(CRASH_HOOK)
    if hook == "segv" or (hook == "segv-adapter" and adapter_path is not None):
        os.kill(os.getpid(), signal.SIGSEGV)
    adapter = read_adapter(adapter_path) if adapter_path is not None else None
    backend = LocalBackend(model, n_ctx=256, threads=threads, check=False, adapter=adapter)
    done = backend._complete_sync("1 + 1 =", GenParams(n=1, temperature=0.0, max_tokens=4, seed=0))
    scores, _ = backend._score_sync("The capital of France is", [" Paris"])
    if not done.texts or not scores or scores[0] != scores[0]:  # NaN is a broken runtime too
        raise LMError(f"the model ran but returned {done.texts!r} and scores {scores!r}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3) or not args[1].isdigit():
        print("usage: python -m solver.lm.startup_child MODEL.gguf THREADS [ADAPTER.gguf]", file=sys.stderr)
        return 2
    try:
        _child(args[0], int(args[1]), args[2] if len(args) == 3 else None)
    except Exception as exc:  # noqa: BLE001 - the parent reports the last line
        text = str(exc).splitlines()[0] if str(exc) else ""
        print(text if isinstance(exc, LMError) and text else f"{type(exc).__name__}: {text}", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
