"""``tot show TRACE``: the search tree of a trace as one offline HTML file, or as text.

The HTML file is self-contained (CSS, JavaScript and data inline; a Content-Security-Policy forbids
any network access) and renders lazily, so traces of 10,000+ nodes stay usable.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import re
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

from solver.tools.tree import FATES, SearchTree, TreeNode, build_trees, load_truth
from solver.tools.truth import make_oracle, state_truth, task_for_run
from solver.trace_reader import read_trace

_DETAIL_CHARS = 160


def add_parser(subparsers: Any, plugins: dict[str, Any]) -> None:
    p = subparsers.add_parser("show", help="view a trace's search tree (offline HTML or text)",
                              description="Write the search tree of a trace as one self-contained HTML file "
                                          "(default: TRACE with .html), or print it as text.")
    p.add_argument("trace", help="a JSON-lines trace written by tot solve --trace")
    p.add_argument("-o", "--output", default=None, help="HTML file to write (default: TRACE with suffix .html)")
    p.add_argument("--text", action="store_true", help="print a plain-text tree instead of writing HTML")
    p.add_argument("--run", type=int, default=None,
                   help="only this run (1-based) of a trace that holds several appended runs")
    p.add_argument("--truth", default=None,
                   help='ground truth: JSON list or JSON lines of {"run": 1, "node": 12, "solvable": true}')
    p.add_argument("--oracle", action="store_true",
                   help="compute ground truth with the task's exact oracle (as tot audit does) to mark false prunes")
    p.add_argument("--max-nodes", type=int, default=None, help="--text: stop after this many nodes per run")
    p.add_argument("--svg", action="store_true",
                   help="write one run's tree as a static SVG picture instead (default: TRACE with suffix .svg)")


def load_trees(trace: str, run: int | None = None, truth: str | None = None,
               plugins: dict[str, Any] | None = None) -> list[SearchTree]:
    """The trees of a trace file, or of one run of it; ValueError with a one-line reason.
    With ``plugins``, ground truth comes from each run's task oracle; a ``truth`` file wins."""
    events = read_trace(trace)
    given = load_truth(truth) if truth else {}
    trees = build_trees(events, given)
    if plugins is not None and trees:
        computed = oracle_truth(trees, plugins)
        for r, mapping in given.items():
            computed.setdefault(r, {}).update(mapping)
        trees = build_trees(events, computed)
    if not trees:
        raise ValueError(f"{trace}: no search tree in this file (no root or proposal events)")
    if run is not None:
        chosen = [t for t in trees if t.run == run]
        if not chosen:
            raise ValueError(f"{trace}: no run {run}; runs are {', '.join(str(t.run) for t in trees)}")
        return chosen
    return trees


def run(args: argparse.Namespace, plugins: dict[str, Any]) -> int:
    if args.max_nodes is not None and args.max_nodes < 1:
        raise ValueError("--max-nodes must be at least 1")
    trees = load_trees(args.trace, args.run, args.truth, plugins if args.oracle else None)
    if args.text:
        for i, tree in enumerate(trees):
            if i:
                sys.stdout.write("\n")
            sys.stdout.write(render_text(tree, args.max_nodes))
        return 0
    if args.svg:
        if len(trees) > 1:
            raise ValueError(f"--svg draws one run and {args.trace} holds {len(trees)}: choose one with --run N")
        from solver.tools.tree_svg import render_svg

        out = Path(args.output) if args.output else Path(args.trace).with_suffix(".svg")
        if out.resolve() == Path(args.trace).resolve():
            raise ValueError("the output would overwrite the trace; give -o FILE.svg")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_svg(trees[0]), encoding="utf-8")
        print(f"wrote {out} ({len(trees[0].nodes)} nodes)")
        return 0
    out = Path(args.output) if args.output else Path(args.trace).with_suffix(".html")
    if out.resolve() == Path(args.trace).resolve():
        raise ValueError("the output would overwrite the trace; give -o FILE.html")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(trees, Path(args.trace).name), encoding="utf-8")
    nodes = sum(len(t.nodes) for t in trees)
    runs = f"{len(trees)} runs, " if len(trees) > 1 else ""
    print(f"wrote {out} ({runs}{nodes} nodes)")
    return 0


# ---- ground truth ---------------------------------------------------------------------------

def oracle_truth(trees: list[SearchTree], plugins: dict[str, Any]) -> dict[int, dict[str, bool]]:
    """{run: {node key: solvable}} from each run's task oracle, via ``task.restore(puzzle,
    description)`` of the state text in the trace. Rejected and unchecked (gate off) thoughts and
    everything below an unchecked one get no ground truth: their states were never legal."""
    judges: dict[str, Any] = {}
    out: dict[int, dict[str, bool]] = {}
    for tree in trees:
        name, puzzle = str(tree.info.get("task", "")), str(tree.info.get("puzzle", ""))
        if name not in plugins:
            raise ValueError(f"--oracle: run {tree.run} is task {name!r}, which is not installed")
        recorded = tree.info.get("options")
        options: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        which = f"{name} {json.dumps(options, sort_keys=True, default=str)}"
        if which not in judges:
            # The task the run used (e.g. Sudoku's rule set), else the one with default options.
            judges[which] = make_oracle(task_for_run(plugins[name], options))
            if isinstance(judges[which], str):
                raise ValueError(f"--oracle: {judges[which]}")
        judge = judges[which]
        seen: dict[str, str] = {}
        truth: dict[str, bool] = {}
        for nd in tree.nodes.values():  # parents come before children in trace order
            res = state_truth(nd.verdict, nd.state, seen.get(nd.parent or ""), judge, puzzle)
            seen[nd.key] = res
            if res in ("solvable", "unsolvable"):
                truth[nd.key] = res == "solvable"
        out[tree.run] = truth
    return out


# ---- text -----------------------------------------------------------------------------------

def _num(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:g}"
    return "-" if x is None else str(x)


def summary_line(tree: SearchTree) -> str:
    info, end = tree.info, tree.end or {}
    parts = [f"run {tree.run}", str(info.get("task", "?")), repr(str(info.get("puzzle", "?"))),
             str(info.get("method", "?")), f"{info.get('generator', '?')}/{info.get('evaluator', '?')}",
             f"model {info.get('model') or 'none'}", f"calls {_num(end.get('calls'))}",
             f"tokens {_num(end.get('tokens'))}", f"{_num(end.get('seconds'))} s", f"{len(tree.nodes)} nodes"]
    if tree.has_truth():
        parts.append(f"false prunes {len(tree.false_prunes())}")
    return "  ".join(parts) + "\n" + tree.outcome()


def _label(nd: TreeNode) -> str:
    # Rejected thoughts (r...) and thoughts pruned before becoming nodes (p...) have no node id.
    ident = {"r": "x", "p": "-"}.get(nd.key[0], f"#{nd.key}")
    text = (nd.state or "root") if nd.parent is None else nd.thought
    bits = [f"{ident} {text}"]
    if nd.parent is not None and nd.state and nd.verdict != "invalid":
        bits.append(f"-> {nd.state}")
    tags = [nd.fate + (" (tie)" if nd.tie else "")]
    if nd.verdict == "unchecked":
        tags.append("unchecked: gate off")
    if nd.expanded_at is not None:
        tags.append(f"expanded {nd.expanded_at}")
    if nd.prior is not None:
        tags.append(f"prior {_num(nd.prior)}")
    if nd.score is not None:
        tags.append(f"score {_num(nd.score)}")
    if nd.false_prune:
        tags.append("FALSE PRUNE")
    elif nd.solvable is not None:
        tags.append("solvable" if nd.solvable else "unsolvable")
    if nd.answer is not None:
        tags.append(("verified: " if nd.verified else "not verified: ") + nd.answer)
    if nd.reason:
        tags.append(nd.reason)
    if nd.errors:
        tags.append("model error: " + "; ".join(nd.errors))
    return ("* " if nd.on_path else "") + "  ".join(bits) + "  [" + ", ".join(tags) + "]"


def render_text(tree: SearchTree, max_nodes: int | None = None) -> str:
    """The tree with box-drawing branches; ``*`` marks the path to the verified answer."""
    lines = [summary_line(tree)]
    if tree.root is None:
        return "\n".join(lines) + "\n"
    budget = [max_nodes if max_nodes is not None else len(tree.nodes)]
    # Iterative, so deep trees cannot hit the recursion limit.
    stack: list[tuple[str, str, str]] = [(tree.root, "", "")]
    while stack:
        key, lead, child_lead = stack.pop()
        if budget[0] <= 0:
            lines.append(f"... ({len(tree.nodes) - (max_nodes or 0)} more nodes; raise --max-nodes)")
            break
        budget[0] -= 1
        nd = tree.nodes[key]
        lines.append(lead + _label(nd))
        kids = nd.children
        for i in range(len(kids) - 1, -1, -1):
            last = i == len(kids) - 1
            stack.append((kids[i], child_lead + ("└── " if last else "├── "),
                          child_lead + ("    " if last else "│   ")))
    return "\n".join(lines) + "\n"


# ---- HTML -----------------------------------------------------------------------------------

def _short(detail: Any) -> str | None:
    if detail is None:
        return None
    text = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False, default=str)
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"


def tree_data(tree: SearchTree) -> dict[str, Any]:
    """The tree as the viewer reads it: nodes in a list, parents and children by list index."""
    index = {k: i for i, k in enumerate(tree.nodes)}
    nodes = []
    for nd in tree.nodes.values():
        item: dict[str, Any] = {"k": nd.key, "p": index.get(nd.parent, -1) if nd.parent else -1,
                                "d": nd.depth, "th": nd.thought, "f": nd.fate,
                                "c": [index[c] for c in nd.children if c in index]}
        optional = {"s": nd.state, "v": nd.verdict, "r": nd.reason, "pr": nd.prior, "sc": nd.score,
                    "dt": _short(nd.detail),
                    "x": nd.expanded_at, "a": nd.answer, "ok": nd.verified, "sv": nd.solvable,
                    "e": list(nd.errors) or None}
        item.update({k: v for k, v in optional.items() if v is not None})
        for flag, on in (("tie", nd.tie), ("path", nd.on_path), ("fp", nd.false_prune)):
            if on:
                item[flag] = True
        nodes.append(item)
    return {"run": tree.run, "info": tree.info, "end": tree.end, "outcome": tree.outcome(),
            "verified": tree.verified, "answer": tree.answer, "counts": tree.counts(),
            "hasTruth": tree.has_truth(), "falsePrunes": len(tree.false_prunes()),
            "expanded": sum(1 for nd in tree.nodes.values() if nd.expanded_at is not None),
            "errors": list(tree.errors), "root": index.get(tree.root, -1) if tree.root else -1,
            "nodes": nodes}


def _asset(name: str) -> str:
    return (files("solver.tools") / "viewer" / name).read_text(encoding="utf-8")


def _plain(obj: Any) -> Any:
    """JSON has no Infinity or NaN (DFS traces hold prune_below=-inf): write those as text."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _script_json(obj: Any) -> str:
    # Inside <script>, "</script>" or "<!--" in a thought would end or confuse the block; JSON
    # allows \u escapes for <, > and &, so the data stays exact after JSON.parse.
    text = json.dumps(_plain(obj), ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(trees: list[SearchTree], source: str = "") -> str:
    """One self-contained HTML page holding every given run (a selector switches between them)."""
    data = {"source": source, "fates": FATES, "runs": [tree_data(t) for t in trees]}
    first = trees[0].info if trees else {}
    title = f"tot show: {first.get('task', '')} {first.get('puzzle', '')}".strip()
    parts = {"TITLE": html.escape(title), "SOURCE": html.escape(source), "CSS": _asset("viewer.css"),
             "JS": _asset("viewer.js"), "DATA": _script_json(data)}
    # One pass, so text inside the data can never be mistaken for a placeholder.
    return re.sub(r"__(TITLE|SOURCE|CSS|JS|DATA)__", lambda m: parts[m.group(1)], _asset("viewer.html"))
