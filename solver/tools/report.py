"""Benchmark results: read the JSON lines of ``tot bench``, summarise each method with a 95%
Wilson interval (``solver.tools.stats.wilson``), and draw the paper's two figures (success
against tokens; the step at which failed runs lost their last solvable state)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from solver.inputs import MAX_DATA_FILE, read_text
from solver.tools.stats import quantiles, wilson

RESULTS_GLOB = "results*.jsonl"


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Rows of one results file (each with an ``id``, a ``method`` and a ``status``); a half-written
    line (a killed run) or any other line is skipped."""
    rows = []
    for line in read_text(path, "results file", MAX_DATA_FILE).splitlines():
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(row, dict) and "method" in row and "id" in row and isinstance(row.get("status"), str):
            rows.append(row)
    return rows


def pair_key(row: dict[str, Any]) -> tuple[str, str, str]:
    return str(row.get("task")), str(row["id"]), str(row["method"])


def final_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (task, puzzle, method): the first finished one, else the last errored one.
    A pair is never counted twice, however often a run was resumed or merged."""
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        k = pair_key(row)
        old = best.get(k)
        if old is None or (old.get("status") != "done"):
            best[k] = row
    return list(best.values())


def load_rows(dirs: Iterable[str | Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for d in dirs:
        for f in sorted(Path(d).glob(RESULTS_GLOB)):
            rows.extend(read_lines(f))
    return final_rows(rows)


@dataclass(frozen=True, slots=True)
class MethodSummary:
    """Per-method figures. Rates are over finished pairs; errored pairs are only counted."""

    method: str
    n: int
    solved: int
    errored: int
    rate: float
    lo: float
    hi: float
    calls: float  # per puzzle
    prompt_tokens: float  # per puzzle
    completion_tokens: float  # per puzzle
    tokens_per_solved: float | None
    cost: float | None  # per puzzle, USD; None when the model has no price
    seconds: float  # per puzzle
    seconds_per_solved: float | None
    raw_answers: int
    invalid_answers: int
    proposed: int
    rejected: int  # thoughts the gate rejected
    unchecked: int  # thoughts let through with the gate off
    final_rejected: int  # solutions the final answer check refused
    # Per-puzzle distributions over finished pairs: (median, 90th percentile by nearest rank).
    calls_q: tuple[float, float] = (0.0, 0.0)
    tokens_q: tuple[float, float] = (0.0, 0.0)
    seconds_q: tuple[float, float] = (0.0, 0.0)
    expanded_q: tuple[float, float] | None = None  # searches only: states expanded
    exhausted: int = 0  # searches that proved no answer exists (complete search, nothing cut)


def summarize(rows: Iterable[dict[str, Any]]) -> list[MethodSummary]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[str(r["method"])].append(r)
    out = []
    for method in sorted(by, key=_method_order):
        rs = by[method]
        done = [r for r in rs if r.get("status") == "done"]
        n = len(done)
        solved = sum(1 for r in done if r.get("verified"))
        lo, hi = wilson(solved, n)

        def total(field: str, rows: list[dict[str, Any]] = done) -> float:
            return float(sum((r.get(field) or 0) for r in rows))

        def per(x: float, d: int) -> float:
            return x / d if d else 0.0

        tokens = total("prompt_tokens") + total("completion_tokens")
        costs = [r.get("cost") for r in done]
        cost = per(sum(c for c in costs if c is not None), n) if costs and all(c is not None for c in costs) else None
        out.append(MethodSummary(
            method=method, n=n, solved=solved, errored=sum(1 for r in rs if r.get("status") != "done"),
            rate=per(solved, n), lo=lo, hi=hi, calls=per(total("calls"), n),
            prompt_tokens=per(total("prompt_tokens"), n), completion_tokens=per(total("completion_tokens"), n),
            tokens_per_solved=tokens / solved if solved else None, cost=cost,
            seconds=per(total("seconds"), n), seconds_per_solved=total("seconds") / solved if solved else None,
            raw_answers=int(total("raw_answers")), invalid_answers=int(total("invalid_answers")),
            proposed=int(total("proposed")), rejected=int(total("rejected")),
            unchecked=int(total("unchecked")), final_rejected=int(total("final_rejected")),
            calls_q=quantiles([r.get("calls") or 0 for r in done]),
            tokens_q=quantiles([(r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0) for r in done]),
            seconds_q=quantiles([r.get("seconds") or 0 for r in done]),
            expanded_q=quantiles([r["expanded"] for r in done]) if done and all("expanded" in r for r in done)
            else None,
            exhausted=sum(1 for r in done if r.get("exhausted"))))
    return out


def _method_order(m: str) -> tuple[int, str]:
    order = ["io", "cot", "cot-sc", "refine", "io-best", "cot-best", "zero-shot", "one-shot", "few-shot", "long",
             "tot-complete", "tot-bfs", "tot-dfs"]
    base = m.split(":", 1)[0]
    return (order.index(base) if base in order else len(order), m)


def _opt(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def format_table(summaries: list[MethodSummary]) -> str:
    width = max([18] + [len(s.method) for s in summaries])
    head = (f"{'method':{width}} {'solved':>9} {'rate':>6} {'95% CI':>13} {'calls':>7} {'prompt tok':>10} "
            f"{'compl tok':>9} {'tok/solved':>10} {'cost':>8} {'s/pz':>7} {'s/solved':>8} "
            f"{'invalid raw':>11} {'gate rej':>13} {'errored':>7}")
    lines = [head, "-" * len(head)]
    for s in summaries:
        invalid = f"{s.invalid_answers}/{s.raw_answers}" if s.raw_answers else "-"
        gate = f"{s.rejected}/{s.proposed}" if s.proposed else "-"
        lines.append(
            f"{s.method:{width}} {s.solved:>4}/{s.n:<4} {s.rate:6.1%} {f'{s.lo:.1%}-{s.hi:.1%}':>13} {s.calls:7.1f} "
            f"{s.prompt_tokens:10.0f} {s.completion_tokens:9.0f} {_opt(s.tokens_per_solved, '10.0f'):>10} "
            f"{_opt(s.cost, '8.4f'):>8} {s.seconds:7.2f} {_opt(s.seconds_per_solved, '8.2f'):>8} "
            f"{invalid:>11} {gate:>13} {s.errored:>7}")
    lines.append("per puzzle: calls, tokens, cost (USD), seconds; invalid raw = model answers unparseable or "
                 "refused by the exact check; gate rej = thoughts refused / proposed")
    lines += ["", *format_quantiles(summaries)]
    gate_lines = gate_effect(summaries)
    if gate_lines:
        lines += ["", "gate ablation (same settings, gate off):", *gate_lines]
    return "\n".join(lines)


def format_quantiles(summaries: list[MethodSummary]) -> list[str]:
    """Per puzzle, median and 90th percentile: model calls, tokens, seconds, states expanded."""
    width = max([18] + [len(s.method) for s in summaries])
    head = (f"{'method':{width}} {'solved':>9} {'calls med/p90':>14} {'tokens med/p90':>16} "
            f"{'s med/p90':>13} {'expanded med/p90':>17} {'proved none':>11}")
    out = [head, "-" * len(head)]
    for s in summaries:
        exp = f"{s.expanded_q[0]:.0f}/{s.expanded_q[1]:.0f}" if s.expanded_q is not None else "-"
        out.append(f"{s.method:{width}} {s.solved:>4}/{s.n:<4} {f'{s.calls_q[0]:.0f}/{s.calls_q[1]:.0f}':>14} "
                   f"{f'{s.tokens_q[0]:.0f}/{s.tokens_q[1]:.0f}':>16} "
                   f"{f'{s.seconds_q[0]:.1f}/{s.seconds_q[1]:.1f}':>13} {exp:>17} {s.exhausted:>11}")
    out.append("per puzzle: median/90th percentile (nearest rank); expanded = states the search expanded; "
               "proved none = complete searches that exhausted the tree")
    return out


def gate_effect(summaries: list[MethodSummary]) -> list[str]:
    """For each method run both with and without the gate: what switching it off changed."""
    by = {s.method: s for s in summaries}
    out = []
    for name, off in by.items():
        if not name.endswith(":no-gate") or name[: -len(":no-gate")] not in by:
            continue
        on = by[name[: -len(":no-gate")]]
        out.append(f"  {on.method}: solved {on.solved}/{on.n} with the gate, {off.solved}/{off.n} without; "
                   f"without it {off.unchecked} wrong thoughts entered the tree and the final check refused "
                   f"{off.final_rejected} claimed solutions; tokens/puzzle "
                   f"{on.prompt_tokens + on.completion_tokens:.0f} vs {off.prompt_tokens + off.completion_tokens:.0f}")
    return out


def plot_success_vs_tokens(summaries: list[MethodSummary], path: Path) -> Path:
    """The paper's Figure 3a shape: success rate against tokens per puzzle, one point per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for s in summaries:
        x = max(s.prompt_tokens + s.completion_tokens, 1.0)
        ax.errorbar([x], [s.rate * 100], yerr=[[100 * (s.rate - s.lo)], [100 * (s.hi - s.rate)]],
                    fmt="o", capsize=3, label=f"{s.method} ({s.solved}/{s.n})")
        ax.annotate(s.method, (x, s.rate * 100), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels on a short log axis overlap
    ax.set_xlabel("tokens per puzzle (prompt + completion, log scale)")
    ax.set_ylabel("success rate (%), 95% Wilson interval")
    ax.set_ylim(-2, 102)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    ax.set_title("Success against cost")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def lost_counts(rows: Iterable[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per method: how many runs lost their last solvable state at each step ('1', '2', ...),
    kept one to the end ('end'), ran out of budget ('budget'), or were solved ('solved')."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        if r.get("status") != "done":
            continue
        if r.get("verified"):
            out[r["method"]]["solved"] += 1
        elif r.get("lost_at") is None:
            continue
        elif r.get("stopped_by"):
            out[r["method"]]["budget"] += 1
        elif r.get("max_depth") is not None and r["lost_at"] > r["max_depth"]:
            out[r["method"]]["end"] += 1
        else:
            out[r["method"]][str(r["lost_at"])] += 1
    return {m: c for m, c in out.items() if sum(v for k, v in c.items() if k != "solved")}


def plot_lost_step(rows: list[dict[str, Any]], path: Path) -> Path | None:
    """The paper's Figure 3b shape: fraction of runs by the step where the last solvable state
    was lost (with 'solved' on the right); None when no method recorded it."""
    counts = lost_counts(rows)
    if not counts:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = sorted({k for c in counts.values() for k in c if k.isdigit()}, key=int)
    cats = steps + [k for k in ("end", "budget", "solved") if any(k in c for c in counts.values())]
    methods = sorted(counts, key=_method_order)
    width = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for i, m in enumerate(methods):
        total = sum(counts[m].values())
        ys = [100 * counts[m][c] / total for c in cats]
        ax.bar([k + (i - (len(methods) - 1) / 2) * width for k in range(len(cats))], ys, width,
               label=f"{m} (n={total})")
    labels = {"end": "kept to\nthe end", "budget": "budget\nran out", "solved": "solved"}
    ax.set_xticks(range(len(cats)), [labels.get(c, f"step {c}") for c in cats])
    ax.set_ylabel("runs (%)")
    ax.set_title("Where runs lost their last solvable state")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_report(out: Path, rows: list[dict[str, Any]], plots: bool = True) -> tuple[str, list[Path]]:
    """Write summary.txt, summary.json and the figures into ``out``; return the table and paths."""
    out.mkdir(parents=True, exist_ok=True)
    summaries = summarize(rows)
    table = format_table(summaries)
    (out / "summary.txt").write_text(table + "\n", encoding="utf-8")
    (out / "summary.json").write_text(json.dumps([asdict(s) for s in summaries], indent=1) + "\n",
                                      encoding="utf-8")
    paths = [out / "summary.txt", out / "summary.json"]
    if plots and summaries:
        paths.append(plot_success_vs_tokens(summaries, out / "success_vs_tokens.png"))
        lost = plot_lost_step(rows, out / "lost_step.png")
        if lost is not None:
            paths.append(lost)
    return table, paths
