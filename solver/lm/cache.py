"""Record/replay store of model outputs: sqlite (stdlib), JSON values, no pickle.

A key is a hash of backend, model, request kind, prompt, sampling parameters and sample index,
so replaying a run with the same settings gives the same texts in the same order.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Literal

from solver.inputs import MAX_CACHE_FILE, regular_file

__all__ = ["Cache", "CacheMiss", "CacheMode", "cache_dir", "cache_key"]

CacheMode = Literal["off", "record", "replay"]


class CacheMiss(Exception):
    """Replay-only mode met a request that was never recorded."""


def cache_dir() -> Path:
    """Where assembled weights and record/replay caches live and the embedded model's start-up
    checks are remembered (``TOT_CACHE_DIR`` overrides)."""
    env = os.environ.get("TOT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "verified-tot"


def cache_key(**parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Cache:
    """A small persistent dictionary from request keys to JSON values.

    Every write is committed at once, so a killed run keeps every output it already paid for.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() or self.path.is_symlink():
            regular_file(self.path, "cache", MAX_CACHE_FILE)  # a FIFO or device is refused, not opened
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path))
            self._db.execute("CREATE TABLE IF NOT EXISTS outputs (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"cache {self.path} is not a record/replay store: {exc}") from None

    def get(self, key: str) -> object | None:
        row = self._db.execute("SELECT value FROM outputs WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: object) -> None:
        self._db.execute("INSERT OR REPLACE INTO outputs (key, value) VALUES (?, ?)",
                         (key, json.dumps(value, ensure_ascii=False)))
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM outputs").fetchone()[0])

    def close(self) -> None:
        self._db.close()
