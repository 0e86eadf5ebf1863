"""The search invariants, each a plain function of one run's ``Outcome`` that raises
``InvariantBroken`` (an AssertionError) naming the invariant and the case.

Everything is read from what search is obliged to leave behind: its trace, its result, the
states it handed back to the task (seen by the recording proxy) and the requests the scripted
model received. The tree is rebuilt from the trace and every step is re-checked with the task's
own gate on the held states.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from solver.expansion import SearchResult, rule_failure
from solver.searches.beam import BeamOptions
from solver.searches.tot import BfsOptions, DfsOptions
from solver.task import Thought
from solver.testing.recording import RecordingTask
from solver.testing.scripted import ScriptedModel
from solver.testing.strategies import Case
from verifiers.verdict import Invalid, Solved

MUTATION = "states are never mutated"
GATE = "nothing the gate refused is scored, kept or answered"
BACKTRACK = "backtracking returns exactly to held states"
BEAM = "BFS keeps at most b per level"
DFS_ORDER = "DFS tries children best first, within its limits"
BUDGET = "budgets are never exceeded"
ANSWER = "a returned answer always re-verifies"
BEST_FIRST = "best-first expands the best-scored state of its frontier, and prunes nothing"
MCTS_VISITS = "MCTS visit counts add up"
STOCHASTIC_BEAM = "the stochastic beam keeps at most k chains of at most n candidates each"
IFF = "a complete search with the exact oracle finds a solution iff one exists"
REPLAY = "the same seed and recorded answers give the same trace"

AnswerCheck = Callable[[str, str], bool]
DEPTH_FIRST = ("tot-dfs", "tot-complete")  # the searches that expand along one path and backtrack


class InvariantBroken(AssertionError):
    """A search invariant failed: ``invariant`` names it, ``case`` is the run that broke it."""

    def __init__(self, invariant: str, detail: str, case: Any) -> None:
        super().__init__(f"{invariant}: {detail}\n  case: {case!r}")
        self.invariant, self.detail, self.case = invariant, detail, case


@dataclass(slots=True)
class TreeNode:
    id: int
    parent: int | None
    depth: int
    thought: str
    solved: bool
    state_text: str  # describe() of the state when search made the node (from the trace)
    state: Any = None  # the state object search held (from the recording proxy)


@dataclass(slots=True)
class Outcome:
    """One finished run: its case, the proxy it ran on, result, trace events, the evaluator it
    used, the scripted model (None without a model) and the tree rebuilt from the trace."""

    case: Case
    task: RecordingTask
    result: SearchResult
    events: list[dict[str, Any]]
    evaluator: Any
    model: ScriptedModel | None = None
    late_requests: int = 0
    nodes: dict[int, TreeNode] = field(default_factory=dict)
    generated: list[tuple[Any, list[str]]] = field(default_factory=list)  # (state, thoughts) per generator call

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == kind]

    def depth_limit(self) -> int:
        return self.case.settings.depth or int(self.task.max_depth)


def q(score: float | None) -> float:
    """Scores as search compares them: 3 decimals, None as 0, NaN last."""
    if score is None:
        return 0.0
    return -math.inf if math.isnan(score) else round(score, 3) + 0.0


def rebuild(o: Outcome) -> None:
    """The tree from the trace, each node tied to the state object the task made for it: the
    result of the gate's call, in order, on the parent's state and the node's thought."""
    fail = _fail(o, GATE)
    roots = [m.state for m in o.task.made.values() if m.how == "root"]
    root_ev = o.of("root")
    if len(root_ev) != 1 or not roots:
        fail(f"expected one root event and one root state, got {len(root_ev)} and {len(roots)}")
    root_solved = bool(root_ev[0].get("solved"))
    if root_solved and rule_failure(o.task.inner, o.case.puzzle, o.task.inner.answer(roots[0])) is not None:
        fail("the root was traced as solved, but its answer fails the puzzle's rules")
    o.nodes = {root_ev[0]["node"]: TreeNode(root_ev[0]["node"], None, 0, "", root_solved, root_ev[0]["state"],
                                            roots[0])}
    calls: dict[tuple[int, str], list[Any]] = {}
    for c in o.task.check_calls:
        calls.setdefault((id(c.parent), c.thought), []).append(c)
    verdicts = {e["node"]: e for e in o.of("verdict") if "node" in e}
    for e in o.of("proposal"):
        parent = o.nodes.get(e["parent"])
        if parent is None:
            fail(f"a thought was proposed for node {e['parent']}, which search never made")
        queue = calls.get((id(parent.state), e["thought"]), [])
        while queue and queue[0].parent is not parent.state:
            queue.pop(0)
        if not queue:
            fail(f"search recorded {e['thought'][:60]!r} at node {parent.id} without asking the gate")
        call = queue.pop(0)
        refused = isinstance(call.verdict, Invalid)
        if "node" not in e:
            if not refused:
                fail(f"the gate accepted {e['thought'][:60]!r} at node {parent.id}, search recorded it as refused")
            continue
        if refused:
            fail(f"node {e['node']} was made from {e['thought'][:60]!r}, which the gate refused: "
                 f"{call.verdict.reason}")
        v = verdicts.get(e["node"], {})
        o.nodes[e["node"]] = TreeNode(e["node"], parent.id, parent.depth + 1, e["thought"],
                                      v.get("verdict") == "solved", v.get("state", ""), call.verdict.state)
        if e.get("depth") != parent.depth + 1:
            fail(f"node {e['node']} has depth {e.get('depth')}, its parent {parent.depth}")
        if isinstance(call.verdict, Solved) != (v.get("verdict") == "solved"):
            fail(f"node {e['node']}: the gate said {type(call.verdict).__name__}, the trace {v.get('verdict')}")


def check_states(o: Outcome) -> None:
    """Every state search handed back is one the task made (held, not rebuilt); no state changed
    after the task made it; every node's state is exactly what the gate makes of its thought on its parent's state."""
    if o.task.foreign:
        _fail(o, BACKTRACK)(o.task.foreign[0])
    fail = _fail(o, MUTATION)
    problems = o.task.problems + o.task.changed()
    if problems:
        fail(problems[0])
    inner = o.task.inner
    for node in o.nodes.values():
        if node.parent is None:
            if node.state != inner.root(o.case.puzzle):
                fail("the root state is not the puzzle's root")
            continue
        parent = o.nodes[node.parent]
        again = inner.check(parent.state, Thought(node.thought))
        if isinstance(again, Invalid) or again.state != node.state or repr(again.state) != repr(node.state):
            fail(f"node {node.id}: the gate gives another state for {node.thought[:60]!r} on its parent now")
        if inner.describe(node.state) != node.state_text:
            fail(f"node {node.id} reads {inner.describe(node.state)[:80]!r} now, "
                 f"{node.state_text[:80]!r} when it was made")


def check_gate(o: Outcome) -> None:
    """Counts agree with the trace; only nodes the gate accepted are scored, kept, expanded or
    answered (the root is only expanded); an answer comes from a solved node."""
    fail = _fail(o, GATE)
    proposals = o.of("proposal")
    if o.result.proposed != len(proposals):
        fail(f"result says {o.result.proposed} proposed, the trace has {len(proposals)}")
    refused = sum("node" not in e for e in proposals)
    if o.result.rejected != refused:
        fail(f"result says {o.result.rejected} rejected, the trace has {refused}")
    for e in o.of("verdict"):
        if e.get("verdict") == "invalid" and "node" in e:
            fail(f"a refused thought became node {e['node']}")
    offered: dict[int, Counter[str]] = {}
    for state, texts in o.generated:
        offered.setdefault(id(state), Counter()).update(texts)
    for e in proposals:
        left = offered.get(id(o.nodes[e["parent"]].state), Counter())
        if left[e["thought"]] <= 0:
            fail(f"search gated {e['thought'][:60]!r} at node {e['parent']}, which its generator did not propose there")
        left[e["thought"]] -= 1
    root = next(iter(o.nodes))
    for kind in ("score", "keep", "expand", "answer", "backtrack"):
        for e in o.of(kind):
            if kind == "score" and "node" not in e:
                continue  # long scores a thought before it becomes a node (by parent and thought)
            # The root is expanded, never scored or kept; it is answered only when the puzzle came
            # solved (rebuild checked that claim against the rules).
            at_root = e["node"] == root and kind != "expand" and not (kind == "answer" and o.nodes[root].solved)
            if e["node"] not in o.nodes or at_root:
                fail(f"{kind} event for node {e['node']}, which is no node the gate accepted")
    for e in o.of("answer"):
        if not o.nodes[e["node"]].solved:
            fail(f"answer from node {e['node']}, which the gate did not call solved")


def check_backtracking(o: Outcome) -> None:
    """Depth-first searches expand along one path: each expansion is of a child of the node on
    top of the stack, and a backtrack pops to the exact parent, whose state reads as it did."""
    if o.case.settings.method not in DEPTH_FIRST:
        return
    fail = _fail(o, BACKTRACK)
    stack: list[int] = []
    for e in o.events:
        kind = e.get("event")
        if kind == "expand":
            node = o.nodes[e["node"]]
            if node.parent is None:
                if stack:
                    fail("the root was expanded twice")
            elif not stack or stack[-1] != node.parent:
                fail(f"node {node.id} was expanded off the current path (top: {stack[-1] if stack else None})")
            stack.append(node.id)
        elif kind == "backtrack":
            if not stack or stack[-1] != e["node"]:
                fail(f"backtrack from node {e['node']}, which is not the current node")
            stack.pop()
            to = o.nodes.get(e["to"])
            if to is None or not stack or stack[-1] != to.id or o.nodes[e["node"]].parent != to.id:
                fail(f"backtrack from node {e['node']} went to {e['to']}, not to its parent")
            if e.get("state") != to.state_text:
                fail(f"backtracked to node {to.id} reading {e.get('state', '')[:80]!r}, "
                     f"made as {to.state_text[:80]!r}")


def check_bfs(o: Outcome) -> None:
    """At most b kept per depth; nothing deeper than the limit; only the root and kept nodes are
    expanded; nothing cut by the beam scores better than the worst kept at its depth."""
    if o.case.settings.method != "tot-bfs":
        return
    fail = _fail(o, BEAM)
    b, limit = o.case.settings.own(BfsOptions).breadth, o.depth_limit()
    kept: dict[int, list[int]] = {}
    for e in o.of("keep"):
        kept.setdefault(o.nodes[e["node"]].depth, []).append(e["node"])
    for d, ids in kept.items():
        if len(ids) > b:
            fail(f"{len(ids)} states kept at depth {d}, breadth {b}")
    if any(n.depth > limit for n in o.nodes.values()):
        fail(f"a node deeper than the depth limit {limit}")
    kept_ids = {n for ids in kept.values() for n in ids}
    for e in o.of("expand"):
        node = o.nodes[e["node"]]
        if node.depth >= limit or (node.parent is not None and node.id not in kept_ids):
            fail(f"node {node.id} at depth {node.depth} was expanded without being kept")
    scores = {e["node"]: e.get("score") for e in o.of("score")}
    for e in o.of("cut"):
        if e.get("why") == "beam":
            d = o.nodes[e["node"]].depth
            low = min(q(scores.get(i)) for i in kept.get(d, [])) if kept.get(d) else -math.inf
            if q(e.get("score")) > low:
                fail(f"node {e['node']} (score {e.get('score')}) was cut while a worse one was kept at depth {d}")


def check_dfs(o: Outcome) -> None:
    """Siblings are tried best first: for tot-dfs none below the evaluator's threshold and at most
    max_children per node; for tot-complete nothing is pruned (only deferred behind better ones)."""
    method = o.case.settings.method
    if method not in DEPTH_FIRST:
        return
    fail = _fail(o, DFS_ORDER)
    limit = o.depth_limit()
    by_parent: dict[int, list[tuple[bool, float]]] = {}
    for e in o.of("keep"):
        node = o.nodes[e["node"]]
        if node.depth >= limit:
            fail(f"node {node.id} kept at the depth limit {limit}")
        assert node.parent is not None
        by_parent.setdefault(node.parent, []).append((bool(e.get("deferred")), q(e.get("score"))))
    for e in o.of("expand"):
        if o.nodes[e["node"]].depth >= limit:
            fail(f"node {e['node']} expanded at the depth limit {limit}")
    threshold = o.evaluator.prune_below
    for parent, tried in by_parent.items():
        order = [(deferred, -score) for deferred, score in tried]
        if order != sorted(order):
            fail(f"children of node {parent} were tried out of order: {tried}")
        if method == "tot-dfs":
            if any(score < threshold for _d, score in tried):
                fail(f"a child of node {parent} below the threshold {threshold} was tried: {tried}")
            mc = o.case.settings.own(DfsOptions).dfs_children
            if mc is not None and len(tried) > mc:
                fail(f"{len(tried)} children of node {parent} tried, max_children {mc}")
    if method == "tot-complete":
        pruned = [e for e in o.of("cut") if e.get("why") not in ("duplicate", "depth")]
        if pruned:
            fail(f"the complete search cut node {pruned[0]['node']} ({pruned[0].get('why')})")


def check_best_first(o: Outcome) -> None:
    """The frontier rebuilt from the trace (a state joins it when scored, leaves it when kept):
    each state expanded is the best of the frontier by quantised score, then depth (deeper
    first), then the order it joined; nothing is cut but duplicates and states at the depth
    limit; nothing deeper than the limit."""
    if o.case.settings.method != "best-first":
        return
    fail = _fail(o, BEST_FIRST)
    limit = o.depth_limit()
    frontier: dict[int, tuple[float, int, int]] = {}
    joined = 0
    for e in o.events:
        kind = e.get("event")
        if kind == "score" and "node" in e:
            joined += 1
            frontier[e["node"]] = (-q(e.get("score")), -o.nodes[e["node"]].depth, joined)
        elif kind == "keep":
            if e["node"] not in frontier:
                fail(f"node {e['node']} was expanded without joining the frontier")
            best = min(frontier, key=lambda n: frontier[n])
            if frontier[e["node"]] != frontier[best]:
                fail(f"node {e['node']} was expanded while node {best} ranked better")
            del frontier[e["node"]]
        elif kind == "cut" and e.get("why") not in ("duplicate", "depth"):
            fail(f"node {e.get('node')} was cut ({e.get('why')})")
    if any(n.depth > limit for n in o.nodes.values()):
        fail(f"a node deeper than the depth limit {limit}")


def check_mcts(o: Outcome) -> None:
    """Each iteration's path runs from the root down the tree, parent to child, and ends at a
    node no earlier iteration ended at; the visits the search counted (``result.extra.visits``:
    ``MctsExtra``) are the number of paths through each node; so the root's are the number of
    iterations and each node's are its own iteration (0 or 1) plus its children's."""
    if o.case.settings.method != "mcts":
        return
    fail = _fail(o, MCTS_VISITS)
    root = next(iter(o.nodes))
    through: Counter[int] = Counter()
    ended: Counter[int] = Counter()
    rounds = o.of("round")
    for k, e in enumerate(rounds, 1):
        path = e.get("path")
        if e.get("round") != k or not isinstance(path, list) or not path or path[0] != root:
            fail(f"iteration {k} is recorded as {e}")
        for parent, child in zip(path, path[1:], strict=False):
            if child not in o.nodes or o.nodes[child].parent != parent:
                fail(f"iteration {k} steps from node {parent} to {child}, which is not its child")
        if path[-1] != e.get("node") or ended[path[-1]]:
            fail(f"iteration {k} ends at node {path[-1]}, which an earlier one ended at (or not its node)")
        ended[path[-1]] += 1
        through.update(path)
    counted: dict[int, int] | None = getattr(o.result.extra, "visits", None)
    if counted is None:
        fail("the result carries no visit counts")
    if dict(counted) != dict(through):
        fail(f"the search counted visits {dict(sorted(counted.items()))}, its iterations' paths give "
             f"{dict(sorted(through.items()))}")
    if rounds and through[root] != len(rounds):
        fail(f"the root has {through[root]} visits after {len(rounds)} iterations")
    children: dict[int, list[int]] = {}
    for tn in o.nodes.values():
        if tn.parent is not None:
            children.setdefault(tn.parent, []).append(tn.id)
    for nid, visits in through.items():
        below = sum(through[c] for c in children.get(nid, []))
        if visits != ended[nid] + below:
            fail(f"node {nid} has {visits} visits: {ended[nid]} of its own and {below} of its children")


def check_beam(o: Outcome) -> None:
    """Within each run from the root (a ``round`` event begins each): at most k (``breadth``)
    chains kept per depth, at most n candidates gated per chain and expansion (``candidates``);
    only the root and kept chains expanded; nothing deeper than the limit; no more runs than
    ``beam_runs``."""
    if o.case.settings.method != "beam":
        return
    fail = _fail(o, STOCHASTIC_BEAM)
    own = o.case.settings.own(BeamOptions)
    n, runs, k, limit = own.candidates, own.beam_runs, own.breadth, o.depth_limit()
    kept: Counter[tuple[int, int]] = Counter()
    gated: Counter[int] = Counter()
    number = 0
    for e in o.events:
        kind = e.get("event")
        if kind == "round":
            number += 1
            if e.get("round") != number or e.get("node") != next(iter(o.nodes)):
                fail(f"run {number} is recorded as {e}")
        elif kind == "keep":
            kept[(number, o.nodes[e["node"]].depth)] += 1
        elif kind == "expand":
            gated[e["node"]] = 0  # the root is expanded again by each run
        elif kind == "proposal":
            gated[e["parent"]] += 1
            if gated[e["parent"]] > n:
                fail(f"more than {n} candidates gated for node {e['parent']} in one expansion")
    if any(v > k for v in kept.values()):
        fail(f"more than {k} chains kept at one depth of one run: {dict(kept)}")
    if number > runs:
        fail(f"{number} runs, at most {runs} allowed")
    kept_ids = {e["node"] for e in o.of("keep")}
    for e in o.of("expand"):
        node = o.nodes[e["node"]]
        if node.depth >= limit or (node.parent is not None and node.id not in kept_ids):
            fail(f"node {node.id} at depth {node.depth} was expanded without being kept")


def check_budgets(o: Outcome) -> None:
    """Calls and steps never exceed their budgets; tokens exceed theirs by at most one request
    per concurrency slot; a search stopped by steps used them all; nothing runs on afterwards."""
    fail = _fail(o, BUDGET)
    u, b, r = o.result.usage, o.case.budget, o.result
    requests = 0 if o.model is None else len(o.model.requests) + len(o.model.score_requests)
    if b.calls is not None and (u.calls > b.calls or requests > b.calls):
        fail(f"{u.calls} calls counted, {requests} reached the model; budget {b.calls}")
    # A step is an expansion; long's controller charges one per round instead (its round events).
    steps = len(o.of("round")) if o.case.settings.method == "long" else r.expanded
    if u.steps != steps:
        fail(f"{u.steps} steps counted, {steps} {'rounds' if o.case.settings.method == 'long' else 'expansions'}")
    if b.steps is not None and u.steps > b.steps:
        fail(f"{u.steps} steps; budget {b.steps}")
    if r.stopped_by == "steps" and u.steps != b.steps:
        fail(f"stopped by the step budget {b.steps} after {u.steps} steps")
    if r.stopped_by == "calls" and u.calls != b.calls:
        fail(f"stopped by the call budget {b.calls} after {u.calls} calls")
    if b.tokens is not None and u.tokens > b.tokens:
        over = u.tokens - b.tokens
        if o.model is None or over > o.case.concurrency * _dearest(o.model):
            fail(f"{u.tokens} tokens; budget {b.tokens}")
    # "rounds": long's own round limit (--max-rounds), which it reports as the limit that ended it.
    if r.stopped_by is not None and r.stopped_by not in ("calls", "tokens", "steps", "seconds", "rounds"):
        fail(f"stopped by an unknown budget {r.stopped_by!r}")
    if o.late_requests:
        fail(f"{o.late_requests} requests reached the model after search returned")


def _dearest(model: ScriptedModel) -> int:
    costs = [model.cost(p, g) for p, g in model.requests] + [len(p.split()) for p, _ in model.score_requests]
    return max(costs, default=0)


def check_answers(o: Outcome, answer_ok: AnswerCheck | None = None) -> None:
    """The returned answer passes the task's exact rules from the puzzle text alone, and
    ``verified`` is its report's; every answer event agrees with a fresh check (and with the
    user's independent reference ``answer_ok(puzzle, answer)`` when given)."""
    fail = _fail(o, ANSWER)
    inner, puzzle, r = o.task.inner, o.case.puzzle, o.result
    if r.verified and r.answer is None:
        fail("verified without an answer")
    if r.answer is not None:
        problem = rule_failure(inner, puzzle, r.answer)
        if problem is not None:
            fail(f"returned {r.answer[:80]!r}, which fails: {problem.reason}")
        if inner.report_answer(puzzle, r.answer).verified != r.verified:
            fail(f"returned {r.answer[:80]!r} as verified={r.verified}; its report says otherwise")
        if r.solution is None or not o.nodes.get(r.solution.id, TreeNode(0, None, 0, "", False, "")).solved:
            fail("the answer does not come from a node the gate called solved")
        if answer_ok is not None and r.verified and not answer_ok(puzzle, r.answer):
            fail(f"returned {r.answer[:80]!r} as verified; the reference check refuses it")
    accepted = []
    for e in o.of("answer"):
        ok = rule_failure(inner, puzzle, e["answer"]) is None
        if bool(e.get("accepted")) != ok:
            fail(f"answer {e['answer'][:80]!r} accepted={e.get('accepted')}, the rules say {ok}")
        if bool(e.get("verified")) != inner.report_answer(puzzle, e["answer"]).verified:
            fail(f"answer {e['answer'][:80]!r} verified={e.get('verified')}, its report says otherwise")
        if answer_ok is not None and bool(e.get("verified")) != answer_ok(puzzle, e["answer"]):
            fail(f"answer {e['answer'][:80]!r} verified={e.get('verified')}, the reference check disagrees")
        if ok:
            accepted.append(e["answer"])
    if r.answer is not None and r.answer not in accepted:
        fail(f"returned {r.answer[:80]!r}, which search never accepted")
    several: list[tuple[str, bool]] | None = getattr(r.extra, "answers", None)  # mcts --answers N
    listed = [a for a, _ in several or []]
    if several is not None and (len(set(listed)) != len(listed) or (listed[0] if listed else None) != r.answer):
        fail(f"listed answers {[a[:40] for a in listed]} repeat one, or do not start with the answer")
    for a, verified in several or []:  # several answers (mcts --answers): each one as the answer is
        if a not in accepted:
            fail(f"listed {a[:80]!r}, which search never accepted")
        if verified != inner.report_answer(puzzle, a).verified:
            fail(f"listed {a[:80]!r} as verified={verified}; its report says otherwise")
        if answer_ok is not None and verified and not answer_ok(puzzle, a):
            fail(f"listed {a[:80]!r} as verified; the reference check refuses it")


def check_outcome(o: Outcome, answer_ok: AnswerCheck | None = None) -> None:
    """Every invariant of one run (``rebuild`` first)."""
    rebuild(o)
    check_states(o)
    check_gate(o)
    check_backtracking(o)
    check_bfs(o)
    check_dfs(o)
    check_best_first(o)
    check_mcts(o)
    check_beam(o)
    check_budgets(o)
    check_answers(o, answer_ok)


def _fail(o: Outcome, invariant: str) -> Callable[[str], NoReturn]:
    def fail(detail: str) -> NoReturn:
        raise InvariantBroken(invariant, detail, o.case)

    return fail
