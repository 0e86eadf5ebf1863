"""The training data of ``tot train``: an export directory (``tot export``) read back, checked and
turned into examples.

Only files the export's manifest lists are read, and each is checked against its sha256, so a
half-written or edited file never trains an adapter. A record from a split other than the one
asked for, or from a puzzle the export held out, stops the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solver.inputs import MAX_DATA_FILE, file_sha256
from solver.tools.export import read_manifest

__all__ = ["Example", "ExportData", "read_export"]

KINDS = ("value", "step")
MAX_RECORDS = 2_000_000


@dataclass(frozen=True, slots=True)
class Example:
    """One supervised example: the completion follows the prompt; ``label`` is the exact verdict
    (value: whether a solution is reachable; step: always True, a good step); ``key`` names the
    state, so that held-out figures can leave out states seen in training."""

    kind: str
    prompt: str
    completion: str
    label: bool
    key: str
    depth: int


@dataclass(slots=True)
class ExportData:
    """An export's manifest and its examples by split and kind."""

    directory: Path
    manifest: dict[str, Any]
    examples: dict[str, dict[str, list[Example]]]
    kinds: tuple[str, ...] = KINDS

    def files(self) -> list[dict[str, Any]]:
        """The files read: split, kind, name, records and sha256 (for the adapter's own manifest)."""
        out = []
        for split, entry in sorted(self.manifest.get("splits", {}).items()):
            for kind, f in sorted(entry.get("files", {}).items()):
                if kind in self.kinds and split in self.examples:
                    out.append({"split": split, "kind": kind, "file": f["file"], "records": f["records"],
                                "sha256": f["sha256"]})
        return out


def read_export(directory: str | Path, task: str, splits: tuple[str, ...], kinds: tuple[str, ...]) -> ExportData:
    """The examples of ``kinds`` in ``splits`` of the export in ``directory``; ValueError (one
    line) for a missing or foreign export, a file that does not match its manifest, or a record
    that does not belong to its split."""
    root = Path(directory)
    manifest_path = root / "manifest.json"
    if not manifest_path.is_file():
        raise ValueError(f"{root} has no manifest.json: not a finished `tot export` directory")
    manifest = read_manifest(manifest_path)  # a list, a bad shape, NaN: one line, as tot export says it
    if manifest.get("task") != task:
        raise ValueError(f"{root} is an export of {manifest.get('task')!r}, not {task}")
    examples: dict[str, dict[str, list[Example]]] = {}
    for split in splits:
        entry = manifest.get("splits", {}).get(split)
        if entry is None:
            raise ValueError(f"{root} has no {split} split; run `tot export {task} --out {root} --splits {split}`")
        examples[split] = {}
        for kind in kinds:
            f = entry.get("files", {}).get(kind)
            if f is None:
                raise ValueError(f"{root}: the {split} split has no {kind} file; export it with --formats {kind}")
            path = root / f["file"]
            if not path.is_file() or path.stat().st_size > MAX_DATA_FILE * 64:
                raise ValueError(f"{path} is missing or too large")
            if file_sha256(path) != f["sha256"]:
                raise ValueError(f"{path} does not match the sha256 its manifest records (changed after export?)")
            examples[split][kind] = _read(path, task, split, kind)
    return ExportData(root, manifest, examples, kinds)


def _read(path: Path, task: str, split: str, kind: str) -> list[Example]:
    out: list[Example] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if n > MAX_RECORDS:
                raise ValueError(f"{path} has more than {MAX_RECORDS:,} records")
            try:
                rec = json.loads(line)
                prompt, completion = rec["prompt"], rec["completion"]
                if rec["task"] != task or rec["split"] != split:
                    raise ValueError(f"a record of {rec['task']}/{rec['split']} in the {task}/{split} file")
                if not isinstance(prompt, str) or not isinstance(completion, str):
                    raise ValueError("prompt and completion must be strings")
                label = bool(rec["solvable"]) if kind == "value" else True
                out.append(Example(kind, prompt, completion, label, str(rec["state_key"]), int(rec["depth"])))
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path} line {n}: {exc}") from None
    return out
