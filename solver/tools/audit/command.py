"""``tot audit``: the command line of the false-prune audit."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from solver.tools.audit.figures import audit, searches
from solver.tools.audit.logs import detect_log_task, log_importer, log_tasks
from solver.tools.audit.render import render
from solver.tools.counterfactual import parse_policies
from solver.tools.plugins import TaskPlugin
from solver.trace_reader import read_trace


def add_parser(subparsers: Any, plugins: dict[str, TaskPlugin]) -> None:
    p = subparsers.add_parser("audit", help="false-prune rates of the evaluator against exact ground truth")
    p.add_argument("traces", nargs="*", metavar="TRACE", help="trace files from tot solve / tot bench")
    p.add_argument("--tot-log", action="append", default=[], metavar="FILE",
                   help="a log of the official ToT code (princeton-nlp/tree-of-thought-llm) of a task with an "
                        f"importer of them: {', '.join(log_tasks()) or 'none installed'}")
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
        sources.append((path, searches(read_trace(path), path)))
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
        from solver.tools.audit.plots import write_plots  # matplotlib only when plots are asked for

        plots = write_plots(report, md)
        text = render(report, markdown=True)
        if plots:
            text += "\n## Plots\n\n" + "\n".join(f"![{t}]({p.name})" for t, p in plots) + "\n"
        md.write_text(text, encoding="utf-8")
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print(render(report), end="")
    groups = report.get("groups") or []
    if groups and all(g.get("unsupported") for g in groups):  # type: ignore[union-attr]
        print("tot: no run in these files could be audited (each group above says why)", file=sys.stderr)
        return 1
    return 0
