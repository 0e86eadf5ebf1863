"""Crossword DFS logs of the official ToT code (princeton-nlp/tree-of-thought-llm,
``logs/crosswords/infoss_dfs_prune.json`` and ``infoss_dfs_no_prune.json``) as our trace events,
so that ``tot audit --tot-log FILE`` judges them like our own runs.

What the log records (``scripts/crosswords/search_crosswords-dfs.ipynb``): a JSON list with one
game per test puzzle (mini0505.json puzzles 0, 5, ..., 95). A game lists every state the DFS
visited, in visiting order: ``{"total_step", "env_step", "actions", "info", "count"}``.
``actions`` is the path of words from the empty board (``"h2. motor"``); a state is logged only
if placing its last word changed no letter already on the board, and only while fewer than 100
states were logged (``time_limit``) and fewer than 10 words were placed. ``info`` holds the
environment's ``r_letter`` and ``r_word`` (shares of letters and words equal to the answer board,
computed by the environment, which sees the answer) and, in later versions, ``r_game``.
``count`` is the model's judgement of every clue with at most 3 empty cells (sure / maybe /
impossible). With pruning on, a state with any ``impossible`` is not expanded.

Here each logged state becomes a node whose parent is the state of its path without the last
word; the word is re-checked by our exact grid gate (``verifiers.crossword.check_word``: the slot
exists, five letters A-Z, agrees with every crossing letter already placed). The judgement becomes
class ``impossible`` (any clue judged impossible), ``maybe`` or ``sure``; a state judged impossible
is cut as ``pruned`` when the log was made with pruning (inferred: no such state has a child).
Letters, words and games are re-scored from the actions against the answer board and compared
with what the log itself recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tasks.crosswords.data import TEST_INDICES, Puzzle, load_puzzles
from tasks.crosswords.task import parse_thought
from verifiers.crossword import LAYOUT_5X5, Grid, check_word, score_board
from verifiers.verdict import Invalid

MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_WORDS = 10


def read_log(path: str | Path) -> Any:
    """The parsed JSON of a log file; ValueError (one line) for a missing, special, huge or bad file."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"no such log file: {p}")
    if not p.is_file():
        raise ValueError(f"{p} is not a regular file")
    if p.stat().st_size > MAX_LOG_BYTES:
        raise ValueError(f"{p} is larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"{p} is not a JSON file: {str(exc)[:80]}") from None


def recognises(data: Any) -> bool:
    """Whether parsed JSON ``data`` has this log's outer shape (a list of games, each a list): how
    ``tot audit --tot-log`` tells the task of a log given without ``--task`` (``import_log`` then
    checks the steps)."""
    return isinstance(data, list) and bool(data) and all(isinstance(g, list) for g in data)


def is_crossword_log(data: Any) -> bool:
    """True for the shape of a crossword DFS log (a list of games, each a list of steps)."""
    return (isinstance(data, list) and bool(data) and all(isinstance(g, list) for g in data)
            and any(isinstance(s, dict) and "actions" in s for g in data for s in g))


def _step_fields(step: Any, where: str) -> tuple[int, list[str], dict[str, Any], dict[str, int]]:
    if not isinstance(step, dict):
        raise ValueError(f"{where}: a step must be a JSON object")
    env_step, actions = step.get("env_step"), step.get("actions")
    info, count = step.get("info") or {}, step.get("count") or {}
    if not (isinstance(env_step, int) and isinstance(actions, list) and actions
            and all(isinstance(a, str) and len(a) <= 100 for a in actions) and len(actions) <= MAX_WORDS):
        raise ValueError(f"{where}: needs env_step and a list of 1-{MAX_WORDS} actions like 'h2. motor'")
    if not (isinstance(info, dict) and isinstance(count, dict)
            and all(isinstance(count.get(k, 0), int) for k in ("sure", "maybe", "impossible"))):
        raise ValueError(f"{where}: info must be an object and count must hold whole numbers")
    return env_step, actions, info, {k: int(count.get(k, 0)) for k in ("sure", "maybe", "impossible")}


def judgement(count: dict[str, int]) -> str:
    """The state's judgement class: any clue impossible, else any maybe, else sure."""
    if count["impossible"] > 0:
        return "impossible"
    if count["maybe"] > 0:
        return "maybe"
    return "sure" if count["sure"] > 0 else "none"


def _gate(grid: Grid | None, action: str) -> tuple[Grid | None, str | None, bool]:
    """(new grid, refusal kind or None, whether the slot was already complete)."""
    if grid is None:
        return None, "follows a refused word", False
    parsed = parse_thought(action)
    if isinstance(parsed, Invalid):
        return None, "not of the form 'h1. word'", False
    slot_name, word = parsed
    refill = slot_name in LAYOUT_5X5.names and not grid.is_open(LAYOUT_5X5.slot(slot_name))
    new = check_word(grid, slot_name, word)
    if isinstance(new, Invalid):
        reason = new.reason
        kind = ("no such slot" if "no slot" in reason else "not letters" if "letters A-Z" in reason
                else "wrong length" if "letters, the slot" in reason else "disagrees with a crossing letter")
        return None, kind, refill
    return new, None, refill


def game_events(game: list[Any], puzzle: Puzzle, index: int, prune: bool) -> list[dict[str, Any]]:
    """Our trace events for one game of a log (``index``: the 1-based mini0505 puzzle number)."""
    if puzzle.answer is None:
        raise ValueError(f"puzzle {index} has no answer board; the log cannot be re-scored")
    answer = puzzle.answer
    root = Grid.empty(LAYOUT_5X5)
    tally = {"puzzles": 1, "steps": 0, "judged_impossible": 0, "gate_refused": 0, "refills": 0,
             "letters_mismatch": 0, "words_mismatch": 0, "r_game_recorded": 0, "game_mismatch": 0,
             "solved_rescored": 0}
    summary: dict[str, Any] = {"puzzle": index, "steps": len(game), "solved_step": None,
                               "best_letters": 0, "best_words": 0, "logged_best_letters": 0.0,
                               "logged_best_words": 0.0, "mismatches": []}
    events: list[dict[str, Any]] = [
        {"event": "start", "task": "crosswords", "puzzle": puzzle.text(), "id": index, "method": "tot-dfs",
         "generator": "propose", "evaluator": "clue-judge", "model": "official ToT log",
         "prune": prune, "audit": tally, "log_game": summary},
        {"event": "root", "node": 0, "state": root.cells},
    ]
    path_nodes: list[int] = []  # node ids along the current DFS path
    path_words: list[str] = []
    grids: dict[int, Grid | None] = {0: root}
    for i, step in enumerate(game):
        where = f"game {index}, step {i}"
        env_step, actions, info, count = _step_fields(step, where)
        depth = len(actions)
        if env_step != depth or actions[:-1] != path_words[: depth - 1] or depth - 1 > len(path_nodes):
            raise ValueError(f"{where}: its actions do not extend the DFS path (not a DFS log?)")
        nid = i + 1
        parent = path_nodes[depth - 2] if depth >= 2 else 0
        path_nodes, path_words = path_nodes[: depth - 1] + [nid], list(actions)
        events.append({"event": "proposal", "node": nid, "parent": parent, "depth": depth, "thought": actions[-1]})
        grid, refused, refill = _gate(grids.get(parent), actions[-1])
        grids[nid] = grid
        tally["steps"] += 1
        tally["refills"] += refill
        if refused is not None:
            tally["gate_refused"] += 1
            events.append({"event": "verdict", "node": nid, "verdict": "invalid", "kind": refused, "reason": refused})
        else:
            assert grid is not None
            # A complete grid that passed the gate is "solved" for the gate, as in our own task;
            # whether it is the answer is the oracle's call.
            verdict = "solved" if grid.is_full() else "valid"
            events.append({"event": "verdict", "node": nid, "verdict": verdict, "state": grid.cells})
            _rescore(grid, answer, info, i, tally, summary)
        klass = judgement(count)
        tally["judged_impossible"] += klass == "impossible"
        events.append({"event": "score", "node": nid, "score": 0.0 if klass == "impossible" else 1.0,
                       "detail": {"class": klass, "count": count}})
        if prune and klass == "impossible":
            events.append({"event": "cut", "node": nid, "why": "pruned", "score": 0.0})
        else:
            events.append({"event": "keep", "node": nid, "score": 1.0})
    events.append({"event": "end", "verified": summary["solved_step"] is not None,
                   "stopped_by": "steps" if len(game) >= 100 else None})
    return events


def _rescore(grid: Grid, answer: str, info: dict[str, Any], step: int, tally: dict[str, int],
             summary: dict[str, Any]) -> None:
    s = score_board(grid.cells, answer)
    summary["best_letters"] = max(summary["best_letters"], s.letters_right)
    summary["best_words"] = max(summary["best_words"], s.words_right)
    solved = grid.cells == answer
    if solved and summary["solved_step"] is None:
        summary["solved_step"] = step
        tally["solved_rescored"] = 1
    logged_l, logged_w = info.get("r_letter"), info.get("r_word")
    if isinstance(logged_l, (int, float)):
        summary["logged_best_letters"] = max(summary["logged_best_letters"], float(logged_l))
        if round(float(logged_l) * 25) != s.letters_right:
            tally["letters_mismatch"] += 1
            summary["mismatches"].append({"step": step, "field": "r_letter", "logged": logged_l,
                                          "rescored": s.letters_right / 25})
    if isinstance(logged_w, (int, float)):
        summary["logged_best_words"] = max(summary["logged_best_words"], float(logged_w))
        if round(float(logged_w) * 10) != s.words_right:
            tally["words_mismatch"] += 1
            summary["mismatches"].append({"step": step, "field": "r_word", "logged": logged_w,
                                          "rescored": s.words_right / 10})
    if "r_game" in info:
        tally["r_game_recorded"] += 1
        if bool(info["r_game"]) != solved:
            tally["game_mismatch"] += 1
            summary["mismatches"].append({"step": step, "field": "r_game", "logged": info["r_game"],
                                          "rescored": solved})


def prune_was_on(data: list[list[Any]]) -> bool:
    """A log made with pruning never expands a state judged impossible: no step's path extends one."""
    for game in data:
        impossible: set[tuple[str, ...]] = set()
        for step in game:
            if not isinstance(step, dict) or not isinstance(step.get("actions"), list):
                continue
            acts = tuple(str(a) for a in step["actions"])
            if acts[:-1] in impossible:
                return False
            if isinstance(step.get("count"), dict) and step["count"].get("impossible", 0):
                impossible.add(acts)
    return True


def import_data(data: Any, puzzles: list[Puzzle] | None = None) -> list[dict[str, Any]]:
    """All trace events of a parsed crossword DFS log."""
    if not is_crossword_log(data):
        raise ValueError("not an official crossword DFS log: expected a JSON list of games, each a list of steps")
    if len(data) > len(TEST_INDICES):
        raise ValueError(f"the log has {len(data)} games; the paper's test set has {len(TEST_INDICES)}")
    puzzles = puzzles if puzzles is not None else load_puzzles()
    prune = prune_was_on(data)
    events: list[dict[str, Any]] = []
    for g, game in enumerate(data):
        idx = TEST_INDICES[g]
        if idx > len(puzzles):
            raise ValueError(f"game {g} needs puzzle {idx}, the puzzle file has {len(puzzles)}")
        events.extend(game_events(game, puzzles[idx - 1], idx, prune))
    return events


def import_log(path: str | Path) -> list[dict[str, Any]]:
    """All trace events of an official crossword DFS log file; ValueError for a malformed one."""
    return import_data(read_log(path))
