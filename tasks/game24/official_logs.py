"""Game-of-24 BFS logs of the official ToT code (princeton-nlp/tree-of-thought-llm) as our trace
events, so that ``tot audit --tot-log FILE`` judges them exactly like our own runs.

A log is a JSON list with one entry per puzzle: ``{"idx", "steps": [{"step", "x", "ys",
"new_ys", "values", "select_new_ys"}, ...], "ys", "infos": [{"r"}], ...}``. Each candidate in
``new_ys`` is its parent in ``ys`` plus one line the model wrote. That line is re-checked exactly
here: a step against the numbers its (exactly checked) parent really has, an ``Answer:`` line
from the puzzle numbers alone. The official code went on from the model's own "left" list, so a
candidate after a wrong step is marked ``follows an invalid step``.

A value is the sum over the samples of sure=20, likely=1, impossible=0.001, so it is decoded
back into label counts. The official code gives 0 to a repeated candidate (cut here as a
duplicate, not scored) and to a four-line candidate without an answer (class ``refused (0)``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from solver.inputs import MAX_DATA_FILE, read_text
from solver.task import Thought
from tasks.game24.task import Game24, State24, parse_puzzle
from verifiers.arithmetic import apply_op, parse_step, verify_answer
from verifiers.verdict import Invalid

_LABEL_VALUES = (("sure", 20.0), ("likely", 1.0), ("impossible", 0.001))
_PAREN_NUMBER = re.compile(r"\(\s*(-?\d+(?:\.\d+)?)\s*\)", re.ASCII)  # "6 + (-1)" is "6 + -1"


def decode_value(value: float, max_samples: int = 19) -> list[str] | None:
    """Label counts behind a summed value (e.g. 21.001 -> sure, likely, impossible), or None when
    the value is no such sum. Unambiguous while fewer than 20 samples were taken."""
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    milli = round(value * 1000)
    if abs(milli - value * 1000) > 1e-3:
        return None
    sure, rest = divmod(milli, 20000)
    likely, impossible = divmod(rest, 1000)
    if likely >= 20 or sure + likely + impossible > max_samples:
        return None
    return ["sure"] * sure + ["likely"] * likely + ["impossible"] * impossible


def step_fault(numbers: tuple[Any, ...], line: str) -> str | None:
    """What is wrong with one step line against the numbers really available; None if nothing."""
    if "\u2248" in line or "approx" in line.lower():
        return "approximate result"
    try:
        a, op, b, c, left = parse_step(_PAREN_NUMBER.sub(r"\1", line))
    except ValueError:
        return "not a step"
    have = Counter(numbers)
    if have[a] < 1 or have[b] < (2 if a == b else 1):
        return "operands not available"
    true_c = apply_op(a, op, b)
    if true_c is None:
        return "division by zero"
    if c != true_c:
        return "wrong result"
    if left is None:
        return "missing left list"
    rest = have - Counter([a, b])
    if Counter(left) != rest + Counter([true_c]):
        return "wrong left list"
    return None


def _parent_of(new_y: str, ys: dict[str, int]) -> str | None:
    best = None
    for y in ys:
        if new_y.startswith(y) and (best is None or len(y) > len(best)):
            best = y
    return best


def _selected(new_ys: list[str], values: list[float], chosen: list[str]) -> list[int]:
    """Indices of the kept candidates: for each chosen text, the unused copy with the highest
    value, the earliest among equals (what the official stable greedy sort picks)."""
    used: set[int] = set()
    out = []
    for text in chosen:
        idx = [i for i, y in enumerate(new_ys) if y == text and i not in used]
        if idx:
            best = max(idx, key=lambda i: (values[i], -i))
            used.add(best)
            out.append(best)
    return out


def entry_events(entry: dict[str, Any], task: Game24 | None = None) -> list[dict[str, Any]]:
    """Our trace events for one puzzle of an official log."""
    task = task or Game24()
    steps = entry.get("steps")
    if not isinstance(steps, list) or not steps or not isinstance(steps[0], dict):
        raise ValueError(f"log entry {entry.get('idx')!r} has no 'steps' list")
    puzzle = str(steps[0].get("x", "")).strip()
    nums = parse_puzzle(puzzle)
    root = task.root(puzzle)
    tally: Counter[str] = Counter()
    infos = entry.get("infos") or []
    official = int(any(isinstance(i, dict) and i.get("r") == 1 for i in infos))
    events: list[dict[str, Any]] = [
        {"event": "start", "task": task.name, "puzzle": puzzle, "id": entry.get("idx"), "method": "tot-bfs",
         "generator": "propose", "evaluator": "value", "model": "official ToT log", "audit": {}},
        {"event": "root", "node": 0, "state": task.describe(root)},
    ]
    states: dict[int, State24 | None] = {0: root}  # None: reached through a refused step
    frontier: dict[str, int] = {"": 0}
    next_id = 1
    for depth, step in enumerate(steps, 1):
        new_ys, values, chosen = step.get("new_ys"), step.get("values"), step.get("select_new_ys")
        if not (isinstance(new_ys, list) and isinstance(values, list) and isinstance(chosen, list)
                and len(new_ys) == len(values) and all(isinstance(y, str) for y in new_ys + chosen)
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)):
            raise ValueError(f"log entry {entry.get('idx')!r}, step {depth - 1}: new_ys, values and "
                             "select_new_ys must be lists of texts, with one number per new_y")
        ids: list[int] = []
        seen: set[str] = set()
        for new_y, value in zip(new_ys, values, strict=True):
            nid, next_id = next_id, next_id + 1
            ids.append(nid)
            parent_y = _parent_of(new_y, frontier)
            parent = frontier.get(parent_y) if parent_y is not None else None
            line = new_y[len(parent_y or ""):].strip()
            events.append({"event": "proposal", "node": nid, "parent": parent, "depth": depth, "thought": line})
            events.extend(_verdict(task, nums, states, nid, parent, line))
            tally["candidates"] += 1
            if new_y in seen:
                tally["duplicates"] += 1
                events.append({"event": "cut", "node": nid, "why": "duplicate"})
                continue
            seen.add(new_y)
            labels = decode_value(value)
            if value == 0 and len(new_y.strip().split("\n")) == 4 and "answer" not in new_y.lower():
                detail: dict[str, Any] = {"labels": [], "class": "refused (0)"}
            elif labels is None:
                detail = {"error": f"value {value!r} is not a sum of 20, 1 and 0.001"}
            else:
                detail = {"labels": labels}
            events.append({"event": "score", "node": nid, "score": value, "detail": detail})
        kept = _selected(new_ys, values, chosen)
        cutoff = min((values[i] for i in kept), default=None)
        for i in kept:
            events.append({"event": "keep", "node": ids[i], "score": values[i]})
        dup = {ids[i] for i, y in enumerate(new_ys) if new_ys.index(y) != i}
        for i, nid in enumerate(ids):
            if i not in kept and nid not in dup:
                events.append({"event": "cut", "node": nid, "why": "beam", "score": values[i],
                               "tie": values[i] == cutoff})
        frontier = {}
        for i in kept:
            frontier.setdefault(new_ys[i], ids[i])
    answered = False
    for y, nid in frontier.items():
        last = y.strip().split("\n")[-1] if y.strip() else ""
        if last.lower().startswith("answer") and not isinstance(verify_answer(nums, last), Invalid):
            answered = True
            events.append({"event": "answer", "node": nid, "answer": last, "verified": True})
    events[0]["audit"] = {"puzzles": 1, "official_r_solved": official, "reverified_solved": int(answered),
                          **dict(tally)}
    events.append({"event": "end", "verified": answered, "stopped_by": None})
    return events


def _verdict(task: Game24, nums: tuple[int, ...], states: dict[int, State24 | None], nid: int,
             parent: int | None, line: str) -> list[dict[str, Any]]:
    base = {"event": "verdict", "node": nid}
    pstate = states.get(parent) if parent is not None else None
    if line.lower().startswith("answer"):
        # Judged from the puzzle numbers alone, as our search re-verifies every answer.
        states[nid] = None  # an answer ends a path
        res = verify_answer(nums, line)
        if isinstance(res, Invalid):
            return [{**base, "verdict": "invalid", "kind": "wrong answer", "reason": res.reason}]
        return [{**base, "verdict": "solved", "state": "24"}]
    if parent is None:
        kind = "parent not in ys"
    elif pstate is None:
        kind = "follows an invalid step"
    else:
        fault = step_fault(pstate.numbers, line)
        if fault is None:
            verdict = task.check(pstate, Thought(_PAREN_NUMBER.sub(r"\1", line)))
            if not isinstance(verdict, Invalid):
                states[nid] = verdict.state
                # One number 24 left is not yet an answer in the official search.
                return [{**base, "verdict": "valid", "state": task.describe(verdict.state)}]
            fault = "refused by the gate"
        kind = fault
    states[nid] = None
    return [{**base, "verdict": "invalid", "kind": kind, "reason": kind}]


def recognises(data: Any) -> bool:
    """Whether parsed JSON ``data`` has this log's shape (a list of puzzle entries with ``steps``):
    how ``tot audit --tot-log`` tells the task of a log given without ``--task``."""
    return isinstance(data, list) and bool(data) and all(isinstance(e, dict) and "steps" in e for e in data)


def import_log(path: str | Path) -> list[dict[str, Any]]:
    """All trace events of an official Game-of-24 BFS log file; ValueError for a malformed one."""
    p = Path(path)
    text = read_text(p, "log file", MAX_DATA_FILE)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{p} is not a JSON file: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ValueError(f"{p} is not an official ToT log: expected a JSON list of puzzle entries")
    task = Game24()
    events: list[dict[str, Any]] = []
    for entry in data:
        events.extend(entry_events(entry, task))
    return events
