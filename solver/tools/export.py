"""``tot export``: exact process labels as JSON-lines data sets in the formats TRL documents.

    tot export TASK --out DIR [--splits train,val] [--formats value,step,preference,stepwise]

Every record is labelled by the task's exact oracle (``solver.tools.labels``), never by a model, and
says where it came from: the task, the split, the puzzle's id and text, the state and its depth.
Each split is a list of puzzles the task names (``ExportSplits``); the puzzles of every test set
that a results table of this project uses are never in any split, so nothing exported can be
trained on and then measured on. The formats (one file each, ``DIR/SPLIT-FORMAT.jsonl``):

- ``value``: ``prompt``/``completion``, a state and its exact label (`` sure`` when a solution is
  still reachable, else `` impossible``), one record per distinct state;
- ``step``: ``prompt``/``completion``, a state and one legal next step that keeps a solution
  reachable (on a shortest way, where the task knows distances), one record per such step;
- ``preference``: ``prompt``/``chosen``/``rejected``, a good step against one that is not, from the
  same state (at most ``--pairs`` a state, drawn with ``--seed``);
- ``stepwise``: ``prompt``/``completions``/``labels``, the steps of a path from the puzzle and for
  each whether a solution is still reachable after it (at most ``--paths`` distinct paths a puzzle,
  drawn with ``--seed``), for process reward models.

``DIR/manifest.json`` lists each file with its records and sha256, the splits' puzzles (a hash of
each), every option that makes a split, what a limit cut and what was held out; a file is listed
only once it is complete. Splits written into one ``DIR`` by separate runs are one export: a run
whose options differ from the manifest's is refused (unless it rewrites every split there), and
no puzzle is in two splits of one ``DIR``. ``read_manifest`` reads a manifest back, checked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol, Sequence, runtime_checkable

from solver.inputs import MAX_DATA_FILE, file_sha256, read_text
from solver.task_capabilities import HasOracle, LegalMoves, TrainingPrompts, find, missing_message
from solver.tools.executor import (
    Executor,
    InProcess,
    Unit,
    add_executor_args,
    executor_from,
    worker_cache,
    worker_options,
)
from solver.tools.labels import LabelledState, Undecided, Walk, label_state, walk
from solver.tools.plugins import TaskPlugin

COMMAND = "export"
FORMATS = ("value", "step", "preference", "stepwise")
SOURCE = "exact oracle (verified-tot)"


@runtime_checkable
class ExportSplits(Protocol):
    """A task plugin's named puzzle splits for ``tot export`` and what it holds out of all of them."""

    export_splits: tuple[str, ...]  # e.g. ("train", "val")
    held_out: str  # one line: the test sets never exported, e.g. "the paper's test puzzles 901-1000"
    export_max_states: int  # the default of --max-states (states labelled per puzzle)
    # True where a state means the same in every puzzle (Game of 24: its numbers), so that a state
    # reached from several puzzles of a split is labelled once; False where it does not (planning:
    # the same atoms under another goal)
    export_shared_states: bool

    def add_export_args(self, parser: argparse.ArgumentParser) -> None:
        """The task's own options of ``tot export TASK`` (e.g. sizes, data folders)."""

    def export_puzzles(self, split: str, args: argparse.Namespace) -> list[tuple[str, str]]:
        """(id, puzzle text) of ``split``; ValueError (one line) for an unknown split or bad options.
        Never a puzzle of a held-out test set."""

    def held_out_puzzles(self, args: argparse.Namespace) -> set[str]:
        """The puzzle texts never exported (normalised as ``export_puzzles`` writes them): the
        task's test sets as the project ships or fingerprints them, whatever file or folder the
        options name."""

    def export_options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The task's options that make its splits, as JSON values (a data file by its sha256), for
        the manifest: a run into a folder whose manifest records other ones is refused."""


def add_parser(subparsers: Any, plugins: dict[str, TaskPlugin]) -> None:
    p = subparsers.add_parser("export", help="write exact process labels as training data (JSON lines)",
                              description=__doc__.split("\n\n")[1] if __doc__ else None)
    tasks = p.add_subparsers(dest="export_task", required=True, parser_class=type(p))
    for name, plugin in plugins.items():
        if not isinstance(plugin, ExportSplits):
            continue
        sp = tasks.add_parser(name, help=plugin.help)
        plugin.add_export_args(sp)
        sp.add_argument("--out", required=True, help="the directory to write (created)")
        sp.add_argument("--splits", default=",".join(plugin.export_splits),
                        help=f"comma-separated, from {', '.join(plugin.export_splits)} (default: all)")
        sp.add_argument("--formats", default=",".join(FORMATS),
                        help=f"comma-separated, from {', '.join(FORMATS)} (default: all)")
        most = plugin.export_max_states
        sp.add_argument("--max-states", type=int, default=most,
                        help=f"states labelled per puzzle at most (a cut puzzle is counted and said; default {most})")
        sp.add_argument("--pairs", type=int, default=2, help="preference pairs per state at most (default 2)")
        sp.add_argument("--paths", type=int, default=4, help="stepwise paths per puzzle, distinct, at most (default 4)")
        sp.add_argument("--limit", type=int, default=None, help="the first N puzzles of each split only")
        sp.add_argument("--seed", type=int, default=0, help="draws of pairs and paths (default 0)")
        add_executor_args(sp)


def _names(text: str, allowed: Sequence[str], what: str) -> list[str]:
    got = [x.strip() for x in text.split(",") if x.strip()]
    if not got:
        raise ValueError(f"--{what} is empty; choose from {', '.join(allowed)}")
    for x in got:
        if x not in allowed:
            raise ValueError(f"unknown {what[:-1]} {x!r}; choose from {', '.join(allowed)}")
    return list(dict.fromkeys(got))


class _Writers:
    """One ``.part`` file per format; ``finish`` renames each to its name and returns the counts."""

    def __init__(self, out: Path, split: str, formats: list[str]) -> None:
        self.paths = {f: out / f"{split}-{f}.jsonl" for f in formats}
        self.files: dict[str, IO[str]] = {f: open(p.with_suffix(".jsonl.part"), "w", encoding="utf-8")
                                          for f, p in self.paths.items()}
        self.counts = dict.fromkeys(formats, 0)

    def write(self, fmt: str, record: dict[str, Any]) -> None:
        f = self.files.get(fmt)
        if f is not None:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.counts[fmt] += 1

    def flush(self) -> None:
        for f in self.files.values():
            f.flush()

    def finish(self) -> dict[str, dict[str, Any]]:
        out = {}
        for fmt, f in self.files.items():
            f.close()
            os.replace(self.paths[fmt].with_suffix(".jsonl.part"), self.paths[fmt])
            out[fmt] = {"file": self.paths[fmt].name, "records": self.counts[fmt],
                        "sha256": file_sha256(self.paths[fmt])}
        return out


def _label(solvable: bool) -> str:
    return " sure" if solvable else " impossible"


def walk_unit(spec: dict[str, Any], puzzle: str, max_states: int) -> Walk:
    """In a worker: the labelled walk of one puzzle, with a task this worker keeps for the batch."""
    from solver.tools.plugins import load_plugins

    def make() -> Any:
        args = argparse.Namespace(**spec)
        return load_plugins()[args.export_task].make_task(args)

    task = worker_cache(("export", json.dumps(spec, sort_keys=True, default=str)), make)
    return walk(task, puzzle, max_states=max_states)


def _walks(task: Any, puzzles: list[tuple[str, str]], args: argparse.Namespace, executor: Executor,
           shared: bool) -> Iterator[Walk]:
    """Each puzzle's walk in puzzle order, exactly as one walk after another with the split's
    ``seen`` states would give it. The executor walks each puzzle on its own; here the states an
    earlier puzzle labelled are left out (the root excepted, as ``walk`` does). That is the same
    walk wherever the puzzle's own walk was not cut and decided every state (a state reached
    through an earlier puzzle's state was labelled with it); a cut or undecided one, with shared
    states, is walked again here, in order, with the real ``seen``."""
    if isinstance(executor, InProcess):
        seen: set[Any] = set()
        for _pid, puzzle in puzzles:
            yield walk(task, puzzle, max_states=args.max_states, seen=seen if shared else set())
        return
    spec = worker_options(vars(args), leave_out=("jobs", "ray", "unit_retries"))
    units = [Unit(pid, (spec, puzzle, args.max_states)) for pid, puzzle in puzzles]
    order = {pid: i for i, (pid, _) in enumerate(puzzles)}
    ready: dict[int, Walk] = {}
    seen = set()
    nxt = 0
    for outcome in executor.run(walk_unit, units):
        if outcome.error is not None:
            raise ValueError(f"puzzle {outcome.unit.key}: {outcome.error}; nothing of this split was listed "
                             "(rerun the same command)")
        ready[order[outcome.unit.key]] = outcome.value
        while nxt in ready:
            found = ready.pop(nxt)
            if shared:
                if found.cut or found.unknown:
                    found = walk(task, puzzles[nxt][1], max_states=args.max_states, seen=seen)
                else:
                    kept = [ls for i, ls in enumerate(found.states) if i == 0 or ls.state not in seen]
                    seen.update(ls.state for ls in kept)
                    found = Walk(kept, found.cut, found.unknown)
            yield found
            nxt += 1


def split_puzzles(plugin: ExportSplits, split: str, args: argparse.Namespace,
                  held: set[str] | None = None) -> list[tuple[str, str]]:
    """The (id, puzzle) a split exports (``--limit`` applied); ValueError if one is held out."""
    puzzles = plugin.export_puzzles(split, args)
    if args.limit is not None:
        puzzles = puzzles[: args.limit]
    held = plugin.held_out_puzzles(args) if held is None else held
    leaked = [pid for pid, p in puzzles if p in held]
    if leaked:  # a plugin bug; never write a held-out puzzle
        raise ValueError(f"split {split} holds held-out puzzle {leaked[0]}; nothing was written")
    return puzzles


def puzzle_hash(puzzle: str) -> str:
    """The manifest's name of a puzzle: the first 16 hex digits of its text's sha256 (UTF-8)."""
    return hashlib.sha256(puzzle.encode("utf-8")).hexdigest()[:16]


def export_split(task: Any, plugin: ExportSplits, split: str, args: argparse.Namespace, out: Path,
                 formats: list[str], executor: Executor | None = None,
                 puzzles: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Write one split's files (``puzzles``: the split's, from ``split_puzzles``); the manifest
    entry of the split."""
    prompts = find(task, TrainingPrompts)
    assert prompts is not None  # checked by run()
    if puzzles is None:
        puzzles = split_puzzles(plugin, split, args)
    writers = _Writers(out, split, formats)
    cut = unknown = states = 0
    labels_of: dict[Any, LabelledState] = {}  # for the paths: each state labelled once
    shared = plugin.export_shared_states
    walks = _walks(task, puzzles, args, executor or InProcess(), shared)
    for (pid, puzzle), found in zip(puzzles, walks, strict=True):
        if not shared:
            labels_of = {}
        rng = random.Random(f"{args.seed}:{split}:{pid}")
        base = {"task": task.name, "split": split, "puzzle_id": pid, "puzzle": puzzle}
        cut += found.cut
        unknown += found.unknown
        for ls in found.states:
            labels_of.setdefault(ls.state, ls)
            states += 1
            text = task.describe(ls.state)
            # state_key: the same text wherever the state means the same (shared), else per puzzle
            rec = {**base, "state": text, "state_key": text if shared else f"{pid}|{text}", "depth": ls.depth,
                   "source": SOURCE}
            if "value" in writers.files:
                writers.write("value", {"prompt": prompts.train_value_prompt(ls.state),
                                        "completion": _label(ls.solvable), **rec,
                                        "solvable": ls.solvable, "distance": ls.distance})
            good = [s for s in ls.steps if s.good]
            bad = [s for s in ls.steps if not s.good]
            step_prompt = prompts.train_step_prompt(ls.state) if good or bad else ""
            for s in good:
                writers.write("step", {"prompt": step_prompt, "completion": s.thought + "\n", **rec,
                                       "solvable": True, "distance": s.distance})
            if good and bad and "preference" in writers.files:
                pairs = [(g, b) for g in good for b in bad]
                for g, b in rng.sample(pairs, min(args.pairs, len(pairs))):
                    writers.write("preference", {"prompt": step_prompt, "chosen": g.thought + "\n",
                                                 "rejected": b.thought + "\n", **rec,
                                                 "chosen_distance": g.distance, "rejected_solvable": b.solvable})
        if "stepwise" in writers.files and found.states:  # none: the oracle could not decide the root
            drawn: set[tuple[str, ...]] = set()  # a forced tree gives the same path every time: write it once
            root_text = task.describe(task.root(puzzle))
            for _ in range(args.paths):
                path = _path(task, puzzle, rng, labels_of)
                if path and tuple(s.thought for s in path) not in drawn:
                    drawn.add(tuple(s.thought for s in path))
                    writers.write("stepwise", {
                        "prompt": prompts.train_step_prompt(task.root(puzzle)),
                        "completions": [s.thought for s in path], "labels": [s.solvable for s in path],
                        **base, "state": root_text, "state_key": root_text if shared else f"{pid}|{root_text}",
                        "depth": 0, "source": SOURCE,
                        "distances": [s.distance for s in path]})
        writers.flush()
    files = writers.finish()
    return {"puzzles": len(puzzles), "states": states, "cut_puzzles": cut, "undecided_states": unknown,
            "files": files, "puzzle_hashes": [puzzle_hash(p) for _, p in puzzles]}


def _path(task: Any, puzzle: str, rng: random.Random, labels_of: dict[Any, LabelledState]) -> list[Any]:
    """A path of gated steps from the root, each step drawn from the state's labelled steps: half
    the time among the good ones (where there is one), else among all, so that paths both keep
    and lose the solution."""
    state, depth, out = task.root(puzzle), 0, []
    while depth < task.max_depth:
        ls = labels_of.get(state)
        if ls is None:
            try:
                ls, _, _ = label_state(task, state, depth)
            except Undecided:  # the oracle cannot decide it (a root the planner's time ran out on)
                break
            labels_of[state] = ls
        if not ls.steps:
            break
        good = [s for s in ls.steps if s.good]
        step = rng.choice(good if good and rng.random() < 0.5 else list(ls.steps))
        out.append(step)
        if step.solved:
            break
        state, depth = step.child, depth + 1
    return out


# ---- the manifest: read back, checked -------------------------------------------------------------

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX16 = re.compile(r"[0-9a-f]{16}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def manifest_problem(data: Any) -> str | None:
    """What makes ``data`` (parsed JSON) not an export manifest, in a few words; None when it is one:
    an object with ``task`` (text), ``splits`` (split -> entry with ``puzzles`` and ``files``, each
    format's file, records and sha256), and ``options`` (an object), with each entry's
    ``puzzle_hashes`` (one 16-hex-digit hash a puzzle); a manifest of an older export has neither
    ``options`` nor hashes (``options`` absent), and its splits can only be rewritten."""
    if not isinstance(data, dict):
        return f"it is a JSON {type(data).__name__}, not an object"
    if not isinstance(data.get("task"), str) or not data["task"]:
        return f"its task is {_short(data.get('task'))}, not a task's name"
    splits = data.get("splits")
    if not isinstance(splits, dict):
        return f"its splits are {_short(splits)}, not an object"
    options = data.get("options", None)
    if "options" in data and not isinstance(options, dict):
        return f"its options are {_short(options)}, not an object"
    for name, entry in splits.items():
        if not name:
            return "a split has an empty name"
        if not isinstance(entry, dict):
            return f"split {_short(name)} is {_short(entry)}, not an object"
        if not _is_count(entry.get("puzzles")):
            return f"split {_short(name)} has puzzles {_short(entry.get('puzzles'))}, not a count"
        files = entry.get("files")
        if not isinstance(files, dict):
            return f"split {_short(name)} has files {_short(files)}, not an object"
        for fmt, f in files.items():
            if fmt not in FORMATS:
                return f"split {_short(name)} lists format {_short(fmt)}; formats are {', '.join(FORMATS)}"
            if not isinstance(f, dict) or not isinstance(f.get("file"), str) or not _is_count(f.get("records")) \
                    or not isinstance(f.get("sha256"), str) or not _HEX64.fullmatch(f["sha256"]):
                return f"split {_short(name)}'s {fmt} file is {_short(f)}, not a file, records and sha256"
        if options is not None:
            hashes = entry.get("puzzle_hashes")
            if not isinstance(hashes, list) or len(hashes) != entry["puzzles"] \
                    or not all(isinstance(h, str) and _HEX16.fullmatch(h) for h in hashes):
                return (f"split {_short(name)}'s puzzle_hashes are not its {entry['puzzles']} puzzles' "
                        "16-hex-digit hashes")
    return None


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of an export folder, checked (``manifest_problem``); ValueError with one line
    for a file that is not one (not a regular file, too large, not UTF-8, not JSON, nested too
    deep, NaN or Infinity, or not the shape an export writes)."""
    text = read_text(path, "export manifest", MAX_DATA_FILE)
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"export manifest {path} nests too deeply to be a manifest") from None
    except ValueError as exc:
        raise ValueError(f"export manifest {path} is not JSON: {str(exc).splitlines()[0][:80]}") from None
    problem = manifest_problem(data)
    if problem is not None:
        raise ValueError(f"{path} is not a tot export manifest: {problem}; use another --out or remove it")
    assert isinstance(data, dict)
    return data


# ---- the run ------------------------------------------------------------------------------------

def _out_dir(text: str) -> Path:
    """``--out`` as a directory that is or can be made: not empty, not a file, not under a file."""
    if not text.strip():
        raise ValueError("--out is empty; name the directory to write")
    out = Path(text)
    for p in (out, *out.parents):
        if p.is_symlink() and not p.exists():
            raise ValueError(f"--out {text}: {p} is a broken symbolic link")
        if p.exists():
            if not p.is_dir():
                raise ValueError(f"--out {text}: {p} is a file, not a directory" if p == out else
                                 f"--out {text}: {p} is a file, so nothing can be made under it")
            if not os.access(p, os.W_OK | os.X_OK):
                raise ValueError(f"--out {text}: {p} is not writable")
            break
    return out


def _check_files(out: Path, splits: list[str], formats: list[str]) -> None:
    """Every path the run writes is free or a regular file it may replace."""
    names = ["manifest.json", "manifest.json.part"]
    names += [f"{s}-{f}.jsonl{part}" for s in splits for f in formats for part in ("", ".part")]
    for name in names:
        p = out / name
        if p.is_symlink() or (p.exists() and not p.is_file()):
            raise ValueError(f"{p} is not a regular file; an export writes that name (use another --out)")


def _options(plugin: ExportSplits, args: argparse.Namespace) -> dict[str, Any]:
    """Every option that makes the splits, as the manifest records it (JSON values)."""
    options = {**plugin.export_options(args), "max_states": args.max_states, "pairs": args.pairs,
               "paths": args.paths, "limit": args.limit, "seed": args.seed}
    return dict(json.loads(json.dumps(options)))


def _kept_splits(out: Path, task: str, options: dict[str, Any], splits: list[str]) -> dict[str, Any]:
    """The entries of the folder's splits this run leaves alone; ValueError (one line) where the
    folder holds another task's export, or splits this run does not rewrite made with other
    options. Nothing is kept where this run rewrites every split there."""
    path = out / "manifest.json"
    if not (path.exists() or path.is_symlink()):
        return {}
    old = read_manifest(path)
    if old["task"] != task:
        raise ValueError(f"{out} holds an export of {_short(old['task'])}, not {task}; use another --out")
    kept = {s: e for s, e in old["splits"].items() if s not in splits}
    if not kept:
        return {}
    every = ",".join(dict.fromkeys([*old["splits"], *splits]))
    names = ", ".join(map(_short, kept))
    if "options" not in old:
        raise ValueError(f"{out} holds split(s) {names} of an export that recorded no options (an older tot "
                         f"export); use another --out, or rewrite every split there (--splits {every})")
    there = old["options"]
    if there != options:
        key = next(k for k in [*options, *there] if there.get(k, "(absent)") != options.get(k, "(absent)"))
        raise ValueError(f"{out} holds split(s) {names} exported with other options ({key}: "
                         f"{_short(there.get(key, '(absent)'))} there, {_short(options.get(key, '(absent)'))} here); "
                         f"use another --out, or rewrite every split there (--splits {every})")
    return kept


def _check_disjoint(out: Path, chosen: dict[str, list[tuple[str, str]]], kept: dict[str, Any]) -> None:
    """No puzzle in two splits of the folder: this run's splits and the ones it keeps."""
    where: dict[str, str] = {}
    for split, entry in kept.items():
        for h in entry["puzzle_hashes"]:
            where.setdefault(h, split)
    for split, puzzles in chosen.items():
        mine = {}
        for pid, puzzle in puzzles:
            h = puzzle_hash(puzzle)
            other = where.get(h)
            if other is not None and other != split:
                raise ValueError(f"puzzle {pid} of split {split} is in split {other} of {out} already; "
                                 "nothing was written (use another --out)")
            mine[h] = split
        where.update(mine)


def run(args: argparse.Namespace, plugins: dict[str, TaskPlugin]) -> int:
    plugin = plugins[args.export_task]
    assert isinstance(plugin, ExportSplits)
    if args.max_states < 1 or args.pairs < 0 or args.paths < 0 or (args.limit is not None and args.limit < 1):
        raise ValueError("--max-states and --limit must be at least 1, --pairs and --paths at least 0")
    splits = _names(args.splits, plugin.export_splits, "splits")
    formats = _names(args.formats, FORMATS, "formats")
    out = _out_dir(args.out)
    task = plugin.make_task(args)
    for part in (LegalMoves, HasOracle, TrainingPrompts):
        if find(task, part) is None:
            raise ValueError(missing_message(task, part, "tot export"))
    # Everything is checked before anything is written: the folder, its manifest, the options
    # against the manifest's, each split's puzzles against the held-out ones and the other splits.
    options = _options(plugin, args)
    kept = _kept_splits(out, task.name, options, splits)
    held = plugin.held_out_puzzles(args)
    chosen = {split: split_puzzles(plugin, split, args, held) for split in splits}
    _check_disjoint(out, chosen, kept)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot make --out {out}: {exc.strerror or exc}") from None
    _check_files(out, splits, formats)
    manifest_path = out / "manifest.json"
    manifest: dict[str, Any] = {
        "task": task.name, "source": SOURCE, "held_out": plugin.held_out,
        "label": {"value": "' sure' when a solution is still reachable, else ' impossible'",
                  "step": "keeps a solution reachable (and shortens the exact distance by one "
                          "where the task knows distances)"},
        "options": options, "splits": dict(kept)}
    order = {s: i for i, s in enumerate(plugin.export_splits)}
    executor = executor_from(args)
    if not isinstance(executor, InProcess):
        print(f"labelling on {executor.name}", file=sys.stderr, flush=True)
    for split in splits:
        start = time.time()
        try:
            entry = export_split(task, plugin, split, args, out, formats, executor, chosen[split])
        except BaseException:
            executor.close()
            raise
        entry.update({"seconds": round(time.time() - start, 1), "seed": args.seed, "max_states": args.max_states,
                      "pairs": args.pairs, "paths": args.paths, "limit": args.limit,
                      "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"})
        manifest["splits"][split] = entry
        manifest["splits"] = dict(sorted(manifest["splits"].items(), key=lambda kv: (order.get(kv[0], len(order)),
                                                                                     kv[0])))
        tmp = manifest_path.with_suffix(".json.part")
        tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, manifest_path)
        counts = ", ".join(f"{v['records']:,} {k}" for k, v in entry["files"].items())
        note = ""
        if entry["cut_puzzles"]:
            note += f"; {entry['cut_puzzles']} puzzle(s) cut by --max-states or the task's enumeration limit"
        if entry["undecided_states"]:
            note += f"; {entry['undecided_states']} state(s) the oracle could not decide (left out)"
        print(f"{split}: {entry['puzzles']:,} puzzles, {entry['states']:,} states: {counts} "
              f"({entry['seconds']:.1f} s){note}", file=sys.stdout, flush=True)
    executor.close()
    print(f"held out of every split: {plugin.held_out}")
    print(f"wrote {manifest_path}")
    return 0
