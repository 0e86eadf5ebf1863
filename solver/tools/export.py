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

``DIR/manifest.json`` lists each file with its records and sha256, the splits' puzzles, what a
limit cut and what was held out; a file is listed only once it is complete.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol, Sequence, runtime_checkable

from solver.capabilities import HasOracle, LegalMoves, TrainingPrompts, find, missing_message
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
        """The puzzle texts never exported (normalised as ``export_puzzles`` writes them)."""


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


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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
                        "sha256": _sha256(self.paths[fmt])}
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


def export_split(task: Any, plugin: ExportSplits, split: str, args: argparse.Namespace, out: Path,
                 formats: list[str], executor: Executor | None = None) -> dict[str, Any]:
    """Write one split's files; the manifest entry of the split."""
    prompts = find(task, TrainingPrompts)
    assert prompts is not None  # checked by run()
    puzzles = plugin.export_puzzles(split, args)
    if args.limit is not None:
        puzzles = puzzles[: args.limit]
    held = plugin.held_out_puzzles(args)
    leaked = [pid for pid, p in puzzles if p in held]
    if leaked:  # a plugin bug; never write a held-out puzzle
        raise ValueError(f"split {split} holds held-out puzzle {leaked[0]}; nothing was written")
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
            "files": files}


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


def run(args: argparse.Namespace, plugins: dict[str, TaskPlugin]) -> int:
    plugin = plugins[args.export_task]
    assert isinstance(plugin, ExportSplits)
    if args.max_states < 1 or args.pairs < 0 or args.paths < 0 or (args.limit is not None and args.limit < 1):
        raise ValueError("--max-states and --limit must be at least 1, --pairs and --paths at least 0")
    splits = _names(args.splits, plugin.export_splits, "splits")
    formats = _names(args.formats, FORMATS, "formats")
    task = plugin.make_task(args)
    for part in (LegalMoves, HasOracle, TrainingPrompts):
        if find(task, part) is None:
            raise ValueError(missing_message(task, part, "tot export"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest: dict[str, Any] = {}
    if manifest_path.exists():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = {}
        if manifest.get("task") not in (None, task.name):
            raise ValueError(f"{out} holds an export of {manifest.get('task')}, not {task.name}; use another --out")
    manifest.update({"task": task.name, "source": SOURCE, "held_out": plugin.held_out,
                     "label": {"value": "' sure' when a solution is still reachable, else ' impossible'",
                               "step": "keeps a solution reachable (and shortens the exact distance by one "
                                       "where the task knows distances)"}})
    manifest.setdefault("splits", {})
    executor = executor_from(args)
    if not isinstance(executor, InProcess):
        print(f"labelling on {executor.name}", file=sys.stderr, flush=True)
    for split in splits:
        start = time.time()
        try:
            entry = export_split(task, plugin, split, args, out, formats, executor)
        except BaseException:
            executor.close()
            raise
        entry.update({"seconds": round(time.time() - start, 1), "seed": args.seed, "max_states": args.max_states,
                      "pairs": args.pairs, "paths": args.paths, "limit": args.limit,
                      "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"})
        manifest["splits"][split] = entry
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
