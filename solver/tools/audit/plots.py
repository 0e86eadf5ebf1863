"""Calibration you can see: PNG plots of a ``tot audit`` report, written next to its Markdown.

Per group of runs two plots: the **reliability** plot (each judgement class of the evaluator on
x, the measured share of solvable states among the states it judged so on y, with 95% Wilson
intervals and the number of states) and the **false-prune rate by depth** (solvable states cut by
a judgement / solvable states evaluated at that depth, with 95% Wilson intervals).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def _slug(g: dict[str, Any], index: int) -> str:
    bits = [str(g.get(k)) for k in ("task", "method", "generator", "evaluator", "model") if g.get(k)]
    text = re.sub(r"[^A-Za-z0-9]+", "-", "-".join(bits)).strip("-").lower()[:60]
    return f"{index}-{text}" if text else str(index)


def _errorbars(points: list[dict[str, Any]]) -> tuple[list[float], list[list[float]]]:
    ys: list[float] = []
    err: list[list[float]] = [[], []]
    for p in points:
        y = float(p["rate"])
        ys.append(y)
        err[0].append(max(0.0, y - float(p["low"])))
        err[1].append(max(0.0, float(p["high"]) - y))
    return ys, err


def _finish(plt: Any, fig: Any, ax: Any, path: Path, xlabel: str, ylabel: str, title: str) -> None:
    """The frame both plots share (a rate on y, the axes' labels, the title, a grid), saved to
    ``path``; the figure is closed."""
    ax.set_ylim(-0.02, 1.1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_plots(report: dict[str, Any], markdown: Path) -> list[tuple[str, Path]]:
    """Write the PNGs of every auditable group beside ``markdown``; returns (title, path) pairs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stem = markdown.with_suffix("")
    out: list[tuple[str, Path]] = []
    for i, g in enumerate(report["groups"], 1):
        if "unsupported" in g:
            continue
        slug = _slug(g, i)
        title = f"{g.get('task')} {g.get('method')} {g.get('generator')}/{g.get('evaluator')}"
        classes = [(k, c) for k, c in g["depths"]["all"]["classes"].items() if c["p_solvable"]["n"]]
        if classes:
            path = Path(f"{stem}_reliability_{slug}.png")
            ys, err = _errorbars([c["p_solvable"] for _, c in classes])
            fig, ax = plt.subplots(figsize=(max(4.5, 1.1 * len(classes) + 2), 3.6), dpi=110)
            xs = list(range(len(classes)))
            ax.errorbar(xs, ys, yerr=err, fmt="o", capsize=4, color="tab:blue")
            for x, (_, c) in zip(xs, classes, strict=True):
                ax.annotate(f"n={c['p_solvable']['n']}", (x, 1.02), ha="center", fontsize=8)
            ax.set_xticks(xs, [k if len(k) <= 18 else k[:17] + "…" for k, _ in classes], rotation=20, fontsize=8)
            _finish(plt, fig, ax, path, "evaluator's judgement", "share of states solvable", f"Reliability: {title}")
            out.append((f"reliability, {title}", path))
        depths = [(d, v) for d, v in g["depths"].items() if d != "all" and v["false_prune"]["n"]]
        if depths:
            path = Path(f"{stem}_false_prune_by_depth_{slug}.png")
            ys, err = _errorbars([v["false_prune"] for _, v in depths])
            fig, ax = plt.subplots(figsize=(max(4.5, 0.6 * len(depths) + 2.5), 3.6), dpi=110)
            xs = [int(d) for d, _ in depths]
            ax.errorbar(xs, ys, yerr=err, fmt="s-", capsize=4, color="tab:red")
            for x, (_, v) in zip(xs, depths, strict=True):
                ax.annotate(f"{v['false_prune']['k']}/{v['false_prune']['n']}", (x, 1.02), ha="center", fontsize=8)
            ax.set_xticks(xs)
            _finish(plt, fig, ax, path, "depth", "false-prune rate", f"False prunes by depth: {title}")
            out.append((f"false prunes by depth, {title}", path))
    return out
