"""``tot verify --trace RUN.jsonl``: re-check a search trace as a certificate, with no model.

Each run is replayed on a fresh task built from the run's header (the ``start`` event: task,
puzzle and the task's options, e.g. Sudoku's rule set or the Game-of-24 policy):

* every accepted thought must pass the exact gate again and lead to the recorded state
  (``describe`` of the new state equals the recorded text);
* every rejected thought must be rejected again (and a thought let in with the gate off, for the
  ablation, must be rejected by the gate and lead to the recorded state unchecked);
* every answer must re-verify from the puzzle text alone: its report (``report_answer``) must say
  what the trace says, check by check, and a returned answer must be the answer of its node.

Exit 0 when all of it holds, 1 at the first mismatch (one line naming the run, the node or event
and what differs), 2 when the trace is malformed (one line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solver.expansion import rule_failure
from solver.task import Thought
from solver.task_capabilities import Unchecked, find
from solver.trace_reader import read_trace
from verifiers.verdict import Invalid, Solved, Valid


class Mismatch(Exception):
    """The trace says something the exact checkers do not reproduce."""


class Malformed(ValueError):
    """The trace cannot be replayed: missing header, unknown task, bad or dangling fields."""


@dataclass(slots=True)
class Tally:
    runs: int = 0
    accepted: int = 0
    rejected: int = 0
    answers: int = 0
    incomplete: int = 0


def _runs(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Cut at each ``start`` event; events before the first one are malformed."""
    runs: list[list[dict[str, Any]]] = []
    for k, ev in enumerate(events, 1):
        if ev.get("event") == "start":
            runs.append([])
        elif not runs:
            raise Malformed(f"event {k} ({ev.get('event')!r}) comes before any run header ('start' event)")
        runs[-1].append(ev)
    if not runs:
        raise Malformed("no run header ('start' event with task and puzzle): not a trace of tot solve")
    return runs


def _text(ev: dict[str, Any], key: str, where: str) -> str:
    value = ev.get(key)
    if not isinstance(value, str):
        raise Malformed(f"{where}: '{key}' must be text")
    return value


def _node_id(ev: dict[str, Any], key: str, where: str) -> int:
    value = ev.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Malformed(f"{where}: '{key}' must be a node number")
    return value


def _task_of(header: dict[str, Any], plugins: dict[str, Any], where: str) -> Any:
    name = _text(header, "task", where)
    plugin = plugins.get(name)
    if plugin is None:
        raise Malformed(f"{where}: unknown task {name!r} (installed: {', '.join(sorted(plugins))})")
    options = header.get("options", {})
    if not isinstance(options, dict):
        raise Malformed(f"{where}: 'options' must be an object")
    build = getattr(plugin, "task_from_options", None)
    if build is None:
        raise Malformed(f"{where}: task {name!r} cannot be rebuilt from a trace (no task_from_options)")
    try:
        return build(options)
    except ValueError as exc:
        raise Malformed(f"{where}: {exc}") from None


def _check_run(events: list[dict[str, Any]], plugins: dict[str, Any], label: str, tally: Tally) -> None:
    header = events[0]
    task = _task_of(header, plugins, f"{label} header")
    puzzle = _text(header, "puzzle", f"{label} header")
    try:
        root = task.root(puzzle)
    except ValueError as exc:
        raise Mismatch(f"{label} header: the puzzle no longer parses: {exc}") from None
    states: dict[int, Any] = {0: root}  # node 0 is the root in every search
    parents: dict[int, tuple[int, str]] = {}  # node -> (parent, thought), from proposal events
    returned: list[str] = []
    for ev in events[1:]:
        name = ev.get("event")
        node = ev.get("node")
        where = f"{label}, node {node} ({name})" if node is not None else f"{label} ({name})"
        if name == "root":
            nid = _node_id(ev, "node", where)
            if task.describe(root) != ev.get("state"):
                raise Mismatch(f"{where}: the puzzle's root is {task.describe(root)!r}, "
                               f"the trace says {ev.get('state')!r}")
            states[nid] = root
        elif name == "proposal" and "node" in ev:
            nid = _node_id(ev, "node", where)
            parents[nid] = (_node_id(ev, "parent", where), _text(ev, "thought", where))
        elif name == "verdict":
            _check_verdict(task, ev, where, states, parents, tally)
        elif name == "backtrack":
            to = _node_id(ev, "to", where)
            if to not in states:
                raise Malformed(f"{where}: backtracks to node {to}, which no earlier event created")
            if "state" in ev and task.describe(states[to]) != ev["state"]:
                raise Mismatch(f"{where}: node {to} holds {task.describe(states[to])!r}, "
                               f"the trace says {ev['state']!r}")
        elif name == "raw_answer" and isinstance(ev.get("answer"), str):  # a baseline's model answer
            valid = rule_failure(task, puzzle, ev["answer"]) is None
            if bool(ev.get("valid")) != valid:
                raise Mismatch(f"{where}: the trace says valid={bool(ev.get('valid'))} for the model answer "
                               f"{ev['answer'][:40]!r}, the answer check says {valid}")
        elif name == "answer":
            answer = _check_answer(task, puzzle, ev, where, states)
            tally.answers += 1
            if ev.get("accepted", ev.get("verified")):
                returned.append(answer)
        elif name == "end":
            end_answer = ev.get("answer")
            if end_answer is not None:
                if not isinstance(end_answer, str):
                    raise Malformed(f"{where}: 'answer' must be text or null")
                if end_answer not in returned:
                    raise Mismatch(f"{where}: the run returns {end_answer[:60]!r}, which no answer event re-verified")
                verified = task.report_answer(puzzle, end_answer).verified
                if bool(ev.get("verified")) != verified:
                    raise Mismatch(f"{where}: the trace says verified={ev.get('verified')}, the answer check says "
                                   f"{verified}")
            elif ev.get("verified"):
                raise Mismatch(f"{where}: verified without an answer")
    if not any(ev.get("event") == "end" for ev in events):
        tally.incomplete += 1


def _check_verdict(task: Any, ev: dict[str, Any], where: str, states: dict[int, Any],
                   parents: dict[int, tuple[int, str]], tally: Tally) -> None:
    kind = ev.get("verdict")
    if kind == "invalid":
        parent = _node_id(ev, "parent", where)
        thought = _text(ev, "thought", where)
        if parent not in states:
            raise Malformed(f"{where}: names parent {parent}, which no earlier event created")
        verdict = task.check(states[parent], Thought(thought))
        if not isinstance(verdict, Invalid):
            raise Mismatch(f"{where}: the gate now accepts the rejected thought {thought[:60]!r} at node {parent}")
        tally.rejected += 1
        return
    if kind not in ("valid", "solved", "unchecked"):
        raise Malformed(f"{where}: unknown verdict {kind!r}")
    if "node" not in ev and kind != "unchecked":  # a one-shot baseline's checked answer: no tree node
        parent, thought = _node_id(ev, "parent", where), _text(ev, "thought", where)
        if parent not in states:
            raise Malformed(f"{where}: names parent {parent}, which no earlier event created")
        if isinstance(task.check(states[parent], Thought(thought)), Invalid):
            raise Mismatch(f"{where}: the gate now rejects the accepted thought {thought[:60]!r} at node {parent}")
        tally.accepted += 1
        return
    nid = _node_id(ev, "node", where)
    if nid not in parents:
        raise Malformed(f"{where}: no proposal event names node {nid}")
    parent, thought = parents[nid]
    if parent not in states:
        raise Malformed(f"{where}: names parent {parent}, which no earlier event created")
    verdict = task.check(states[parent], Thought(thought))
    if kind == "unchecked":  # the gate was off (ablation): the gate must refuse it, as recorded
        if not isinstance(verdict, Invalid):
            raise Mismatch(f"{where}: recorded as let in past the gate, but the gate accepts {thought[:60]!r}")
        loose = find(task, Unchecked)
        verdict = loose.apply_unchecked(states[parent], Thought(thought)) if loose is not None else verdict
        if isinstance(verdict, Invalid):
            raise Mismatch(f"{where}: the unchecked step {thought[:60]!r} no longer applies: {verdict.reason}")
    elif isinstance(verdict, Invalid):
        raise Mismatch(f"{where}: the gate now rejects the accepted thought {thought[:60]!r} at node {parent}: "
                       f"{verdict.reason}")
    elif (kind == "solved") != isinstance(verdict, Solved):
        now = "solved" if isinstance(verdict, Solved) else "valid"
        raise Mismatch(f"{where}: recorded as {kind}, the gate now says {now}")
    assert isinstance(verdict, (Valid, Solved))
    described = task.describe(verdict.state)
    if described != ev.get("state"):
        raise Mismatch(f"{where}: the thought {thought[:40]!r} leads to {described[:80]!r}, "
                       f"the trace says {str(ev.get('state'))[:80]!r}")
    states[nid] = verdict.state
    tally.accepted += 1


def _check_answer(task: Any, puzzle: str, ev: dict[str, Any], where: str, states: dict[int, Any]) -> str:
    answer = ev.get("answer")
    if answer is None and not ev.get("verified") and not ev.get("accepted"):
        return ""  # a baseline's "no answer"
    answer = _text(ev, "answer", where)
    nid = ev.get("node")
    if nid is not None:
        nid = _node_id(ev, "node", where)
        if nid not in states:
            raise Malformed(f"{where}: names node {nid}, which no earlier event created")
        own = task.answer(states[nid])
        if own != answer:
            raise Mismatch(f"{where}: node {nid}'s answer is {own[:60]!r}, the trace says {answer[:60]!r}")
    report = task.report_answer(puzzle, answer)
    if bool(ev.get("verified")) != report.verified:
        raise Mismatch(f"{where}: the trace says verified={bool(ev.get('verified'))}, the answer check says "
                       f"{report.verified}" + (f" ({report.reason})" if report.reason else ""))
    recorded = ev.get("report")
    if recorded is not None and recorded != report.to_json():
        raise Mismatch(f"{where}: the recorded report differs from the answer check's report of {answer[:40]!r}")
    return answer


def verify_trace(path: str, plugins: dict[str, Any]) -> tuple[int, str]:
    """(exit status, one line): 0 all holds, 1 first mismatch, 2 malformed."""
    try:
        events = read_trace(path)
        runs = _runs(events)
    except ValueError as exc:
        return 2, f"tot: error: {str(exc).splitlines()[0]}"
    tally = Tally()
    for k, run in enumerate(runs, 1):
        label = f"{path} run {k}"
        try:
            _check_run(run, plugins, label, tally)
        except Malformed as exc:
            return 2, f"tot: error: {exc}"
        except Mismatch as exc:
            return 1, f"mismatch: {exc}"
        tally.runs += 1
    note = f"; {tally.incomplete} run(s) cut off before their end event" if tally.incomplete else ""
    return 0, (f"trace verified: {tally.runs} run(s), {tally.accepted} accepted and {tally.rejected} rejected "
               f"thoughts re-checked by the gate, {tally.answers} answer(s) re-verified from the puzzle text{note}")
