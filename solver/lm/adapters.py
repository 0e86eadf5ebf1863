"""LoRA adapters for the embedded model: the ones shipped with the package and the ones a user
trains (``tot train``), each a GGUF LoRA file with a JSON manifest beside it.

A task ships its adapters itself (its plugin's ``adapters``, e.g. ``tasks/game24/adapters/``);
the command line hands their paths to the run (``ModelSettings.shipped_adapters``), and this
module names no task. ``--adapter auto`` (the default) uses the first of them whose manifest says
it measurably helps (``"default": true``, with the figures), and only with the embedded default
model it was trained on; ``off`` never uses one; a path uses that file (its manifest must name the
base model's sha256, which is checked against the model loaded).

An adapter changes which thought is tried first and how states are ranked, never a verdict:
every thought still passes the gate. A model run with an adapter is a different model: its
name carries the adapter's sha256, so recorded answers of the plain model are never replayed for
it (or the other way round). An adapter trained on the task's short prompts (``TrainingPrompts``)
gets those prompts in place of the few-shot ones, for the kinds it was trained on (``value``:
the value and likelihood evaluators; ``step``: propose, sample and enumerate-rank).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

from solver.inputs import file_sha256 as sha256_of
from solver.lm.base import LMError
from solver.lm.cache import cache_dir
from solver.lm.gguf_check import GGUFError, GGUFFile, LoraInfo, check_fits, check_lora, read_gguf

__all__ = ["Adapter", "AdapterBackend", "AdapterError", "adapter_of", "check_adapter_fits", "default_adapter",
           "file_sha256", "read_adapter", "resolve_adapter", "trained_for"]

MAX_MANIFEST = 1 << 20
KINDS = ("value", "step")


class AdapterError(LMError, ValueError):
    """The adapter file a user named cannot be used: missing, unreadable, not a LoRA adapter llama.cpp
    can load, made for another model, or its manifest is wrong. A ValueError as well as an LMError:
    the command line reports it as the user's input (exit 2), and code that catches LMError from
    model set-up still does."""


@dataclass(frozen=True, slots=True)
class Adapter:
    """A GGUF LoRA file, its sha256 and what its manifest says of it."""

    path: Path
    sha256: str
    task: str | None
    trained_for: frozenset[str]
    base_sha256: str | None
    default: bool = False
    manifest: dict[str, Any] = field(default_factory=dict, compare=False)

    def describe(self) -> dict[str, str]:
        """What the trace's start event and ``--json`` name: the file and its sha256."""
        return {"file": self.path.name, "sha256": self.sha256}

    @property
    def tag(self) -> str:
        """A short name that tells adapters apart in model names and cache keys."""
        return f"{self.path.stem}@{self.sha256[:12]}"


@runtime_checkable
class AdapterBackend(Protocol):
    """A backend that may run a LoRA adapter (the embedded model)."""

    adapter: Adapter | None


def adapter_of(backend: object) -> Adapter | None:
    """The adapter ``backend`` runs, or None (a backend without adapters included)."""
    return backend.adapter if isinstance(backend, AdapterBackend) else None


def trained_for(backend: object, kind: str) -> bool:
    """Whether ``backend`` runs an adapter trained on the short prompts of ``kind`` (value, step)."""
    return isinstance(backend, AdapterBackend) and backend.adapter is not None and kind in backend.adapter.trained_for


def file_sha256(path: Path) -> str:
    """``solver.inputs.file_sha256``, remembered in the cache directory by path, size and
    modification time (the embedded model's 250 MB take a second to hash)."""
    st = path.stat()
    memo = cache_dir() / "sha256.json"
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    known: dict[str, str] = {}
    try:
        if memo.is_file() and memo.stat().st_size < MAX_MANIFEST:
            known = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if key in known:
        return known[key]
    digest = sha256_of(path)
    known = {k: v for k, v in known.items() if not k.startswith(f"{path.resolve()}|")}
    known[key] = digest
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_suffix(f".{os.getpid()}.part")
        tmp.write_text(json.dumps(known), encoding="utf-8")
        os.replace(tmp, memo)
    except OSError:
        pass
    return digest


def read_adapter(path: str | Path) -> Adapter:
    """The adapter at ``path`` (a ``.gguf`` LoRA with ``NAME.json`` beside it); AdapterError (one
    line) when either is missing or unreadable, the file is not a LoRA adapter llama.cpp can load
    (solver/lm/gguf_check.py: header, keys, tensor table and data layout, read with bounded reads),
    or the manifest is wrong."""
    p = Path(path)
    if p.is_dir():
        raise AdapterError(f"the adapter {p} is a directory, not a GGUF file")
    if not p.is_file():
        raise AdapterError(f"no such adapter file: {p}")
    lora_info(p)
    side = p.with_suffix(".json")
    if not side.is_file():
        raise AdapterError(f"the adapter {p.name} has no manifest {side.name} beside it (tot train writes both)")
    try:
        if side.stat().st_size > MAX_MANIFEST:
            raise ValueError("larger than 1 MiB")
        manifest = json.loads(side.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        raise AdapterError(f"the adapter manifest {side} is not readable: {exc}") from None
    kinds = manifest.get("trained_for", [])
    if not isinstance(kinds, list) or not all(isinstance(k, str) and k in KINDS for k in kinds):
        raise AdapterError(f"{side}: trained_for must list some of {', '.join(KINDS)}")
    task = manifest.get("task")
    if task is not None and not isinstance(task, str):
        raise AdapterError(f"{side}: task must be a task's name")
    try:
        digest = file_sha256(p)
    except OSError as exc:
        raise AdapterError(f"the adapter {p} cannot be read: {exc.strerror or exc}") from None
    if manifest.get("sha256") not in (None, digest):
        raise AdapterError(f"{p} does not match the sha256 its manifest records")
    base = manifest.get("base_model", {}).get("sha256") if isinstance(manifest.get("base_model"), dict) else None
    if base is not None and not isinstance(base, str):
        raise AdapterError(f"{side}: base_model.sha256 must be a sha256")
    return Adapter(p, digest, task, frozenset(kinds), base, bool(manifest.get("default")), manifest)


def lora_info(path: Path) -> LoraInfo:
    """What solver/lm/gguf_check.py finds in the adapter file at ``path``: AdapterError with its
    reason when llama.cpp should not be given it."""
    try:
        return check_lora(read_gguf(path))
    except GGUFError as exc:
        raise AdapterError(f"the adapter {path} is not a LoRA adapter llama.cpp can load: {exc}") from None
    except OSError as exc:
        raise AdapterError(f"the adapter {path} cannot be read: {exc.strerror or exc}") from None


_bases: dict[tuple[str, int, int], GGUFFile] = {}  # the model files read here: (path, size, mtime) -> table


def check_adapter_fits(adapter: Adapter, model: Path) -> None:
    """AdapterError unless the adapter file fits the GGUF model at ``model`` (its architecture, and
    each LoRA pair a tensor of the model with the shapes llama.cpp requires); an LMError when the
    model file itself cannot be read as GGUF. Pure Python, before llama.cpp sees the adapter."""
    info = lora_info(adapter.path)
    try:
        st = model.stat()
        key = (str(model.resolve()), st.st_size, st.st_mtime_ns)
        if key not in _bases:
            _bases.clear()  # one model per process, in practice
            _bases[key] = read_gguf(model)
        base = _bases[key]
    except (OSError, GGUFError) as exc:
        raise LMError(f"the model {model} cannot be read as GGUF: {exc}") from None
    try:
        check_fits(info, base)
    except GGUFError as exc:
        raise AdapterError(f"the adapter {adapter.path.name} does not fit the model {model.name}: {exc}") from None


def default_adapter(shipped: Sequence[str | Path]) -> Adapter | None:
    """The first of a task's shipped adapters whose manifest makes it the default, or None."""
    for path in shipped:
        adapter = read_adapter(path)
        if adapter.default:
            return adapter
    return None


def resolve_adapter(setting: str, task: str | None, *, default_model: bool,
                    shipped: Sequence[str | Path] = ()) -> Adapter | None:
    """The adapter ``--adapter SETTING`` names for a run of ``task``: ``off`` none; ``auto`` the
    default one of the task's ``shipped`` adapters where the run uses the embedded default model;
    else the file at that path."""
    if setting == "off":
        return None
    if setting == "auto":
        return default_adapter(shipped) if default_model else None
    adapter = read_adapter(setting)
    if task and adapter.task not in (None, task):
        raise AdapterError(f"the adapter {adapter.path.name} was trained for {adapter.task}, not {task}")
    return adapter
