"""The audit report (``tot audit --json``'s object) as terminal tables or Markdown."""

from __future__ import annotations

from typing import Any

from solver.tools.stats import Proportion


def _pct(p: dict[str, Any]) -> str:
    return Proportion(int(p["k"]), int(p["n"])).text()


def _name(g: dict[str, Any]) -> str:
    bits = [str(g.get(k)) for k in ("task", "method", "generator", "evaluator", "model") if g.get(k)]
    return f"{g['source']} [{' '.join(bits)}]"


def _unvisited(depth: dict[str, Any]) -> int | None:
    """Solvable states an MCTS run never visited (None: the figures hold no such cut)."""
    cut = depth["cut"].get("unvisited")
    return None if cut is None or not sum(cut.values()) else int(cut["solvable"])


def _has_unvisited(groups: list[dict[str, Any]]) -> bool:
    """Whether any group holds MCTS's unvisited children: only then is their column shown."""
    return any(_unvisited(g["depths"]["all"]) is not None for g in groups if "unsupported" not in g)


def _avoidable(depth: dict[str, Any]) -> bool:
    """Whether the figures define the avoidable beam cuts (the paper's BFS; older reports lack them)."""
    got = depth.get("false_prune_beam_avoidable")
    return got is not None and bool(got["n"])


def _has_avoidable(groups: list[dict[str, Any]]) -> bool:
    return any(_avoidable(g["depths"]["all"]) for g in groups if "unsupported" not in g)


def _summary_rows(report: dict[str, Any]) -> list[list[str]]:
    mcts = _has_unvisited(report["groups"])
    avoid = _has_avoidable(report["groups"])
    rows = [["source", "task", "method", "generator", "evaluator", "model", "runs", "evaluated", "solvable",
             "false-prune [95% CI]", "pruned", "beam (tie)", *(["avoidable [95% CI]"] if avoid else []),
             *(["unvisited"] if mcts else []), "other", "lost puzzles"]]
    for g in report["groups"]:
        who = [g["source"], str(g.get("task")), str(g.get("method")), str(g.get("generator")),
               str(g.get("evaluator")), str(g.get("model") or "-"), str(g["runs"])]
        if "unsupported" in g:
            rows.append([*who, "not auditable: " + g["unsupported"], "", "", "", "", "", "",
                         *([""] if avoid else []), *([""] if mcts else [])])
            continue
        a = g["depths"]["all"]
        rows.append([*who, str(a["evaluated"]), str(a["solvable"]),
                     _pct(a["false_prune"]), str(a["cut"]["pruned"]["solvable"]),
                     f"{a['cut']['beam']['solvable']} ({a['beam_ties']['solvable']})",
                     *([_pct(a["false_prune_beam_avoidable"]) if _avoidable(a) else "-"] if avoid else []),
                     *([str(_unvisited(a) or 0)] if mcts else []),
                     str(a["cut"]["other"]["solvable"]),
                     f"{len(g['lost'])}/{g['puzzles_solvable']}"])
    return rows


def _depth_rows(g: dict[str, Any]) -> list[list[str]]:
    mcts = _has_unvisited([g])
    avoid = _has_avoidable([g])
    rows = [["depth", "evaluated", "solvable", "unsolvable", "invalid", "false-prune [95% CI]",
             "pruned", "beam (tie)", *(["avoidable [95% CI]"] if avoid else []), *(["unvisited"] if mcts else []),
             "unsolvable cut [95% CI]"]]
    for key, d in g["depths"].items():
        rows.append([key, str(d["evaluated"]), str(d["solvable"]), str(d["unsolvable"]), str(d["invalid"]),
                     _pct(d["false_prune"]), str(d["cut"]["pruned"]["solvable"]),
                     f"{d['cut']['beam']['solvable']} ({d['beam_ties']['solvable']})",
                     *([_pct(d["false_prune_beam_avoidable"])] if avoid else []),
                     *([str(_unvisited(d) or 0)] if mcts else []), _pct(d["true_prune"])])
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
             "false-prune = solvable states cut by a judgement (pruned, beam, or unvisited by MCTS) / solvable states "
             "evaluated; other = cut by depth or child limits; intervals are 95% Wilson."
             + (" avoidable = solvable states lost to the beam that a ranking with every solvable state first "
                "would have kept (the rest of a beam's false prunes are its width; the paper's BFS only)."
                if _has_avoidable(report["groups"]) else ""), table(_summary_rows(report))]
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
