"""A bounded reader of GGUF headers and tensor tables, and the checks a LoRA adapter must pass
before llama.cpp sees it (standard library only: the runtime path does not need the train extra).

llama.cpp refuses most broken files with an error, but not all of them: it asserts (and aborts the
process) on a key of the wrong type (``general.type`` or ``general.architecture`` not a string,
``adapter.lora.alpha`` not one float32) and on a LoRA pair whose ranks disagree; and
llama-cpp-python 0.3 does not notice when llama.cpp refuses an adapter (a NULL adapter passes its
``is None`` test) and sets it anyway, so the first decode dereferences NULL. ``read_gguf`` reads a
file's header, keys and tensor table with every read bounded by the file's size and every count
bounded (``MAX_TENSORS``, ``MAX_KEYS``, ``MAX_STRING``); ``check_lora`` holds an adapter to what
llama.cpp's loader expects (the keys and their types, pairs of ``.lora_a``/``.lora_b`` tensors of
float types, two dimensions, matching ranks, the data's layout inside the file); ``check_fits``
holds it to the base model's architecture, tensor names and shapes. Each refusal is a
``GGUFError`` with a one-line reason (names from the file are quoted with ``repr``).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["GGUFError", "GGUFFile", "LoraInfo", "Tensor", "check_fits", "check_lora", "read_gguf"]

MAGIC = b"GGUF"
VERSIONS = (2, 3)  # llama.cpp reads versions 2 and 3 (1 is no longer supported)
MAX_TENSORS = 1 << 16
MAX_KEYS = 1 << 16
MAX_STRING = 1 << 20  # bytes in one key, string value or tensor name read here
MAX_NAME = 63  # llama.cpp's GGML_MAX_NAME (64) less its terminating NUL
MAX_DIMS = 4
DEFAULT_ALIGNMENT = 32
ARRAY = 9
STRING = 8
FLOAT32 = 6
UINT32 = 4
# GGUF value types: struct format of one scalar (strings and arrays are read apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<b", 10: "<Q", 11: "<q", 12: "<d"}
_TYPE_NAMES = {0: "uint8", 1: "int8", 2: "uint16", 3: "int16", 4: "uint32", 5: "int32", 6: "float32", 7: "bool",
               8: "string", 9: "array", 10: "uint64", 11: "int64", 12: "float64"}
# ggml tensor types an adapter may hold (what convert_lora_to_gguf.py and tot train write): id ->
# (name, elements per block, bytes per block). llama.cpp multiplies with them on every CPU.
LORA_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 8: ("Q8_0", 32, 34), 30: ("BF16", 1, 2)}
_CHUNK = 1 << 16


class GGUFError(ValueError):
    """The file is not a GGUF file of the kind asked for; the message is one line."""


@dataclass(frozen=True, slots=True)
class Tensor:
    """One entry of a GGUF tensor table: ``ne`` is ggml's order (the row length first), padded to
    four dimensions with ones; ``dims`` how many the file gives."""

    name: str
    dims: int
    ne: tuple[int, int, int, int]
    type: int
    offset: int


@dataclass(frozen=True, slots=True)
class GGUFFile:
    """What ``read_gguf`` read: the version, each key's type and value (arrays: ``(element type,
    count)``, their elements skipped), the tensor table, the alignment, where the data section
    starts and the file's size."""

    path: Path
    version: int
    values: dict[str, tuple[int, Any]]
    tensors: tuple[Tensor, ...]
    alignment: int
    data_offset: int
    size: int

    def string(self, key: str) -> str | None:
        """The string value of ``key``; None when absent; GGUFError when of another type (llama.cpp
        aborts on that)."""
        if key not in self.values:
            return None
        kind, value = self.values[key]
        if kind != STRING:
            raise GGUFError(f"its key {key} is a {_TYPE_NAMES.get(kind, kind)}, not a string")
        return str(value)


@dataclass(frozen=True, slots=True)
class LoraInfo:
    """An adapter that passed ``check_lora``: its architecture, alpha and LoRA pairs (base tensor
    name -> (lora_a, lora_b))."""

    architecture: str
    alpha: float | None
    pairs: dict[str, tuple[Tensor, Tensor]]


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


class _Reader:
    """Reads a file front to back through a small window: every read is checked against the bytes
    the file still has, and a skip past an array's elements seeks instead of reading them."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self._f = f
        self.size = size
        self._buf = b""
        self._at = 0  # position in _buf
        self._base = 0  # file offset of _buf[0]

    @property
    def pos(self) -> int:
        return self._base + self._at

    def _need(self, n: int, what: str) -> None:
        if n > self.size - self.pos:
            raise GGUFError(f"the file ends inside {what} (at byte {self.pos}, {n} more bytes needed, "
                            f"{self.size - self.pos} left)")
        if self._at + n > len(self._buf):
            rest = self._buf[self._at:]
            more = self._f.read(max(n - len(rest), _CHUNK))
            self._base += self._at
            self._buf, self._at = rest + more, 0
            if len(self._buf) < n:
                raise GGUFError(f"the file ends inside {what} (it was shorter than its size said)")

    def take(self, n: int, what: str) -> bytes:
        self._need(n, what)
        out = self._buf[self._at:self._at + n]
        self._at += n
        return out

    def scalar(self, fmt: str, what: str) -> Any:
        n = struct.calcsize(fmt)
        self._need(n, what)
        value = struct.unpack_from(fmt, self._buf, self._at)[0]
        self._at += n
        return value

    def skip(self, n: int, what: str) -> None:
        if n > self.size - self.pos:
            raise GGUFError(f"the file ends inside {what} (at byte {self.pos}, {n} more bytes needed, "
                            f"{self.size - self.pos} left)")
        if self._at + n <= len(self._buf):
            self._at += n
            return
        target = self.pos + n
        self._f.seek(target)
        self._buf, self._at, self._base = b"", 0, target

    def string(self, what: str, limit: int = MAX_STRING) -> str:
        n = self.scalar("<Q", what)
        if n > limit:
            raise GGUFError(f"{what} is {n} bytes long, over the {limit} read here")
        return self.take(n, what).decode("utf-8", "replace")

    def skip_strings(self, count: int, what: str) -> None:
        for _ in range(count):
            n = self.scalar("<Q", what)
            if n > MAX_STRING:
                raise GGUFError(f"{what} holds a string of {n} bytes, over the {MAX_STRING} read here")
            self.skip(n, what)


def read_gguf(path: str | Path) -> GGUFFile:
    """The header, keys and tensor table of the GGUF file at ``path``, read with bounded reads and
    counts (the tensor data is not read); GGUFError with a one-line reason when it is not a well
    formed GGUF file; OSError when it cannot be read."""
    p = Path(path)
    with open(p, "rb") as f:
        size = f.seek(0, 2)
        f.seek(0)
        r = _Reader(f, size)
        if size < 4 or r.take(4, "the magic") != MAGIC:
            raise GGUFError("it does not start with GGUF")
        version = r.scalar("<I", "the header")
        if version not in VERSIONS:
            raise GGUFError(f"it is GGUF version {version}; llama.cpp reads versions 2 and 3")
        n_tensors = r.scalar("<Q", "the header")
        n_keys = r.scalar("<Q", "the header")
        left = size - r.pos
        for count, what, most, least in ((n_tensors, "tensors", MAX_TENSORS, 25), (n_keys, "keys", MAX_KEYS, 13)):
            if count > most:
                raise GGUFError(f"its header claims {count} {what}, over the {most} read here")
            if count * least > left:  # a tensor's entry takes at least 25 bytes, a key at least 13
                raise GGUFError(f"its header claims {count} {what}, more than its {size} bytes can hold (cut short?)")
        values: dict[str, tuple[int, Any]] = {}
        for i in range(n_keys):
            key = r.string(f"key {i}'s name")
            if not key:
                raise GGUFError(f"key {i} has an empty name")
            if key in values:
                raise GGUFError(f"the key {_quote(key)} appears twice")
            values[key] = _value(r, _quote(key))
        alignment = DEFAULT_ALIGNMENT
        if "general.alignment" in values:
            kind, alignment = values["general.alignment"]
            if kind != UINT32 or alignment == 0 or alignment & (alignment - 1):
                raise GGUFError(f"its general.alignment ({alignment!r}) is not a power of two (a uint32)")
        tensors: list[Tensor] = []
        names: set[str] = set()
        for i in range(n_tensors):
            tensors.append(_tensor(r, i, names))
        data_offset = -(-r.pos // alignment) * alignment if n_tensors else r.pos
        if data_offset > size:
            raise GGUFError("the file ends before its data section begins")
        return GGUFFile(p, version, values, tuple(tensors), alignment, data_offset, size)


def _value(r: _Reader, key: str) -> tuple[int, Any]:
    kind = r.scalar("<I", f"the type of {key}")
    if kind in _SCALARS:
        return kind, r.scalar(_SCALARS[kind], f"the value of {key}")
    if kind == STRING:
        return kind, r.string(f"the value of {key}")
    if kind != ARRAY:
        raise GGUFError(f"the key {key} has the unknown type {kind}")
    inner = r.scalar("<I", f"the array {key}")
    count = r.scalar("<Q", f"the array {key}")
    if inner == STRING:
        if count * 8 > r.size - r.pos:
            raise GGUFError(f"the array {key} claims {count} strings, more than the file can hold")
        r.skip_strings(count, f"the array {key}")
    elif inner in _SCALARS:
        r.skip(count * struct.calcsize(_SCALARS[inner]), f"the array {key} ({count} elements)")
    else:  # llama.cpp reads no arrays of arrays
        raise GGUFError(f"the array {key} has elements of type {inner}, which GGUF arrays cannot hold")
    return ARRAY, (inner, count)


def _tensor(r: _Reader, i: int, names: set[str]) -> Tensor:
    name = r.string(f"tensor {i}'s name")
    if len(name.encode("utf-8")) > MAX_NAME or "\x00" in name:
        raise GGUFError(f"tensor {i}'s name {_quote(name)} is longer than {MAX_NAME} bytes or holds a NUL")
    if name in names:
        raise GGUFError(f"the tensor {_quote(name)} appears twice")
    names.add(name)
    dims = r.scalar("<I", f"the tensor {_quote(name)}")
    if dims > MAX_DIMS:
        raise GGUFError(f"the tensor {_quote(name)} has {dims} dimensions, over ggml's {MAX_DIMS}")
    ne = [r.scalar("<q", f"the tensor {_quote(name)}") for _ in range(dims)] + [1] * (MAX_DIMS - dims)
    if any(n < 0 for n in ne) or math.prod(ne) >= 1 << 62:
        raise GGUFError(f"the tensor {_quote(name)} has the shape {ne[:dims]}, which no tensor can have")
    kind = r.scalar("<i", f"the tensor {_quote(name)}")
    offset = r.scalar("<Q", f"the tensor {_quote(name)}")
    return Tensor(name, dims, (ne[0], ne[1], ne[2], ne[3]), kind, offset)


def check_lora(g: GGUFFile) -> LoraInfo:
    """What llama.cpp's LoRA loader needs of ``g``, checked before it sees the file: ``general.type``
    ``adapter``, ``adapter.type`` ``lora``, ``general.architecture`` a string and
    ``adapter.lora.alpha`` (if any) one finite float32; tensors in ``NAME.lora_a``/``NAME.lora_b``
    pairs (``*_norm.weight`` tensors llama.cpp skips), of F32, F16, BF16 or Q8_0, two dimensions,
    ranks that agree; the data laid out as llama.cpp computes it and inside the file."""
    for key, want in (("general.type", "adapter"), ("adapter.type", "lora")):
        value = g.string(key)
        if value is None:
            raise GGUFError(f"it has no {key} (a LoRA adapter's is {want!r})")
        if value != want:
            hint = " (a model, not an adapter?)" if key == "general.type" else ""
            raise GGUFError(f"its {key} is {_quote(value)}, not {want!r}{hint}")
    arch = g.string("general.architecture")
    if not arch:
        raise GGUFError("it names no general.architecture")
    alpha: float | None = None
    if "adapter.lora.alpha" in g.values:
        kind, value = g.values["adapter.lora.alpha"]
        if kind != FLOAT32 or not math.isfinite(value):
            raise GGUFError(f"its adapter.lora.alpha is not one finite float32 ({_TYPE_NAMES.get(kind, kind)})")
        alpha = float(value)
    if "adapter.alora.invocation_tokens" in g.values:
        raise GGUFError("it is an activated LoRA (adapter.alora.invocation_tokens), which tot does not run")
    halves: dict[str, dict[str, Tensor]] = {}
    for t in g.tensors:
        for suffix in (".lora_a", ".lora_b"):
            if t.name.endswith(suffix):
                base = t.name[: -len(suffix)]
                if not base or ".lora_a" in base or ".lora_b" in base:
                    raise GGUFError(f"its tensor name {_quote(t.name)} is not NAME.lora_a or NAME.lora_b")
                halves.setdefault(base, {})[suffix] = t
                break
        else:
            if not t.name.endswith("_norm.weight"):
                raise GGUFError(f"its tensor {_quote(t.name)} is neither a .lora_a nor a .lora_b tensor")
        if t.type not in LORA_TYPES:
            raise GGUFError(f"its tensor {_quote(t.name)} has ggml type {t.type}, not one of "
                            f"{', '.join(n for n, _, _ in LORA_TYPES.values())}")
        blck = LORA_TYPES[t.type][1]
        if t.dims > 2 or t.ne[2] != 1 or t.ne[3] != 1 or min(t.ne) < 1 or t.ne[0] % blck:
            raise GGUFError(f"its tensor {_quote(t.name)} has the shape {list(t.ne[:t.dims])}, not two "
                            f"dimensions of at least 1 (rows a multiple of {blck})")
    pairs: dict[str, tuple[Tensor, Tensor]] = {}
    for base, got in halves.items():
        if ".lora_a" not in got or ".lora_b" not in got:
            lacks = ".lora_b" if ".lora_a" in got else ".lora_a"
            raise GGUFError(f"the LoRA pair for {_quote(base)} lacks its {lacks}")
        a, b = got[".lora_a"], got[".lora_b"]
        rank_a = a.ne[0] if base.endswith("token_embd.weight") else a.ne[1]
        if rank_a != b.ne[0]:
            raise GGUFError(f"the LoRA pair for {_quote(base)} has ranks {rank_a} and {b.ne[0]}, which must agree")
        pairs[base] = (a, b)
    if not pairs:
        raise GGUFError("it holds no LoRA tensors")
    expected = 0
    for t in g.tensors:  # llama.cpp: each tensor right after the one before, padded to the alignment
        name, blck, size = LORA_TYPES[t.type]
        nbytes = t.ne[0] // blck * size * t.ne[1]
        if t.offset != expected:
            raise GGUFError(f"its tensor {_quote(t.name)} starts at data offset {t.offset}, not {expected}")
        if g.data_offset + t.offset + nbytes > g.size:
            raise GGUFError(f"the file ends inside the data of its tensor {_quote(t.name)} "
                            f"(cut short: {g.size} bytes, {g.data_offset + t.offset + nbytes} needed)")
        expected += -(-nbytes // g.alignment) * g.alignment
    return LoraInfo(arch, alpha, pairs)


def check_fits(lora: LoraInfo, base: GGUFFile) -> None:
    """GGUFError unless the adapter ``lora`` fits the model ``base``: the same architecture, and
    each pair on a two-dimensional tensor of the model, with the shapes llama.cpp requires
    (``lora_a`` as long as the tensor's rows and ``lora_b`` as wide as its columns; the token
    embedding's pair transposed)."""
    arch = base.string("general.architecture")
    if arch != lora.architecture:
        raise GGUFError(f"it is for the architecture {_quote(lora.architecture)}, the model is {arch!r}")
    tensors = {t.name: t for t in base.tensors}
    for name, (a, b) in lora.pairs.items():
        t = tensors.get(name)
        if t is None:
            raise GGUFError(f"the model has no tensor {_quote(name)} for its LoRA pair (another model's adapter?)")
        if t.ne[2] != 1 or t.ne[3] != 1:
            raise GGUFError(f"the model's tensor {_quote(name)} has more than two dimensions")
        if name.endswith("token_embd.weight"):
            fits = t.ne[0] == b.ne[1] and t.ne[1] == a.ne[1]
        else:
            fits = t.ne[0] == a.ne[0] and t.ne[1] == b.ne[1]
        if not fits:
            raise GGUFError(f"its LoRA pair for {_quote(name)} has shapes {list(a.ne[:2])} and {list(b.ne[:2])}, "
                            f"which do not fit the model's {list(t.ne[:2])} (another model's adapter?)")
