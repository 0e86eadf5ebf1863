"""Where planning inputs come from: bounded reads of PDDL and English files, the LLM+P folder,
and the one puzzle text that carries a domain and its problem together."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from verifiers.pddl_model import MAX_PDDL_CHARS
from verifiers.pddl_text import join_puzzle, split_forms, split_puzzle

__all__ = ["LLMP_DOMAINS", "domain_file", "join_puzzle", "llmp_dir", "read_text", "split_forms", "split_puzzle"]

LLMP_DOMAINS = ("barman", "blocksworld", "floortile", "grippers", "storage", "termes", "tyreworld")


def read_text(path: str | Path, what: str, limit: int = MAX_PDDL_CHARS) -> str:
    """The text of a regular file of at most ``limit`` bytes; ValueError with a one-line reason otherwise."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError:
        raise ValueError(f"no such {what} file: {p}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what} {p} is not a regular file")
    if st.st_size > limit:
        raise ValueError(f"{what} file {p} is larger than {limit} bytes")
    with open(p, "rb") as f:
        data = f.read(limit + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what} file {p} is not UTF-8 text") from None


def llmp_dir(given: str | None = None) -> Path:
    """The LLM+P domains folder: ``given``, else ``$TOT_LLMP_DIR``, else ``../shared/data/llmp``
    beside the checkout or the working directory. The data has no licence: it is read, never copied."""
    if given:
        candidates = [Path(given)]
    else:
        candidates = []
        if os.environ.get("TOT_LLMP_DIR"):
            candidates.append(Path(os.environ["TOT_LLMP_DIR"]))
        candidates.append(Path(__file__).resolve().parents[3] / "shared" / "data" / "llmp")
        candidates.append(Path.cwd().parent / "shared" / "data" / "llmp")
    for c in candidates:
        if c.is_dir():
            return c
    raise ValueError(f"no LLM+P data folder at {candidates[-1]} (give --llmp-dir DIR or set TOT_LLMP_DIR)")


def domain_file(folder: Path) -> Path:
    """tyreworld's domain.pddl names the constant ``wrench`` without declaring it; LLM+P ships
    ``domain_validation.pddl`` beside it for checking plans, and so it is used where present."""
    val = folder / "domain_validation.pddl"
    return val if val.is_file() else folder / "domain.pddl"
