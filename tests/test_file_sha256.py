"""One function computes a file's sha256 (solver.inputs.file_sha256); the adapters' remembered
one, the export manifests and the training data's check give the same digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from solver.inputs import MB, file_sha256


@pytest.mark.parametrize("size", [0, 1, MB - 1, MB, MB + 1, 3 * MB + 17])
def test_file_sha256_is_the_sha256_of_the_files_bytes(tmp_path: Path, size: int) -> None:
    data = bytes(i * 7 % 251 for i in range(size))
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert file_sha256(path) == file_sha256(str(path)) == hashlib.sha256(data).hexdigest()


def test_the_adapters_remembered_digest_is_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from solver.lm import adapters

    monkeypatch.setenv("TOT_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "a.gguf"
    path.write_bytes(b"not really a model" * 1000)
    assert adapters.file_sha256(path) == file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_missing_file_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        file_sha256(tmp_path / "missing")
