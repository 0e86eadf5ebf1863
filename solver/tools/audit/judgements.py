"""An evaluator's judgement of a state as a class label (value: best label; likelihood: most
probable label; vote: number of votes; oracle: 1/0), or classes made from raw scores."""

from __future__ import annotations

from typing import Any, Sequence

from solver.task import ValueScale
from solver.tools.audit.runs import finite_number

_MAX_SCORE_CLASSES = 8  # more distinct raw scores than this are binned into quartiles


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
            probs = {k: finite_number(v) or 0.0 for k, v in detail["p"].items()}
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
