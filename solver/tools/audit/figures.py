"""The audit's figures: per group of runs (one source, task, method, generator, evaluator, model)
and per depth, the exact truth of every evaluated state against its fate and judgement class,
false-prune rates with 95% Wilson intervals, and the puzzles that lost every solvable state.
The result is the JSON object ``tot audit --json`` prints (schema ``tot-audit/1``)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from solver.tools.audit.judgements import judgement_class, score_classes
from solver.tools.audit.runs import NodeRec, Run, split_runs
from solver.tools.counterfactual import Policy, replay, summarize
from solver.tools.plugins import TaskPlugin
from solver.tools.stats import Proportion
from solver.tools.truth import JUDGED_CUTS, Oracle, is_false_prune, make_oracle, state_truth, task_for_run

SCHEMA = "tot-audit/1"
CUT_KINDS = ("pruned", "beam", "unvisited", "other")
_OTHER_CUTS = ("depth", "children")

# (task name, options from the run header) -> the oracle that judges those runs, or why none
JudgeFor = Callable[[str, dict[str, Any]], "Oracle | str"]


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
    one_beam: bool = False  # the runs' beam chooses once per depth (tot-bfs): avoidable is defined
    avoidable: int = 0  # solvable beam cuts a ranking with every solvable state first would have kept

    def add(self, truth: str, fate: str, tie: bool, klass: str) -> None:
        self.evaluated += 1
        self.false_prunes += is_false_prune(truth == "solvable", fate)
        if fate in JUDGED_CUTS:
            self.judged_cuts[truth] += 1
        self.truth[truth] += 1
        self.classes[klass][truth] += 1
        if fate == "kept":
            self.kept[truth] += 1
        cut = fate if fate in ("pruned", "beam", "unvisited") else "other" if fate in _OTHER_CUTS else None
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
            "false_prune_unvisited": Proportion(self.cuts["unvisited"]["solvable"], solv).as_dict(),
            # undefined (n = 0) where the beam does not choose once per depth
            "false_prune_beam_avoidable": Proportion(self.avoidable, solv if self.one_beam else 0).as_dict(),
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


def avoidable_beam_cuts(records: Sequence[tuple[Run, NodeRec, str]]) -> Counter[int]:
    """Per depth: the solvable states lost to the beam that a perfect ranking of the same
    candidates would have kept. A beam that keeps K of the candidates at a depth, S of them
    solvable, keeps min(K, S) solvable ones when it ranks every solvable state first; what it kept
    short of that was its judgement's error, and the rest of its solvable cuts were the beam's
    width (for runs whose beam chooses once per depth among all candidates: the paper's BFS)."""
    groups: dict[tuple[int, int], list[tuple[bool, bool]]] = defaultdict(list)  # (run, depth) -> (kept, solvable)
    for run, nd, truth in records:
        if nd.fate in ("kept", "beam"):
            groups[(id(run), nd.depth)].append((nd.fate == "kept", truth == "solvable"))
    out: Counter[int] = Counter()
    for (_run, depth), rows in groups.items():
        if not any(not kept for kept, _ in rows):
            continue  # nothing lost to the beam here
        kept = sum(k for k, _ in rows)
        solv = sum(s for _, s in rows)
        kept_solvable = sum(k and s for k, s in rows)
        out[depth] += min(kept, solv) - kept_solvable
    return out


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
    if str(group.meta.get("method", "")).startswith("tot-bfs"):  # one beam choice per depth
        for tally in tallies.values():
            tally.one_beam = True
        for depth, count in avoidable_beam_cuts(records).items():
            for key in ("all", str(depth)):
                tallies[key].avoidable += count
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


def searches(events: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """``events`` when they hold a search (a ``root`` event); ValueError otherwise."""
    if not any(ev.get("event") == "root" for ev in events):
        raise ValueError(f"{source} holds no search (no 'root' event); is it a trace from tot solve?")
    return events


def audit(sources: Sequence[tuple[str, list[dict[str, Any]]]], plugins: dict[str, TaskPlugin],
          policies: Sequence[Policy] = ()) -> dict[str, Any]:
    """Audit (label, events) sources, each run judged by the oracle of its installed task rebuilt
    with the options its header recorded; the result is the ``--json`` object."""

    def judge_for(task: str, options: dict[str, Any]) -> Oracle | str:
        plugin = plugins.get(task)
        if plugin is None:
            return f"no installed task named {task!r}"
        return make_oracle(task_for_run(plugin, options))

    return audit_with(sources, judge_for, policies)


def audit_with(sources: Sequence[tuple[str, list[dict[str, Any]]]], judge_for: JudgeFor,
               policies: Sequence[Policy] = ()) -> dict[str, Any]:
    """Audit (label, events) sources with the oracle ``judge_for(task, options)`` gives for each
    group (asked once per task and options); the result is the ``--json`` object."""
    judges: dict[str, Oracle | str] = {}
    groups_out = []
    for label, events in sources:
        for group in group_runs(label, split_runs(events)):
            options = group.meta.get("options") or {}
            which = f"{group.task} {json.dumps(options, sort_keys=True, default=str)}"
            if which not in judges:
                judges[which] = judge_for(group.task, options)
            groups_out.append(audit_group(group, judges[which], policies))
    return {"schema": SCHEMA, "groups": groups_out}
