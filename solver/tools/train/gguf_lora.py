"""Write a PEFT LoRA adapter as a GGUF LoRA file that llama.cpp (and llama-cpp-python's
``Llama(lora_path=...)``) loads beside the base model.

The layout is llama.cpp's own (its ``convert_lora_to_gguf.py``): ``general.type`` = adapter,
``adapter.type`` = lora, ``adapter.lora.alpha``, the base model's architecture, and for each
adapted weight ``<gguf name>.lora_a`` (rank x inputs) and ``.lora_b`` (outputs x rank). Tensor
names are mapped by the ``gguf`` package's own name table for the architecture, so no name is
written by hand here.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

__all__ = ["check_gguf_lora", "read_gguf_lora", "write_gguf_lora"]

_PEFT_PREFIX = "base_model.model."


def write_gguf_lora(tensors: dict[str, Any], path: Path, *, alpha: float, architecture: str, blocks: int,
                    name: str) -> int:
    """Write ``tensors`` (PEFT state-dict names -> numpy arrays of lora_A / lora_B) to ``path`` in
    float16; return the number of adapted weights. ValueError when a name has no GGUF mapping."""
    import gguf
    import numpy as np

    pairs: dict[str, dict[str, Any]] = {}
    for key, (mapped, part) in _gguf_names(tensors, architecture, blocks).items():
        pairs.setdefault(mapped, {})[part] = tensors[key]
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
    writer.add_name(name)
    for mapped in sorted(pairs):
        ab = pairs[mapped]
        if set(ab) != {"a", "b"}:
            raise ValueError(f"{mapped}: lora_A and lora_B must both be present")
        writer.add_tensor(f"{mapped}.lora_a", np.ascontiguousarray(ab["a"], dtype=np.float16))
        writer.add_tensor(f"{mapped}.lora_b", np.ascontiguousarray(ab["b"], dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return len(pairs)


def _gguf_names(keys: Any, architecture: str, blocks: int) -> dict[str, tuple[str, str]]:
    """PEFT state-dict name -> (GGUF weight name, ``a`` or ``b``), by the gguf package's own name
    table for the architecture. ValueError for a name it does not map."""
    import gguf

    arch = next((a for a, n in gguf.MODEL_ARCH_NAMES.items() if n == architecture), None)
    if arch is None:
        raise ValueError(f"the gguf package knows no architecture {architecture!r}")
    names = gguf.get_tensor_name_map(arch, blocks)
    out: dict[str, tuple[str, str]] = {}
    for key in keys:
        base = key.removeprefix(_PEFT_PREFIX)
        for part, suffix in (("a", ".lora_A.weight"), ("b", ".lora_B.weight")):
            if base.endswith(suffix):
                weight = base[: -len(suffix)] + ".weight"
                mapped = names.get_name(weight, try_suffixes=(".weight",))
                if mapped is None:
                    raise ValueError(f"no GGUF name for {weight} in {architecture}")
                out[key] = (mapped, part)
                break
        else:
            raise ValueError(f"not a LoRA A or B matrix: {key}")
    return out


def read_gguf_lora(path: Path, keys: Any, *, architecture: str, blocks: int) -> tuple[dict[str, Any], float]:
    """The A and B matrices of a GGUF LoRA file for the PEFT state-dict names ``keys`` (float32
    numpy arrays, as :func:`write_gguf_lora` took them), and the file's alpha. ValueError (one
    line) for a file that is not a LoRA adapter, or lacks one of the matrices."""
    import numpy as np

    reader, alpha = _open_lora(path, architecture)
    stored = {t.name: t for t in reader.tensors}
    out: dict[str, Any] = {}
    for key, (mapped, part) in _gguf_names(keys, architecture, blocks).items():
        t = stored.get(f"{mapped}.lora_{part}")
        if t is None:
            raise ValueError(f"{path} has no {mapped}.lora_{part}")
        out[key] = np.asarray(t.data, dtype=np.float32).reshape([int(n) for n in reversed(t.shape)])
    return out, float(alpha) if alpha is not None else float("nan")


def _open_lora(path: Path, architecture: str) -> tuple[Any, Any]:
    """The file's reader and its LoRA alpha; ValueError (one line) for a file that is not a GGUF
    LoRA adapter for ``architecture``."""
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except (OSError, ValueError, IndexError, KeyError, struct.error) as exc:  # what a bad or cut file raises
        raise ValueError(f"{path} is not a readable GGUF file: {exc or type(exc).__name__}") from None

    def field(name: str) -> Any:
        f = reader.get_field(name)
        return None if f is None else f.contents()

    if field(gguf.Keys.General.TYPE) != "adapter" or field(gguf.Keys.Adapter.TYPE) != "lora":
        raise ValueError(f"{path} is not a GGUF LoRA adapter")
    if field(gguf.Keys.General.ARCHITECTURE) != architecture:
        raise ValueError(f"{path} is an adapter for {field(gguf.Keys.General.ARCHITECTURE)!r}, not {architecture}")
    return reader, field(gguf.Keys.Adapter.LORA_ALPHA)


def check_gguf_lora(path: Path, architecture: str) -> None:
    """ValueError (one line) unless ``path`` is a GGUF LoRA adapter for ``architecture`` (before
    a training run loads the model to start from it)."""
    _open_lora(path, architecture)
