"""Exact simulation of a PDDL problem: is one ground action applicable, what state does it lead
to, is a whole plan valid. Never calls a model; plans are read by a strict grammar."""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifiers.answers import find_answer
from verifiers.pddl_model import Atom, Literal, Problem, Schema, atom_text
from verifiers.report import AnswerReport, Check

__all__ = ["GroundAction", "MAX_PLAN_CHARS", "MAX_PLAN_STEPS", "PlanResult", "State", "apply", "binding",
           "failed_precondition", "goal_holds", "parse_action", "parse_plan", "plan_is_optimal", "read_plan",
           "report_plan", "simulate", "unmet_goals"]

State = frozenset[Atom]
MAX_PLAN_CHARS = 200_000
MAX_PLAN_STEPS = 10_000

_NAME = r"[A-Za-z][A-Za-z0-9_\-]*"
_ACTION = re.compile(rf"^\(?\s*({_NAME}(?:\s+{_NAME})*)\s*\)?$")


@dataclass(frozen=True, slots=True)
class GroundAction:
    name: str
    args: tuple[str, ...]

    def text(self) -> str:
        return "(" + " ".join((self.name, *self.args)) + ")"


def parse_action(text: str) -> GroundAction:
    """``(unstack b2 b3)`` or ``unstack b2 b3`` (a trailing comma or a leading ``1.`` are allowed);
    ValueError with a one-line reason otherwise."""
    s = text.strip().rstrip(",").strip()
    s = re.sub(r"^\d+\s*[.):]\s*", "", s)  # "1. (pickup b1)" or "3: pickup b1"
    m = _ACTION.match(s)
    if not m or s.count("(") > 1 or s.count(")") > 1 or (s.startswith("(") != s.endswith(")")):
        raise ValueError(f"not an action: {text.strip()[:80]!r} (expected e.g. '(unstack b2 b3)' or 'unstack b2 b3')")
    words = m.group(1).lower().split()
    return GroundAction(words[0], tuple(words[1:]))


def parse_plan(text: str) -> list[GroundAction]:
    """One action per line; blank lines and ``;`` comments (as in planners' plan files) are skipped."""
    if len(text) > MAX_PLAN_CHARS:
        raise ValueError(f"plan is longer than {MAX_PLAN_CHARS} characters")
    steps = []
    for no, line in enumerate(text.splitlines(), 1):
        body = line.split(";", 1)[0].strip()
        if not body:
            continue
        try:
            steps.append(parse_action(body))
        except ValueError as e:
            raise ValueError(f"line {no}: {e}") from None
        if len(steps) > MAX_PLAN_STEPS:
            raise ValueError(f"plan has more than {MAX_PLAN_STEPS} steps")
    return steps


def _bind(atom: Atom, env: dict[str, str]) -> Atom:
    return (atom[0], *(env.get(a, a) for a in atom[1:]))


def _holds(lit: Literal, env: dict[str, str], state: State) -> bool:
    positive, atom = lit
    ground = _bind(atom, env)
    if ground[0] == "=":
        return (ground[1] == ground[2]) == positive
    return (ground in state) == positive


def binding(problem: Problem, action: GroundAction) -> tuple[Schema, dict[str, str]] | str:
    """The schema and parameter binding of a ground action, or why there is none (unknown action,
    wrong number of arguments, unknown object, object of the wrong type)."""
    schema = problem.schema(action.name)
    if schema is None:
        known = ", ".join(s.name for s in problem.schemas)
        return f"unknown action {action.name!r} (the domain has: {known})"
    if len(action.args) != len(schema.params):
        return f"{action.name} takes {len(schema.params)} arguments, got {len(action.args)}"
    types = problem.object_types()
    for (var, typ), obj in zip(schema.params, action.args, strict=True):
        if obj not in types:
            return f"unknown object {obj!r}"
        if not problem.is_a(types[obj], typ):
            return f"{obj} is a {types[obj]}, but {action.name} needs a {typ} for {var}"
    return schema, dict(zip((v for v, _ in schema.params), action.args, strict=True))


def failed_precondition(problem: Problem, state: State, action: GroundAction) -> str | None:
    """None when the action is applicable in the state; otherwise the first reason it is not."""
    bound = binding(problem, action)
    if isinstance(bound, str):
        return bound
    schema, env = bound
    for lit in schema.pre:
        if not _holds(lit, env, state):
            ground = _bind(lit[1], env)
            if ground[0] == "=":
                return f"precondition {'' if lit[0] else 'not '}{ground[1]} = {ground[2]} does not hold"
            return (f"precondition {atom_text(ground)} does not hold" if lit[0]
                    else f"precondition (not {atom_text(ground)}) does not hold: {atom_text(ground)} is true")
    return None


def apply(problem: Problem, state: State, action: GroundAction) -> State:
    """The successor state (delete list first, then add list, as PDDL says); ValueError if not applicable."""
    reason = failed_precondition(problem, state, action)
    if reason is not None:
        raise ValueError(reason)
    bound = binding(problem, action)
    assert not isinstance(bound, str)
    schema, env = bound
    deleted = state - {_bind(a, env) for a in schema.delete}
    return frozenset(deleted | {_bind(a, env) for a in schema.add})


def goal_holds(problem: Problem, state: State) -> bool:
    return all(_holds(lit, {}, state) for lit in problem.goal)


def unmet_goals(problem: Problem, state: State) -> list[str]:
    return [("" if pos else "not ") + atom_text(atom)
            for pos, atom in problem.goal if not _holds((pos, atom), {}, state)]


@dataclass(frozen=True, slots=True)
class PlanResult:
    """What simulating a plan found: the step that failed (1-based) and why, or the goal's status."""

    steps: int
    failed_step: int | None
    reason: str | None
    goal_reached: bool
    final: State
    cost: int = 0  # the applied steps' total cost under the problem's metric (their number without action costs)

    @property
    def valid(self) -> bool:
        return self.failed_step is None and self.goal_reached


def simulate(problem: Problem, plan: list[GroundAction], state: State | None = None) -> PlanResult:
    cur = problem.init if state is None else state
    cost = 0
    for i, act in enumerate(plan, 1):
        reason = failed_precondition(problem, cur, act)
        if reason is not None:
            return PlanResult(len(plan), i, f"step {i} {act.text()}: {reason}", False, cur, cost)
        cur = apply(problem, cur, act)
        cost += problem.action_cost(act.name)
    reached = goal_holds(problem, cur)
    why = None if reached else ("the goal does not hold after the last step: unmet "
                                + ", ".join(unmet_goals(problem, cur)))
    return PlanResult(len(plan), None, why, reached, cur, cost)


def report_plan(problem: Problem, answer: str, optimum: int | None = None,
                rules: str = "PDDL plan semantics (STRIPS, typing, negative preconditions)") -> AnswerReport:
    """The answer report of a plan: parsed, every step applicable, goal reached, and against
    ``optimum``, the least value of the problem's objective when known: the fewest actions, or the
    least total cost where the problem minimises action costs (``Problem.action_costs``)."""
    try:
        plan = parse_plan(answer)
    except ValueError as e:
        return AnswerReport(rules, (Check("plan parses", False, str(e)),))
    checks = [Check("plan parses", True, f"{len(plan)} steps")]
    res = simulate(problem, plan)
    if res.failed_step is not None:
        checks.append(Check("every step applicable", False, res.reason or ""))
        return AnswerReport(rules, tuple(checks))
    checks.append(Check("every step applicable", True))
    checks.append(Check("goal reached", res.goal_reached, res.reason or ""))
    if problem.action_costs:
        name, value = "optimal cost", f"{len(plan)} steps, total cost {res.cost}"
        detail = f"{value}; the least is unknown" if optimum is None else f"{value}, least {optimum}"
    else:
        name, value = "optimal length", f"{len(plan)} steps"
        detail = "optimal plan length unknown" if optimum is None else f"{value}, optimal {optimum}"
    checks.append(Check(name, None if optimum is None else res.cost <= optimum, detail, required=False))
    return AnswerReport(rules, tuple(checks))


def plan_is_optimal(report: AnswerReport) -> bool:
    """``report_plan``'s check against a known optimum passed (by length, or by total cost)."""
    return any(c.name in ("optimal length", "optimal cost") and c.passed is True for c in report.checks)


def _action_line(line: str, actions: frozenset[str]) -> str | None:
    """The line without list mark and comment when it is one action of the domain, else None."""
    body = line.split(";", 1)[0].strip()
    for mark in ("- ", "* ", "\u2022 "):
        if body.startswith(mark):
            body = body[len(mark):].strip()
            break
    try:
        return body if body and parse_action(body).name in actions else None
    except ValueError:
        return None


def read_plan(text: str, problem: Problem) -> str | None:
    """The plan a model's text answers with (one action a line), or None. Where it is:
    ``verifiers.answers``. Inside tags, every non-blank, non-comment line must be an action of the
    domain; after ``Answer:``, the first run of action lines; unmarked, the last run (blank and
    comment lines inside a run do not end it; any other line does). The one answer reader of
    planning: the rewards and ``tot verify``."""
    if not isinstance(text, str):
        return None
    actions = frozenset(s.name for s in problem.schemas)
    found = find_answer(text)
    lines = [line for line in found.lines if line.split(";", 1)[0].strip()]  # blank and comment lines skipped
    if found.marker in ("tag", "boxed"):
        read = [_action_line(line, actions) for line in lines]
        return "\n".join(a for a in read if a is not None) if read and None not in read else None
    runs: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        action = _action_line(line, actions)
        if action is None:
            current = None
            continue
        if current is None:
            current = []
            runs.append(current)
            if found.marked and len(runs) > 1:
                break
        current.append(action)
    if not runs:
        return None
    return "\n".join(runs[0] if found.marked else runs[-1])
