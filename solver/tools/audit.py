"""``tot audit``: how often did the evaluator cut a state that could still be solved?

Every scored state of a trace is rebuilt with the task's ``restore`` (solver/task.py,
``Restorable``) and judged by the task's exact ``oracle``. Figures per group of runs (one trace
file, one task, one method/generator/evaluator/model) and per depth:

- confusion of the evaluator's judgement class against the exact truth, and calibration
  P(solvable | class);
- false-prune rate = solvable states cut by a judgement / solvable states evaluated (the one
  definition in solver/tools/truth.py, shared with ``tot show``), split into ``pruned`` (judged below
  the pruning threshold) and ``beam`` (lost to the beam; ``tie`` counts those whose score equalled
  the last kept one, so order decided); ``other`` cuts (depth or child limits) are reported apart;
- puzzles whose root was solvable but that lost every solvable state, and at which step;
- every rate with its 95% Wilson interval;
- with ``--counterfactual``, replays of the recorded candidates (solver/tools/counterfactual.py) and,
  with ``--markdown``, reliability and false-prune-by-depth plots (solver/tools/audit_plots.py).

Duplicates are cut before they are scored, so they are not evaluated states. A state reached
through a step the exact gate refuses (``invalid`` or ``unchecked`` verdicts, as in imported
logs of searches without a gate) is counted as ``invalid``, apart from solvable and unsolvable.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from solver.task import ValueScale
from solver.tools.counterfactual import Policy, parse_policies, replay, summarize
from solver.tools.plugins import TaskPlugin
from solver.tools.stats import Proportion
from solver.tools.truth import JUDGED_CUTS, Oracle, is_false_prune, make_oracle, state_truth, task_for_run
from solver.trace import read_trace

SCHEMA = "tot-audit/1"
CUT_KINDS = ("pruned", "beam", "other")
_OTHER_CUTS = ("depth", "children")
_MAX_SCORE_CLASSES = 8  # more distinct raw scores than this are binned into quartiles
LOG_IMPORTERS = "tot.log_importers"  # entry-point group: task name -> importer of foreign logs


# ---- reading traces --------------------------------------------------------------------------

@dataclass(slots=True)
class NodeRec:
    """What a trace says about one node."""

    id: int
    depth: int = 0
    parent: int | None = None
    state: str | None = None
    verdict: str | None = None  # valid | solved | invalid | unchecked
    kind: str | None = None  # why a refused step was refused, when the trace says (imported logs)
    scored: bool = False
    score: float | None = None
    detail: Any = None
    fate: str = "open"  # kept | pruned | beam | depth | children | duplicate | open
    tie: bool = False


@dataclass(slots=True)
class Run:
    """One search of one puzzle, as recorded between a ``start`` event and the next."""

    meta: dict[str, Any]
    root: NodeRec | None = None
    nodes: dict[int, NodeRec] = field(default_factory=dict)
    answered: bool = False  # an answer passed the task's own re-verification
    answers: list[int] = field(default_factory=list)  # nodes of those answers
    stopped_by: str | None = None
    ended: bool = False  # False: the trace stops before the search did (a killed run)
    rejected: Counter[str] = field(default_factory=Counter)  # gate refusals that made no node
    probes: dict[tuple[Any, str], NodeRec] = field(default_factory=dict)  # scored before becoming nodes

    @property
    def task(self) -> str:
        return str(self.meta.get("task") or "?")

    @property
    def puzzle(self) -> str:
        return str(self.meta.get("puzzle") or "")


def split_runs(events: Iterable[dict[str, Any]]) -> list[Run]:
    """Cut a trace (possibly many puzzles appended to one file) into runs."""
    runs: list[Run] = []
    cur: Run | None = None
    for ev in events:
        kind = ev.get("event")
        if kind == "start" or cur is None or (kind == "root" and cur.root is not None):
            meta = {k: v for k, v in ev.items() if k not in ("event", "t")} if kind == "start" else {}
            cur = Run(meta)
            runs.append(cur)
        _apply(cur, ev)
    return [r for r in runs if r.root is not None]


def _node(run: Run, ev: dict[str, Any]) -> NodeRec | None:
    nid = ev.get("node")
    if not isinstance(nid, int):
        return None
    if nid not in run.nodes:
        run.nodes[nid] = NodeRec(nid)
    return run.nodes[nid]


def _apply(run: Run, ev: dict[str, Any]) -> None:
    kind = ev.get("event")
    if kind == "search":
        for key in ("method", "generator", "evaluator", "breadth", "depth", "prune_below"):
            run.meta.setdefault(key, ev.get(key))
    elif kind == "root":
        nd = _node(run, ev)
        if nd is not None:
            nd.state, nd.verdict, nd.fate = ev.get("state"), "valid", "kept"
            run.root = nd
    elif kind == "proposal":
        nd = _node(run, ev)
        if nd is not None:
            nd.parent, nd.depth = ev.get("parent"), int(ev.get("depth") or 0)
    elif kind == "verdict":
        nd = _node(run, ev)
        if nd is None:  # a refused thought gets no node
            run.rejected[str(ev.get("kind") or "refused by the gate")] += 1
            return
        nd.verdict, nd.state, nd.kind = ev.get("verdict"), ev.get("state"), ev.get("kind")
    elif kind == "score":
        nd = _node(run, ev) if isinstance(ev.get("node"), int) else _probe(run, ev)
        if nd is not None:
            nd.scored, nd.score, nd.detail = True, _num(ev.get("score")), ev.get("detail")
    elif kind == "keep":
        nd = _node(run, ev)
        if nd is not None:
            nd.fate = "kept"
    elif kind == "cut":
        nd = _node(run, ev) if isinstance(ev.get("node"), int) else run.probes.get(_probe_key(ev))
        if nd is not None:
            nd.fate, nd.tie = str(ev.get("why") or "other"), bool(ev.get("tie"))
    elif kind == "answer":
        if ev.get("verified"):
            run.answered = True
            if isinstance(ev.get("node"), int):
                run.answers.append(ev["node"])
    elif kind == "end":
        run.stopped_by, run.ended = ev.get("stopped_by"), True


def _probe_key(ev: dict[str, Any]) -> tuple[Any, str]:
    return ev.get("parent"), str(ev.get("thought"))


def _probe(run: Run, ev: dict[str, Any]) -> NodeRec | None:
    """A thought scored before it became a node (Long's controller ranks proposals first): a
    node of its own, with a negative id, judged by the state the score event carries."""
    parent = run.nodes.get(ev["parent"]) if isinstance(ev.get("parent"), int) else None
    if parent is None or not isinstance(ev.get("state"), str):
        return None
    nd = NodeRec(-(len(run.probes) + 1), parent.depth + 1, parent.id, ev["state"], "valid", fate="kept")
    run.nodes[nd.id] = nd
    run.probes[_probe_key(ev)] = nd
    return nd


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# ---- judgement classes -----------------------------------------------------------------------

def judgement_class(evaluator: str, score: float | None, detail: Any,
                    scale: ValueScale | None = None) -> str | None:
    """The evaluator's judgement of one state as a class label, or None when only the raw score
    says anything (classes are then made from scores, see ``score_classes``).

    value: the best label among the samples (the sum of mapped labels is ordered that way:
    any ``sure`` outweighs any number of ``likely``); ``none`` when no sample had a label.
    likelihood: the most probable label. vote: the number of votes. oracle: 1 or 0.
    """
    labels = (scale or ValueScale()).labels
    if isinstance(detail, dict):
        if isinstance(detail.get("class"), str):  # a class the producer of the trace named
            return str(detail["class"])
        if "error" in detail:
            return "error"
        if isinstance(detail.get("labels"), dict):  # crossword clue judge: label per open clue
            found = set(detail["labels"].values())
            return next((lab for lab in ("impossible", "maybe", "sure") if lab in found), "none")
        if isinstance(detail.get("labels"), list):
            present = [lab for lab in detail["labels"] if isinstance(lab, str)]
            if not present:
                return "none"
            return max(present, key=lambda lab: (labels.get(lab, 0.0), lab))
        if isinstance(detail.get("p"), dict) and detail["p"]:
            probs = {k: _num(v) or 0.0 for k, v in detail["p"].items()}
            return max(probs, key=lambda k: (probs[k], -list(probs).index(k)))
        if "votes" in detail:
            return f"{detail['votes']} votes"
    if evaluator == "oracle" and score is not None:
        return "1" if score >= 0.5 else "0"
    return None


def score_classes(scores: Sequence[float | None]) -> list[str]:
    """Classes from raw scores: each distinct score when there are few, else score quartiles,
    named by their range, e.g. ``Q2 [-8.1, -5.3)``."""
    known = sorted({s for s in scores if s is not None})
    if len(known) <= _MAX_SCORE_CLASSES:
        return ["no score" if s is None else f"score {s:g}" for s in scores]
    ordered = sorted(s for s in scores if s is not None)
    bounds = [ordered[0]] + [ordered[min(len(ordered) - 1, (len(ordered) * q) // 4)] for q in (1, 2, 3)]
    names = [f"Q{q + 1} [{bounds[q]:.3g}, {bounds[q + 1]:.3g})" for q in range(3)]
    names.append(f"Q4 [{bounds[3]:.3g}, {ordered[-1]:.3g}]")
    out = []
    for s in scores:
        out.append("no score" if s is None else names[sum(s >= c for c in bounds[1:])])
    return out


# ---- ground truth ----------------------------------------------------------------------------

def truths(run: Run, judge: Oracle) -> tuple[bool, dict[int, str]]:
    """(root solvable, node id -> solvable | unsolvable | invalid | unknown)."""
    out: dict[int, str] = {}

    def truth(nd: NodeRec) -> str:
        if nd.id in out:
            return out[nd.id]
        parent = run.nodes.get(nd.parent) if nd.parent is not None else None
        ptruth = truth(parent) if parent is not None and parent is not nd else None
        out[nd.id] = state_truth(nd.verdict, nd.state, ptruth, judge, run.puzzle)
        return out[nd.id]

    for nd in run.nodes.values():
        truth(nd)
    root_ok = run.root is not None and out.get(run.root.id) == "solvable"
    return root_ok, out


# ---- figures ---------------------------------------------------------------------------------

@dataclass(slots=True)
class Tally:
    """Counts over a set of evaluated states."""

    evaluated: int = 0
    truth: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)  # truth -> kept
    cuts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # kind -> truth
    ties: Counter[str] = field(default_factory=Counter)  # truth -> beam cuts decided by order
    classes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # class -> truth
    class_cuts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    judged_cuts: Counter[str] = field(default_factory=Counter)  # truth -> cut by a judgement
    false_prunes: int = 0  # solvable states cut by a judgement (solver.tools.truth.is_false_prune)

    def add(self, truth: str, fate: str, tie: bool, klass: str) -> None:
        self.evaluated += 1
        self.false_prunes += is_false_prune(truth == "solvable", fate)
        if fate in JUDGED_CUTS:
            self.judged_cuts[truth] += 1
        self.truth[truth] += 1
        self.classes[klass][truth] += 1
        if fate == "kept":
            self.kept[truth] += 1
        cut = "pruned" if fate == "pruned" else "beam" if fate == "beam" else "other" if fate in _OTHER_CUTS else None
        if cut is not None:
            self.cuts[cut][truth] += 1
            self.class_cuts[klass][truth] += 1
            if cut == "beam" and tie:
                self.ties[truth] += 1

    def as_dict(self) -> dict[str, Any]:
        solv, unsolv = self.truth["solvable"], self.truth["unsolvable"]
        classes = {}
        for klass in sorted(self.classes, key=_class_order):
            c, cc = self.classes[klass], self.class_cuts[klass]
            classes[klass] = {
                "solvable": c["solvable"], "unsolvable": c["unsolvable"], "invalid": c["invalid"],
                "unknown": c["unknown"], "solvable_cut": cc["solvable"], "unsolvable_cut": cc["unsolvable"],
                "p_solvable": Proportion(c["solvable"], c["solvable"] + c["unsolvable"]).as_dict(),
            }
        return {
            "evaluated": self.evaluated, "solvable": solv, "unsolvable": unsolv,
            "invalid": self.truth["invalid"], "unknown": self.truth["unknown"],
            "kept": {"solvable": self.kept["solvable"], "unsolvable": self.kept["unsolvable"],
                     "invalid": self.kept["invalid"]},
            "cut": {k: {"solvable": self.cuts[k]["solvable"], "unsolvable": self.cuts[k]["unsolvable"],
                        "invalid": self.cuts[k]["invalid"]} for k in CUT_KINDS},
            "beam_ties": {"solvable": self.ties["solvable"], "unsolvable": self.ties["unsolvable"],
                          "invalid": self.ties["invalid"]},
            "false_prune": Proportion(self.false_prunes, solv).as_dict(),
            "cut_other_solvable": Proportion(self.cuts["other"]["solvable"], solv).as_dict(),
            "false_prune_pruned": Proportion(self.cuts["pruned"]["solvable"], solv).as_dict(),
            "false_prune_beam": Proportion(self.cuts["beam"]["solvable"], solv).as_dict(),
            "false_prune_beam_tie": Proportion(self.ties["solvable"], solv).as_dict(),
            "true_prune": Proportion(self.judged_cuts["unsolvable"], unsolv).as_dict(),
            "classes": classes,
        }


def _class_order(klass: str) -> tuple[int, str]:
    rank = {"sure": 0, "likely": 1, "maybe": 1, "impossible": 2, "none": 3, "error": 4, "1": 0, "0": 1}
    return rank.get(klass, 5), klass


@dataclass(slots=True)
class Lost:
    puzzle: str
    step: int | None  # first depth with no solvable state kept (None: kept one at every depth)
    cause: str  # cut: pruned/beam/... | not proposed | undecided | other


def lost_step(run: Run, truth: dict[int, str]) -> Lost:
    """Where a run whose root was solvable lost its last solvable state."""
    found = _lost_step(run, truth)
    if run.stopped_by:
        found.cause += f"; the {run.stopped_by} budget ran out"
    if not run.ended:
        found.cause += "; the trace ends before the search did"
    return found


def _lost_step(run: Run, truth: dict[int, str]) -> Lost:
    by_depth: dict[int, list[NodeRec]] = defaultdict(list)
    for nd in run.nodes.values():
        if nd is not run.root and truth.get(nd.id) == "solvable" and nd.fate != "duplicate":
            by_depth[nd.depth].append(nd)
    max_depth = max((nd.depth for nd in run.nodes.values()), default=0)
    for depth in range(1, max_depth + 2):
        here = by_depth.get(depth, [])
        if any(nd.fate == "kept" or nd.verdict == "solved" for nd in here):
            continue
        if not here:
            return Lost(run.puzzle, depth, "not proposed")
        fates = Counter(nd.fate for nd in here)
        if fates.get("open"):
            return Lost(run.puzzle, depth, "undecided")
        return Lost(run.puzzle, depth, "cut: " + ", ".join(f"{k} {v}" for k, v in sorted(fates.items())))
    return Lost(run.puzzle, None, "other")


def _last_solvable_step(run: Run, truth: dict[int, str]) -> int | None:
    """The last step (0-based, in the log's visiting order) whose state was still solvable."""
    steps = [nd.id - 1 for nd in run.nodes.values() if nd is not run.root and truth.get(nd.id) == "solvable"]
    return max(steps) if steps else None


def _dfs_lost(run: Run, truth: dict[int, str], game: dict[str, Any]) -> Lost:
    """Where an imported DFS game lost its last consistent state (node ids are steps + 1)."""
    last = game.get("last_consistent_step")
    if last is None:
        return Lost(f"puzzle {game.get('puzzle')}", 0, "no visited state agreed with the answer")
    nd = run.nodes.get(last + 1)
    fate = nd.fate if nd is not None else "?"
    why = {"pruned": "judged impossible and pruned", "kept": "expanded, but no logged child agreed"}.get(fate, fate)
    later = int(game.get("steps", 0)) - last - 1
    cause = (f"last consistent state {why}; the {later} later states all disagree" if later
             else "the last logged state was still consistent")
    if run.stopped_by:
        cause += f"; the {run.stopped_by} budget ran out"
    return Lost(f"puzzle {game.get('puzzle')}", last, cause)


@dataclass(slots=True)
class Group:
    """Runs of one source with the same task and search settings."""

    source: str
    meta: dict[str, Any]
    runs: list[Run] = field(default_factory=list)

    @property
    def task(self) -> str:
        return str(self.meta.get("task") or "?")


_GROUP_KEYS = ("task", "method", "generator", "evaluator", "model")


def group_runs(source: str, runs: Iterable[Run]) -> list[Group]:
    groups: dict[tuple[Any, ...], Group] = {}
    for run in runs:
        if run.meta.get("gate") is False and not str(run.meta.get("method", "")).endswith(":no-gate"):
            run.meta["method"] = f"{run.meta.get('method')}:no-gate"  # the gate-off ablation is apart
        options = run.meta.get("options") if isinstance(run.meta.get("options"), dict) else {}
        key = (*(str(run.meta.get(k)) for k in _GROUP_KEYS), json.dumps(options, sort_keys=True, default=str))
        if key not in groups:
            meta = {k: run.meta.get(k) for k in _GROUP_KEYS}
            if options:  # the task's options from the run header (e.g. Sudoku's rule set)
                meta["options"] = options
            groups[key] = Group(source, meta)
        groups[key].runs.append(run)
    return list(groups.values())


def audit_group(group: Group, judge: Oracle | str, policies: Sequence[Policy] = ()) -> dict[str, Any]:
    """The JSON object of one group (keys documented in the README)."""
    out: dict[str, Any] = {"source": group.source, **group.meta, "runs": len(group.runs)}
    extra = [dict(r.meta.get("audit") or {}) for r in group.runs]
    rejected: Counter[str] = Counter()
    for r in group.runs:
        rejected.update(r.rejected)
    if isinstance(judge, str):
        out["unsupported"] = judge
        return out
    records: list[tuple[Run, NodeRec, str]] = []
    solvable_roots = answered = correct = 0
    lost: list[Lost] = []
    games: list[dict[str, Any]] = []
    replays: dict[str, list[tuple[bool, bool, int, Any]]] = {p.name: [] for p in policies}
    for run in group.runs:
        root_ok, truth = truths(run, judge)
        solvable_roots += root_ok
        answered += run.answered
        # An accepted answer counts only when the oracle agrees: a task's answer check may be
        # weaker than its ground truth (a crossword grid can be consistent yet not the answer).
        right = any(truth.get(n) == "solvable" for n in run.answers)
        game = run.meta.get("log_game")
        if isinstance(game, dict):  # an imported DFS log: no answer is chosen, a solved board counts
            right = game.get("solved_step") is not None
            game["last_consistent_step"] = _last_solvable_step(run, truth)
            games.append(game)
        correct += right
        scored = sum(nd.scored for nd in run.nodes.values() if nd is not run.root)
        if str(run.meta.get("method", "")).startswith(("tot-bfs", "tot-dfs")):
            for pol in policies:
                replays[pol.name].append((root_ok, right, scored, replay(run, truth, pol)))
        if root_ok and not right:
            lost.append(_dfs_lost(run, truth, game) if isinstance(game, dict) else lost_step(run, truth))
        records.extend((run, nd, truth[nd.id]) for nd in run.nodes.values() if nd.scored and nd is not run.root)
    evaluator = str(group.meta.get("evaluator") or "")
    named = [judgement_class(evaluator, nd.score, nd.detail) for _, nd, _ in records]
    fallback = score_classes([nd.score for _, nd, _ in records])
    classes = [n if n is not None else f for n, f in zip(named, fallback, strict=True)]
    tallies: dict[str, Tally] = defaultdict(Tally)
    invalid_kinds: Counter[str] = Counter()
    invalid_kept = 0
    for (_run, nd, verdict), klass in zip(records, classes, strict=True):
        for key in ("all", str(nd.depth)):
            tallies[key].add(verdict, nd.fate, nd.tie, klass)
    for run in group.runs:
        for nd in run.nodes.values():
            if nd.verdict in ("invalid", "unchecked") and nd.fate != "duplicate":
                invalid_kinds[nd.kind or nd.verdict] += 1
                invalid_kept += nd.fate == "kept"
    bins = Tally()
    for (_run, nd, verdict), klass in zip(records, fallback, strict=True):
        bins.add(verdict, nd.fate, nd.tie, klass)
    depths = {"all": tallies["all"].as_dict()}
    for key in sorted((k for k in tallies if k != "all"), key=int):
        depths[key] = tallies[key].as_dict()
    out.update({
        "puzzles_solvable": solvable_roots,
        "answered": answered,
        "answered_correct": correct,
        "lost": [{"puzzle": x.puzzle, "step": x.step, "cause": x.cause} for x in lost],
        "lost_rate": Proportion(len(lost), solvable_roots).as_dict(),
        "refused_by_gate": dict(sorted(rejected.items())),
        "invalid_states": {"count": sum(invalid_kinds.values()), "kept": invalid_kept,
                           "by_kind": dict(sorted(invalid_kinds.items()))},
        "depths": depths,
        "score_bins": bins.as_dict()["classes"],
    })
    imp = depths["all"]["classes"].get("impossible")
    if imp is not None:  # how often a state judged impossible really was unsolvable
        out["impossible_right"] = Proportion(imp["unsolvable"], imp["solvable"] + imp["unsolvable"]).as_dict()
    if games:
        out["games"] = games
    if policies and any(replays.values()):
        out["counterfactual"] = {name: summarize(rows) for name, rows in replays.items()}
    elif policies:
        out["counterfactual_unsupported"] = "replays cover tot-bfs and tot-dfs runs only"
    merged: dict[str, Any] = {}
    for e in extra:
        for k, v in e.items():
            merged[k] = merged.get(k, 0) + v if isinstance(v, (int, float)) else v
    if merged:
        out["imported"] = merged
    return out


# ---- sources ---------------------------------------------------------------------------------

def log_importer(task: str) -> Callable[[str], list[dict[str, Any]]]:
    """The importer of foreign search logs registered by a task (entry points ``tot.log_importers``)."""
    for ep in entry_points(group=LOG_IMPORTERS):
        if ep.name == task:
            return ep.load()  # type: ignore[no-any-return]
    known = ", ".join(sorted(ep.name for ep in entry_points(group=LOG_IMPORTERS))) or "none"
    raise ValueError(f"no importer of official logs for task {task!r} (have: {known})")


MAX_LOG_BYTES = 64 * 1024 * 1024


def detect_log_task(path: str) -> str:
    """The task of an official ToT log, from its shape: a list of puzzle entries with ``steps``
    (Game of 24 BFS) or a list of games that are lists of steps with ``actions`` (crosswords DFS)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no such log file: {path}")
    if p.stat().st_size > MAX_LOG_BYTES:
        raise ValueError(f"{path} is larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ValueError(f"{path} is not a JSON file") from None
    if isinstance(data, list) and data and all(isinstance(g, list) for g in data):
        return "crosswords"
    if isinstance(data, list) and data and all(isinstance(e, dict) and "steps" in e for e in data):
        return "game24"
    raise ValueError(f"{path}: not a log of the official ToT code I know (give --task)")


def audit(sources: Sequence[tuple[str, list[dict[str, Any]]]], plugins: dict[str, TaskPlugin],
          policies: Sequence[Policy] = ()) -> dict[str, Any]:
    """Audit (label, events) sources; the result is the ``--json`` object."""
    judges: dict[str, Oracle | str] = {}
    groups_out = []
    for label, events in sources:
        for group in group_runs(label, split_runs(events)):
            options = group.meta.get("options") or {}
            which = f"{group.task} {json.dumps(options, sort_keys=True, default=str)}"
            if which not in judges:
                plugin = plugins.get(group.task)
                judges[which] = (make_oracle(task_for_run(plugin, options)) if plugin is not None
                                 else f"no installed task named {group.task!r}")
            groups_out.append(audit_group(group, judges[which], policies))
    return {"schema": SCHEMA, "groups": groups_out}


# ---- output ----------------------------------------------------------------------------------

def _pct(p: dict[str, Any]) -> str:
    return Proportion(int(p["k"]), int(p["n"])).text()


def _name(g: dict[str, Any]) -> str:
    bits = [str(g.get(k)) for k in ("task", "method", "generator", "evaluator") if g.get(k)]
    return f"{g['source']} [{' '.join(bits)}]"


def _summary_rows(report: dict[str, Any]) -> list[list[str]]:
    rows = [["source", "task", "method", "generator", "evaluator", "runs", "evaluated", "solvable",
             "false-prune [95% CI]", "pruned", "beam (tie)", "other", "lost puzzles"]]
    for g in report["groups"]:
        if "unsupported" in g:
            rows.append([g["source"], str(g.get("task")), str(g.get("method")), str(g.get("generator")),
                         str(g.get("evaluator")), str(g["runs"]), "not auditable: " + g["unsupported"],
                         "", "", "", "", "", ""])
            continue
        a = g["depths"]["all"]
        rows.append([g["source"], str(g.get("task")), str(g.get("method")), str(g.get("generator")),
                     str(g.get("evaluator")), str(g["runs"]), str(a["evaluated"]), str(a["solvable"]),
                     _pct(a["false_prune"]), str(a["cut"]["pruned"]["solvable"]),
                     f"{a['cut']['beam']['solvable']} ({a['beam_ties']['solvable']})",
                     str(a["cut"]["other"]["solvable"]),
                     f"{len(g['lost'])}/{g['puzzles_solvable']}"])
    return rows


def _depth_rows(g: dict[str, Any]) -> list[list[str]]:
    rows = [["depth", "evaluated", "solvable", "unsolvable", "invalid", "false-prune [95% CI]",
             "pruned", "beam (tie)", "unsolvable cut [95% CI]"]]
    for key, d in g["depths"].items():
        rows.append([key, str(d["evaluated"]), str(d["solvable"]), str(d["unsolvable"]), str(d["invalid"]),
                     _pct(d["false_prune"]), str(d["cut"]["pruned"]["solvable"]),
                     f"{d['cut']['beam']['solvable']} ({d['beam_ties']['solvable']})", _pct(d["true_prune"])])
    return rows


def _class_rows(g: dict[str, Any]) -> list[list[str]]:
    rows = [["judgement", "solvable", "unsolvable", "invalid", "solvable cut", "P(solvable | judgement) [95% CI]"]]
    for klass, c in g["depths"]["all"]["classes"].items():
        rows.append([klass, str(c["solvable"]), str(c["unsolvable"]), str(c["invalid"]),
                     str(c["solvable_cut"]), _pct(c["p_solvable"])])
    return rows


def _bin_rows(g: dict[str, Any]) -> list[list[str]]:
    rows = [["score", "solvable", "unsolvable", "invalid", "solvable cut", "P(solvable | score) [95% CI]"]]
    for name, c in g["score_bins"].items():
        rows.append([name, str(c["solvable"]), str(c["unsolvable"]), str(c["invalid"]),
                     str(c["solvable_cut"]), _pct(c["p_solvable"])])
    return rows


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _lost_line(g: dict[str, Any]) -> str:
    if not g["lost"]:
        return (f"lost puzzles: none of {g['puzzles_solvable']} solvable "
                f"({g['answered']} answered, {g['answered_correct']} confirmed by the oracle)")
    items = "; ".join(f"{_short(x['puzzle'])} at step {x['step']} ({x['cause']})" for x in g["lost"])
    return f"lost puzzles {_pct(g['lost_rate'])}: {items}"


def _game_rows(g: dict[str, Any]) -> list[list[str]]:
    rows = [["puzzle", "steps", "solved at step", "last consistent step", "best letters", "best words",
             "logged best r_letter", "logged best r_word", "mismatches"]]
    for x in g["games"]:
        rows.append([str(x["puzzle"]), str(x["steps"]), "-" if x["solved_step"] is None else str(x["solved_step"]),
                     "-" if x.get("last_consistent_step") is None else str(x["last_consistent_step"]),
                     f"{x['best_letters']}/25", f"{x['best_words']}/10", f"{x['logged_best_letters']:g}",
                     f"{x['logged_best_words']:g}", str(len(x["mismatches"]))])
    return rows


def _counterfactual_rows(g: dict[str, Any]) -> list[list[str]]:
    rows = [["replay", "runs", "solved (run)", "solved (replay)", "lost by the run", "now solved", "now kept",
             "undecidable from the log", "states scored (run)", "states scored (replay)", "extra"]]
    for name, c in g["counterfactual"].items():
        rows.append([name, str(c["runs"]), str(c["run_solved"]), str(c["solved"]), str(c["run_lost"]),
                     str(c["lost_now_solved"]), str(c["lost_now_kept"]),
                     f"{c['lost_undecidable']} of the lost ({c['undecidable']} in all)", str(c["run_cost"]),
                     str(c["cost"]), f"{c['extra_cost']:+d}"])
    return rows


def _extra_lines(g: dict[str, Any]) -> list[str]:
    out = []
    if g.get("impossible_right"):
        out.append(f"judged impossible and really unsolvable: {_pct(g['impossible_right'])}")
    inv = g["invalid_states"]
    if inv["count"]:
        kinds = ", ".join(f"{k} {v}" for k, v in inv["by_kind"].items())
        out.append(f"states behind a step the gate refuses: {inv['count']} ({kinds}); kept {inv['kept']}")
    if g["refused_by_gate"]:
        out.append("refused by the gate before scoring: "
                   + ", ".join(f"{k} {v}" for k, v in g["refused_by_gate"].items()))
    if g.get("imported"):
        out.append("imported: " + ", ".join(f"{k} {v}" for k, v in g["imported"].items()))
    return out


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _md(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    lines.insert(1, "|" + "---|" * len(rows[0]))
    return "\n".join(lines)


def render(report: dict[str, Any], markdown: bool = False) -> str:
    table = _md if markdown else _table
    parts = ["# Evaluator audit" if markdown else "Evaluator audit",
             "false-prune = solvable states cut by a judgement (pruned or beam) / solvable states "
             "evaluated; other = cut by depth or child limits; intervals are 95% Wilson.", table(_summary_rows(report))]
    for g in report["groups"]:
        if "unsupported" in g:
            continue
        parts.append(("## " if markdown else "\n== ") + _name(g))
        parts.append(table(_depth_rows(g)))
        parts.append(table(_class_rows(g)))
        if list(g["score_bins"]) != list(g["depths"]["all"]["classes"]):
            parts.append(table(_bin_rows(g)))
        if g.get("games"):
            parts.append(table(_game_rows(g)))
        if g.get("counterfactual"):
            parts.append(table(_counterfactual_rows(g)))
        parts.extend(_extra_lines(g) + [_lost_line(g)])
    return "\n\n".join(parts) + "\n"


# ---- command line ----------------------------------------------------------------------------

def add_parser(subparsers: Any, plugins: dict[str, TaskPlugin]) -> None:
    p = subparsers.add_parser("audit", help="false-prune rates of the evaluator against exact ground truth")
    p.add_argument("traces", nargs="*", metavar="TRACE", help="trace files from tot solve / tot bench")
    p.add_argument("--tot-log", action="append", default=[], metavar="FILE",
                   help="a log of the official ToT code (princeton-nlp/tree-of-thought-llm): a Game-of-24 "
                        "BFS log or a crossword DFS log (logs/crosswords/infoss_dfs_*.json)")
    p.add_argument("--task", "--tot-log-task", dest="tot_log_task", default=None,
                   help="task of the --tot-log files (default: detected from the content)")
    p.add_argument("--counterfactual", default=None, metavar="POLICIES",
                   help="replay the recorded candidates under other policies: original, oracle, ties=reverse, "
                        "beam=N (comma-separated; + combines, e.g. oracle+beam=10)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--markdown", metavar="FILE", default=None, help="also write the report as Markdown")


def run(args: argparse.Namespace, plugins: dict[str, TaskPlugin]) -> int:
    if not args.traces and not args.tot_log:
        raise ValueError("give at least one trace file, or --tot-log FILE")
    sources: list[tuple[str, list[dict[str, Any]]]] = []
    for path in args.traces:
        if not Path(path).is_file():
            raise ValueError(f"no such trace file: {path}")
        events = read_trace(path)
        if not any(ev.get("event") == "root" for ev in events):
            raise ValueError(f"{path} holds no search (no 'root' event); is it a trace from tot solve?")
        sources.append((path, events))
    for path in args.tot_log:
        task = args.tot_log_task or detect_log_task(path)
        sources.append((path, log_importer(task)(path)))
    policies = parse_policies(args.counterfactual) if args.counterfactual is not None else []
    report = audit(sources, plugins, policies)
    if args.markdown:
        md = Path(args.markdown)
        if md.exists() and not md.is_file():
            raise ValueError(f"--markdown {md}: not a regular file")
        md.parent.mkdir(parents=True, exist_ok=True)
        from solver.tools.audit_plots import write_plots  # matplotlib only when plots are asked for

        plots = write_plots(report, md)
        text = render(report, markdown=True)
        if plots:
            text += "\n## Plots\n\n" + "\n".join(f"![{t}]({p.name})" for t, p in plots) + "\n"
        md.write_text(text, encoding="utf-8")
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print(render(report), end="")
    return 0
