"""Hypothesis feeds the adapter reader and checks (``read_adapter``, then ``check_adapter_fits``
against the embedded model) 2,000 random and mutated adapter files: the shipped
tasks/game24/adapters/game24.gguf cut anywhere, with bytes flipped, header fields (version, tensor and
key counts) set to edge values, a tensor's name, dimension count, shape, type or offset corrupted, a
key's name, type, length or value corrupted, a LoRA pair's halves swapped; ``GGUF`` then random
bytes; random bytes; the start of the base model's file and the file itself. Each must be a
one-line AdapterError or pass the checks; any other exception fails the test. Every file that
passes is then loaded by llama.cpp (load_llama, a completion) in a child process, which must
neither crash nor raise anything but a one-line error.

Files are written sparse beyond the first 64 KiB of the adapter's data (zeros there: writing 7.6 MB
per example would take most of the test's time); the reader never reads tensor data, and a file
that passes is loaded by llama.cpp exactly as it was checked. ``-s`` prints the tally.
"""

from __future__ import annotations

import json
import math
import shutil
import struct
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lm.adapters import AdapterError, check_adapter_fits, file_sha256, read_adapter
from solver.lm.local import model_path
from tasks.game24.cli import SHIPPED_ADAPTER
from tests.profiles import examples
from tests.test_adapter_files import load_each

pytestmark = pytest.mark.model

ADAPTER = SHIPPED_ADAPTER
EXAMPLES = examples(2000)
MAX_LOADS = 6  # files that passed the checks, loaded by llama.cpp (one of each kind of mutation at most)

U64 = [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 100, 251, 252, 253, 255, 256, 640, 1024, 4095, 4096,
       1 << 16, (1 << 16) + 1, (1 << 20) + 1, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 40, (1 << 62) + 1,
       (1 << 63) - 1, 1 << 63, (1 << 64) - 1]
INTERESTING = st.one_of(st.sampled_from(U64), st.integers(0, (1 << 64) - 1), st.integers(-(1 << 63), -1))


@dataclass(frozen=True)
class Layout:
    """Where each field of the shipped adapter is (from the gguf package's reader, not ours)."""

    size: int
    data_offset: int
    keys: list[dict[str, tuple[int, int]]]  # per key: part -> (offset, width)
    tensors: list[dict[str, tuple[int, int]]]  # per tensor: part -> (offset, width)
    pairs: list[tuple[int, int]]  # tensor indices of each pair's lora_a and lora_b


def layout() -> Layout:
    gguf = pytest.importorskip("gguf")
    r = gguf.GGUFReader(str(ADAPTER))

    def parts(field: Any, names: list[str]) -> dict[str, tuple[int, int]]:
        out, at = {}, field.offset
        for name, part in zip(names, field.parts, strict=False):
            out[name] = (at, part.nbytes)
            at += part.nbytes
        return out

    keys = [parts(f, ["key_len", "key", "type", "value_len" if len(f.parts) == 5 else "value", "value"])
            for name, f in r.fields.items() if not name.startswith("GGUF.")]
    tensors = [parts(t.field, ["name_len", "name", "n_dims", "dims", "type", "offset"]) for t in r.tensors]
    index = {t.name: i for i, t in enumerate(r.tensors)}
    pairs = [(i, index[t.name[:-1] + "b"]) for i, t in enumerate(r.tensors) if t.name.endswith(".lora_a")]
    return Layout(ADAPTER.stat().st_size, int(r.data_offset), keys, tensors, pairs)


LAYOUT = layout() if ADAPTER.is_file() else None
HEAD = (LAYOUT.data_offset if LAYOUT else 0) + (1 << 16)  # bytes of the adapter written as they are


@dataclass(frozen=True)
class Mutant:
    kind: str
    head: bytes  # the file's first bytes
    length: int  # its length (zeros after head)
    base_file: bool = False  # the base model's own file instead


def _put(buf: bytearray, at: int, width: int, value: int) -> None:
    buf[at:at + width] = (value % (1 << (8 * width))).to_bytes(width, "little")


@st.composite
def mutants(draw: st.DrawFn, head: bytes, base_head: bytes) -> Mutant:
    lay = LAYOUT
    assert lay is not None
    kind = draw(st.sampled_from(["truncate", "flip", "header", "tensor", "tensor", "key", "swap", "random",
                                 "base", "alpha"]))
    buf = bytearray(head)
    length = lay.size
    if kind == "truncate":
        length = draw(st.one_of(st.integers(0, 64), st.integers(0, lay.data_offset + 64), st.integers(0, lay.size - 1)))
    elif kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.one_of(st.integers(0, lay.data_offset - 1), st.integers(0, len(buf) - 1)))
            buf[at] ^= draw(st.integers(1, 255))
    elif kind == "header":
        at, width = draw(st.sampled_from([(4, 4), (8, 8), (16, 8)]))
        _put(buf, at, width, draw(INTERESTING))
    elif kind == "tensor":
        fields = lay.tensors[draw(st.integers(0, len(lay.tensors) - 1))]
        part = draw(st.sampled_from(["name_len", "name", "n_dims", "dim0", "dim1", "type", "type", "offset"]))
        if part == "name":
            at, width = fields["name"]
            buf[at + draw(st.integers(0, width - 1))] = draw(st.sampled_from(b"._ab0\x00\n\xff"))
        elif part.startswith("dim"):
            at, _ = fields["dims"]
            _put(buf, at + 8 * int(part[-1]), 8, draw(INTERESTING))
        elif part == "type":
            at, width = fields["type"]
            _put(buf, at, width, draw(st.one_of(st.integers(0, 45), st.sampled_from([-1, (1 << 31) - 1]))))
        else:
            at, width = fields[part]
            _put(buf, at, width, draw(INTERESTING))
    elif kind in ("key", "alpha"):
        fields = lay.keys[3] if kind == "alpha" else lay.keys[draw(st.integers(0, len(lay.keys) - 1))]
        part = "value" if kind == "alpha" else draw(st.sampled_from(sorted(fields)))
        at, width = fields[part]
        if kind == "alpha":
            value = draw(st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -1.0, 1e38, 1e-45]))
            buf[at:at + 4] = struct.pack("<f", value)
        elif part == "key" or (part == "value" and "value_len" in fields):
            buf[at + draw(st.integers(0, width - 1))] = draw(st.sampled_from(b"._az0\x00\n\xff"))
        elif part == "type":
            _put(buf, at, width, draw(st.one_of(st.integers(0, 14), st.sampled_from([(1 << 32) - 1]))))
        else:
            _put(buf, at, width, draw(INTERESTING))
    elif kind == "swap":  # a pair's lora_a and lora_b entries trade names (their shapes no longer fit)
        a, b = lay.pairs[draw(st.integers(0, len(lay.pairs) - 1))]
        (na, wa), (nb, wb) = lay.tensors[a]["name"], lay.tensors[b]["name"]
        buf[na:na + wa], buf[nb:nb + wb] = head[nb:nb + wb], head[na:na + wa]
    elif kind == "random":
        body = draw(st.binary(min_size=0, max_size=4096))
        prefix = draw(st.sampled_from([b"GGUF", b"GGUF\x03\x00\x00\x00", b""]))
        return Mutant(kind, prefix + body, len(prefix) + len(body))
    else:  # the base model: its own file, or its first bytes
        if draw(st.integers(0, 20)) == 0:
            return Mutant(kind, b"", 0, base_file=True)
        n = draw(st.integers(0, len(base_head)))
        return Mutant(kind, base_head[:n], n)
    return Mutant(kind, bytes(buf), length)


def write(path: Path, m: Mutant, model: Path) -> None:
    path.unlink(missing_ok=True)
    if m.base_file:
        path.symlink_to(model)
        return
    with open(path, "wb") as f:
        f.write(m.head[:m.length])
        if m.length > len(m.head):
            f.truncate(m.length)


def test_random_and_mutated_adapters_are_one_line_errors_or_load(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert LAYOUT is not None
    model = model_path()
    base_sha = file_sha256(model)
    monkeypatch.setenv("TOT_CACHE_DIR", str(tmp_path / "cache"))  # the fuzzed files' sha256 memo stays here
    with open(model, "rb") as f:
        base_head = f.read(1 << 20)
    head = ADAPTER.read_bytes()[:HEAD]
    path = tmp_path / "fuzz.gguf"
    path.with_suffix(".json").write_text(json.dumps({"task": "game24", "trained_for": ["value"],
                                                     "base_model": {"sha256": base_sha}}), encoding="utf-8")
    tally: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    passed: dict[str, Path] = {}
    start = time.perf_counter()

    @settings(max_examples=EXAMPLES)
    @given(mutants(head, base_head))
    def one(m: Mutant) -> None:
        write(path, m, model)
        try:
            check_adapter_fits(read_adapter(path), model)
        except AdapterError as exc:
            text = str(exc)
            assert text and "\n" not in text and len(text) < 1000, text
            tally[m.kind, "refused"] += 1
            reasons[text.split(": ", 1)[-1].split(" (")[0][:60]] += 1
            return
        tally[m.kind, "passed"] += 1
        if m.kind not in passed and len(passed) < MAX_LOADS and not m.base_file:
            keep = tmp_path / f"passed-{m.kind}.gguf"
            shutil.copyfile(path, keep)
            passed[m.kind] = keep

    one()
    checked = time.perf_counter() - start
    total = sum(tally.values())
    refused = sum(n for (_, verdict), n in tally.items() if verdict == "refused")
    r, lines = load_each(model, list(passed.values()))
    print(f"\n{total} adapter files in {checked:.1f} s: {refused} refused by the checks, {total - refused} passed; "
          f"{len(passed)} of those loaded by llama.cpp in a child ({time.perf_counter() - start - checked:.1f} s)")
    for kind in sorted({k for k, _ in tally}):
        print(f"  {kind:9} refused {tally[kind, 'refused']:4}  passed {tally[kind, 'passed']:4}")
    print("  most common reasons:", "; ".join(f"{n}x {why}" for why, n in reasons.most_common(8)))
    assert total >= EXAMPLES
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])  # no native crash
    assert len(lines) == len(passed) and all(line[0] in ("ok", "refused") for line in lines), r.stdout
    assert refused > total // 2  # most never reach llama.cpp
