"""Write a PEFT LoRA adapter as a GGUF LoRA file that llama.cpp (and llama-cpp-python's
``Llama(lora_path=...)``) loads beside the base model.

The layout is llama.cpp's own (its ``convert_lora_to_gguf.py``): ``general.type`` = adapter,
``adapter.type`` = lora, ``adapter.lora.alpha``, the base model's architecture, and for each
adapted weight ``<gguf name>.lora_a`` (rank x inputs) and ``.lora_b`` (outputs x rank). Tensor
names are mapped by the ``gguf`` package's own name table for the architecture, so no name is
written by hand here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["write_gguf_lora"]

_PEFT_PREFIX = "base_model.model."


def write_gguf_lora(tensors: dict[str, Any], path: Path, *, alpha: float, architecture: str, blocks: int,
                    name: str) -> int:
    """Write ``tensors`` (PEFT state-dict names -> numpy arrays of lora_A / lora_B) to ``path`` in
    float16; return the number of adapted weights. ValueError when a name has no GGUF mapping."""
    import gguf
    import numpy as np

    arch = next((a for a, n in gguf.MODEL_ARCH_NAMES.items() if n == architecture), None)
    if arch is None:
        raise ValueError(f"the gguf package knows no architecture {architecture!r}")
    names = gguf.get_tensor_name_map(arch, blocks)
    pairs: dict[str, dict[str, Any]] = {}
    for key, value in tensors.items():
        base = key.removeprefix(_PEFT_PREFIX)
        for part, suffix in (("a", ".lora_A.weight"), ("b", ".lora_B.weight")):
            if base.endswith(suffix):
                weight = base[: -len(suffix)] + ".weight"
                mapped = names.get_name(weight, try_suffixes=(".weight",))
                if mapped is None:
                    raise ValueError(f"no GGUF name for {weight} in {architecture}")
                pairs.setdefault(mapped, {})[part] = value
                break
        else:
            raise ValueError(f"not a LoRA A or B matrix: {key}")
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
