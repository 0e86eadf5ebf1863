"""The trace format: one table of every event and field, read by the writer (``solver.trace``),
the reader (``solver.trace_reader``) and checked against docs/trace-format.md by a test.

A trace is JSON lines, one object per line. Each writer that opens a file first writes a header
line ``{"event": "trace", "format": "verified-tot-trace", "version": 2}``; the events after it,
up to the next header, are read under that version. Lines before any header are a trace written
before the format had a version: they are read as version 1, which is exactly that format with
the header added.

A field has one type wherever it appears. ``null`` means "not known" and is accepted for any
field an event does not require; a required field is present and not null (except where the
table says it may be null). What changes the version: removing or renaming an event or a field,
changing a field's type or meaning, making a field required. Adding an event or an optional
field does not; readers ignore events and fields they do not know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["FORMAT", "VERSION", "FIELDS", "EVENTS", "EventName", "EventSpec", "check_event"]

FORMAT = "verified-tot-trace"
VERSION = 2  # the version this code writes and the newest it reads (docs/trace-format.md: change notes)
HEADER_EVENT = "trace"

INT = "whole number"
NUMBER = "number"
TEXT = "text"
BOOL = "true or false"
OBJECT = "object"
ANY = "any JSON"

# field -> (type, meaning). One type per field name, whichever event carries it.
FIELDS: dict[str, tuple[str, str]] = {
    "event": (TEXT, "the event's name (every line has it)"),
    "t": (NUMBER, "seconds since the writer opened the trace (every event the writer records has it)"),
    "format": (TEXT, f"always {FORMAT!r}"),
    "version": (INT, "the format version of the events that follow, up to the next header"),
    "previous_line_cut": (BOOL, "true: the line before this header was left half-written by a killed run"),
    "task": (TEXT, "the task's name (game24, sudoku, ...)"),
    "puzzle": (TEXT, "the puzzle text, as given to the task"),
    "options": (OBJECT, "the task's options (e.g. Sudoku's rule set), enough to rebuild the same task"),
    "method": (TEXT, "the search or baseline: tot-complete, tot-bfs, tot-dfs, long, best-first, mcts, beam, io, "
                     "cot, ..."),
    "model": (TEXT, "the model's name; null when no model was used"),
    "generator": (TEXT, "the generator's name"),
    "evaluator": (TEXT, "the evaluator's name; null when there is none"),
    "seed": (INT, "the random seed"),
    "gate": (BOOL, "false: the exact gate was off (ablation), refused thoughts went in unchecked"),
    "samples": (INT, "baselines: samples drawn"),
    "rounds": (INT, "baselines: refine rounds"),
    "id": (ANY, "log importers: the puzzle's index in the imported log"),
    "prune": (BOOL, "log importers: the imported search pruned states judged impossible"),
    "audit": (OBJECT, "log importers: counts about the import, reported by tot audit"),
    "log_game": (OBJECT, "log importers (crosswords): per-game figures re-scored from the log"),
    "grammar": (OBJECT, "constrained decoding: on (true/false, --grammar), engine (llguidance, llama, or the "
                        "server's request field; null where unknown), honoured (true/false; null where not known)"),
    "depth": (INT, "search: the depth limit; proposal, expand, round: the node's depth (root 0)"),
    "search_options": (OBJECT, "search: the search's own options as they are (its options dataclass, field by "
                               "field; version 1: each at the top level)"),
    "prune_below": (NUMBER, "tot-dfs: children scoring below this are cut (the option's, else the evaluator's)"),
    "defer_below": (NUMBER, "tot-complete: children scoring below this are tried last"),
    "decimals": (INT, "tot-complete: scores are compared rounded to this many decimals"),
    "proven_cuts": (ANY, "tot-complete with --prune-proven and an exact evaluator: search, true (a child it "
                         "scores below defer_below is cut, pruned, its proof of no answer the evaluator's); end, "
                         "how many were cut so"),
    "log_likelihood": (BOOL, "beam: the generator gives log-likelihoods (false: self-evaluation alone)"),
    "node": (INT, "a node's id, unique in its run (root 0)"),
    "parent": (INT, "the id of the node a thought was proposed for"),
    "state": (TEXT, "the task's description of a state (restore(puzzle, state) rebuilds it)"),
    "request": (INT, "long: how many times this node has been asked for proposals"),
    "round": (INT, "long: the round number; mcts: the iteration number; beam: the run number; from 1"),
    "path": (ANY, "mcts round: the node ids from the root to the iteration's new leaf"),
    "reward": (NUMBER, "mcts round: the reward backed up the path (1 verified answer, 0 dead end, else a value)"),
    "log_weight": (NUMBER, "beam keep and cut: the chain's log E, sum of lambda log P + (1 - lambda) log C"),
    "thought": (TEXT, "the proposed step's text"),
    "prior": (NUMBER, "the generator's score of the thought (e.g. its log-likelihood); null if none"),
    "verdict": (TEXT, "the exact gate's verdict: valid, solved, invalid, or unchecked (gate off)"),
    "reason": (TEXT, "why: the gate's or answer check's reason, or a note on a valid step"),
    "solved": (BOOL, "the state is a solution (gate off: as the model claimed it; root: the puzzle came solved, "
                     "its answer passing the exact rules)"),
    "kind": (TEXT, "log importers: the class of a refused step"),
    "score": (NUMBER, "the evaluator's score (NaN when it could not score)"),
    "detail": (ANY, "the evaluator's evidence: labels, probabilities, votes, or {\"class\": ...}"),
    "why": (TEXT, "cut: duplicate, beam, pruned, depth, children, unvisited (mcts) or a remark; backtrack: why"),
    "tie": (BOOL, "beam cut at the same score as the last kept state (order decided)"),
    "deferred": (BOOL, "tot-complete: kept although it scored below defer_below (tried last)"),
    "to": (INT, "backtrack: the node search returned to"),
    "answer": (TEXT, "the answer text; null when there is none"),
    "verified": (BOOL, "the answer passed every required check (answer, end)"),
    "accepted": (BOOL, "answer: the search returned it (false: the final re-check refused it)"),
    "report": (OBJECT, "the answer report: {verified, rules, checks: [{name, passed, detail, required}]}"),
    "text": (TEXT, "raw_answer: the model's output (first 500 characters)"),
    "valid": (BOOL, "raw_answer: the parsed answer passed the exact check"),
    "purpose": (TEXT, "lm_error: what the failed call was for; thinking: what the call was for"),
    "thinking": (TEXT, "thinking: what a reasoning model thought before its answers (never read as one)"),
    "reasoning_tokens": (INT, "thinking, end: tokens spent thinking (part of completion_tokens)"),
    "error": (TEXT, "lm_error: the error; end: the error that ended the run, if any"),
    "stopped_by": (TEXT, "end: the budget that ran out (calls, tokens, steps, seconds, ...); null if none"),
    "exhausted": (BOOL, "end: a complete search visited every state and found no answer (a proof)"),
    "proposed": (INT, "end: thoughts proposed"),
    "rejected": (INT, "end: thoughts the gate refused"),
    "expanded": (INT, "end: nodes expanded"),
    "raw_answers": (INT, "end (baselines): model outputs read"),
    "invalid_answers": (INT, "end (baselines): outputs without a valid answer"),
    "calls": (INT, "end: model calls counted against the budget"),
    "backend_calls": (INT, "end: calls that reached the model"),
    "cache_hits": (INT, "end: calls answered without reaching the model: by the record/replay cache, "
                   "or by the run's own memo (a repeat of a request the run already made)"),
    "failed_calls": (INT, "end: calls that failed"),
    "score_calls": (INT, "end: scoring calls (log-probabilities), counted as calls are (cache hits included)"),
    "failed_scores": (INT, "end: scoring calls that failed (all of them: the model ordered nothing)"),
    "replayed_tokens": (INT, "end: tokens replayed from the cache"),
    "prompt_tokens": (INT, "end: prompt tokens"),
    "completion_tokens": (INT, "end: completion tokens"),
    "tokens": (INT, "end: all tokens"),
    "steps": (INT, "end: search steps"),
    "seconds": (NUMBER, "end: wall-clock seconds"),
    "cost": (NUMBER, "end: the price of the tokens, when prices were given"),
    "not_tried": (INT, "incomplete, end: legal thoughts an enumeration limit left out (the search was not complete)"),
    "limit": (TEXT, "incomplete, end: the limit that cut the enumeration (end: each one, '; '-joined)"),
    "solvable": (BOOL, "ground truth for tot show: the state can still be solved"),
    "answers": (ANY, "end (mcts --answers N, N > 1): every distinct accepted answer in the order found, each "
                     "{answer, verified}, the first being the run's answer"),
    "adapter": (OBJECT, "start: the embedded model's LoRA adapter, {file, sha256}; absent when none"),
    "answers_note": (TEXT, "end (mcts --answers N): why fewer than N answers were found"),
}


@dataclass(frozen=True, slots=True)
class EventSpec:
    meaning: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    nullable: tuple[str, ...] = ()  # required fields that may be null


_END = ("answer", "report", "stopped_by", "proposed", "rejected", "expanded", "exhausted", "error",
        "raw_answers", "invalid_answers", "calls", "backend_calls", "cache_hits", "failed_calls", "score_calls",
        "failed_scores",
        "replayed_tokens", "prompt_tokens", "completion_tokens", "tokens", "steps", "seconds", "cost",
        "not_tried", "limit", "reasoning_tokens", "answers", "answers_note", "proven_cuts")

# event -> spec. Every event the writers (search, controller, complete search, baselines, the LM
# client, the log importers) produce; ``t`` is on every recorded event and not listed.
EVENTS: dict[str, EventSpec] = {
    HEADER_EVENT: EventSpec("a writer's header: the format and version of the lines that follow",
                            ("format", "version"), ("previous_line_cut",)),
    "start": EventSpec("a run's header: one search or baseline of one puzzle begins",
                       ("task", "puzzle"),
                       ("options", "method", "model", "generator", "evaluator", "seed", "gate",
                        "samples", "rounds", "id", "prune", "audit", "log_game", "grammar", "adapter")),
    "search": EventSpec("the search's settings, and the task, puzzle and options it searched", ("method",),
                        ("task", "puzzle", "options", "generator", "evaluator", "depth", "seed", "search_options",
                         "prune_below", "defer_below", "decimals", "log_likelihood", "proven_cuts")),
    "root": EventSpec("the root state, node 0", ("node", "state"), ("solved",)),
    "expand": EventSpec("the generator is asked for the children of a node", ("node",), ("depth", "request")),
    "incomplete": EventSpec("an enumeration limit left legal thoughts of a node untried (never a proof then)",
                            ("node", "not_tried", "limit"), ()),
    "round": EventSpec("long: one round of the controller, at a node; mcts: one iteration, ending at a new leaf; "
                       "beam: one run from the root",
                       ("round", "node"), ("depth", "path", "reward")),
    "proposal": EventSpec("a thought proposed for a parent; with a node id when the gate let it in",
                          ("parent", "thought"), ("node", "depth", "prior")),
    "verdict": EventSpec("the exact gate's verdict on the proposal just before (by node, or by parent "
                         "and thought when refused)", ("verdict",),
                         ("node", "parent", "thought", "state", "reason", "solved", "kind")),
    "score": EventSpec("the evaluator's score of a node (long: of a thought not yet a node, with its state)",
                       ("score",), ("node", "parent", "thought", "state", "detail"), ("score",)),
    "keep": EventSpec("search keeps a node (expands it, or it stays in the beam)", ("node",),
                      ("score", "deferred", "log_weight")),
    "cut": EventSpec("search drops a node (or, long, a scored thought) and why", ("why",),
                     ("node", "parent", "thought", "score", "tie", "log_weight")),
    "backtrack": EventSpec("search leaves a node and returns to an earlier one", ("node", "to"), ("state", "why")),
    "answer": EventSpec("an answer put forward and its re-check from the puzzle text", ("answer", "verified"),
                        ("node", "accepted", "reason", "report"), ("answer",)),
    "raw_answer": EventSpec("baselines: one model output, parsed and checked", ("valid",),
                            ("text", "answer", "reason")),
    "lm_error": EventSpec("a model call failed", ("error",), ("purpose",)),
    "thinking": EventSpec("a reasoning model's thinking, kept apart from its answers", ("thinking",),
                          ("purpose", "reasoning_tokens")),
    "end": EventSpec("the run's result: answer, verification, budgets, usage", ("verified",), _END),
}

EventName = Literal["start", "search", "root", "expand", "incomplete", "round", "proposal", "verdict", "score",
                    "keep", "cut", "backtrack", "answer", "raw_answer", "lm_error", "thinking", "end"]
"""The name of every event a run writes (``Trace.emit`` takes no other; the header is the writer's):
the keys of ``EVENTS`` but the header, which tests/test_trace_format.py checks."""

_A = {INT: "a ", NUMBER: "a ", OBJECT: "an "}  # "is not a whole number", "is not text"


def type_ok(value: Any, kind: str) -> bool:
    """Whether a non-null ``value`` has type ``kind``."""
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 62
    if kind == NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == TEXT:
        return isinstance(value, str)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == OBJECT:
        return isinstance(value, dict)
    return True


def check_event(ev: Any) -> str | None:
    """Why ``ev`` is not a well-formed event of this format (None when it is), as the end of a
    sentence that starts with where it is ("line 3 ...")."""
    if not isinstance(ev, dict) or not isinstance(ev.get("event"), str):
        return "is not a trace event (a JSON object with an 'event' name)"
    for key, value in ev.items():
        spec = FIELDS.get(key)
        if spec is not None and value is not None and not type_ok(value, spec[0]):
            return f"has {key!r} that is not {_A.get(spec[0], '')}{spec[0]}"
    event = EVENTS.get(ev["event"])
    if event is not None:
        for key in event.required:
            if key not in ev or (ev[key] is None and key not in event.nullable):
                return f"is a {ev['event']!r} event without {key!r}"
    return None
