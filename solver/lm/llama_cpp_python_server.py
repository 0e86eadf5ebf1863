"""llama-cpp-python's OpenAI-compatible server, loading models the way ``tot`` loads them.

    python -m solver.lm.llama_cpp_python_server [llama_cpp.server's options]

is ``python -m llama_cpp.server`` with extra buffer types off: with them on (the server's default,
and none of its options turns them off) the first decode crashes the server on CPUs with AMX,
Intel Sapphire Rapids and later (llama.cpp issue 20824; see ``local._without_extra_buffer_types``).
Every option is the server's own. Without ``--model`` (and without ``--config_file`` or the
``MODEL``/``CONFIG_FILE`` environment variables the server also reads) it serves the embedded
model: ``--model`` its GGUF file, ``--model_alias gemma3-270m``, ``--chat_format gemma``; options
given on the command line win over these. It needs the server's packages
(``pip install 'llama-cpp-python[server]'``); without them it ends with one line and exit 2. A
model that does not load ends with one line and exit 1.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

from solver.lm.base import LMError

__all__ = ["EMBEDDED_ALIAS", "main", "server_args"]

EMBEDDED_ALIAS = "gemma3-270m"
PROG = "python -m solver.lm.llama_cpp_python_server"


def _names_a_model(args: Sequence[str]) -> bool:
    """Whether the server would be told its model(s) by ``args`` or its environment."""
    for arg in args:
        name = arg.split("=", 1)[0]
        if name in ("--model", "--config_file"):
            return True
    return bool(os.environ.get("MODEL") or os.environ.get("CONFIG_FILE"))


def server_args(args: Sequence[str]) -> list[str]:
    """The server's command line: ``args`` as given, after the embedded model's defaults when they
    name no model (the server's argparse keeps an option's last value, so the user's win)."""
    if _names_a_model(args):
        return list(args)
    from solver.lm.local import model_path

    return ["--model", str(model_path()), "--model_alias", EMBEDDED_ALIAS, "--chat_format", "gemma", *args]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        from llama_cpp import _internals
        from llama_cpp.server import __main__ as server
    except ImportError as exc:
        print(f"{PROG}: error: llama-cpp-python's server is not installed ({exc}); "
              "pip install 'llama-cpp-python[server]'", file=sys.stderr)
        return 2
    try:
        full = server_args(args)
    except LMError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    from solver.lm.local import _without_extra_buffer_types

    # The server builds each model with llama_cpp.Llama, which reads _internals.LlamaModel when it
    # loads: the stand-in stays for the life of this process, which serves nothing else.
    _internals.LlamaModel = _without_extra_buffer_types()  # type: ignore[misc]
    sys.argv = [PROG, *full]
    try:
        server.main()
    except (ValueError, OSError) as exc:  # e.g. "Model path does not exist: ...", a port in use
        print(f"{PROG}: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
