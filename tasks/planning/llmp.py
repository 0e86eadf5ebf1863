"""LLM+P (Liu et al. 2023): the model writes the problem PDDL from English, a gate checks it
against the domain and returns its reasons for a bounded number of repairs, the planner solves
it, and the plan is validated against the ground-truth problem when one is known. Also the
direct baseline: the model writes the whole plan, which is validated."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from solver.budget import Usage
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.lm.session import Session
from tasks.planning import prompts
from tasks.planning.files import split_forms
from tasks.planning.problem_grammar import (
    DomainShape,
    GrammarUnavailable,
    body_grammar,
    domain_shape,
    objects_grammar,
    read_objects_prefix,
)
from verifiers.pddl_model import Problem, parse_problem
from verifiers.planner import Mode, plan
from verifiers.planning import parse_action, plan_is_optimal, report_plan
from verifiers.report import AnswerReport, Check

PDDL_TOKENS = 640  # LLM+P's ground-truth problems p01-p03 are under 400 tokens
OBJECTS_TOKENS = 320  # under the grammar, the header and object list are written first, then the rest
REASONS, REASON_CHARS = 5, 160  # the refusal reasons a repair prompt carries, each cut to this length
# A base model goes on with a new problem of its own after its answer; these end the answer there.
STOPS = ("Now I have a new planning problem", "An example planning problem is")
PLAN_TOKENS = 512
ALREADY = "the goal already holds"


@dataclass(frozen=True, slots=True)
class Example:
    """LLM+P's one in-context example of a domain: English, PDDL, and a plan in PDDL form."""

    nl: str
    pddl: str
    plan: str = ""


@dataclass(frozen=True, slots=True)
class Inputs:
    domain_pddl: str
    domain_nl: str
    problem_nl: str
    example: Example | None
    truth_pddl: str | None = None  # the ground-truth problem, when known (pNN.pddl beside pNN.nl)


@dataclass(slots=True)
class Outcome:
    """What one LLM+P or direct run produced; ``report`` judges the plan (None: no plan)."""

    method: str
    plan: list[str] | None = None
    report: AnswerReport | None = None
    checked_against: str = ""  # "ground truth" or "the model's own problem"
    problem_pddl: str | None = None
    attempts: int = 0
    refusals: list[str] = field(default_factory=list)
    planner: str = ""  # the planner's one-line summary (PlanSearch.summary)
    # The least value of the ground truth's objective, when known: its fewest actions, or its least
    # total cost where the problem minimises action costs (``cost_objective``).
    optimum: int | None = None
    cost_objective: bool = False
    planner_name: str | None = None  # the backend that made the plan
    planner_optimal: bool = False  # its optimal search finished: no shorter plan for the problem it was given
    error: str | None = None
    last_answer: str = ""  # the model's last text (cut to 2,000 characters), to see what it wrote
    accepted: bool = False  # llmp: the gate accepted the model's problem file
    grammar: str = "off"  # "on" (the problem file written under the domain's grammar), "off", or why not
    usage: Usage = field(default_factory=Usage, repr=False)  # this run's model calls and tokens

    @property
    def solved(self) -> bool:
        return self.report is not None and self.report.verified and self.checked_against == "ground truth"

    @property
    def optimal(self) -> bool:
        """Solved, and the report's check against the known optimum passed (by length or total cost)."""
        return self.solved and self.report is not None and plan_is_optimal(self.report)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "plan": self.plan, "solved": self.solved, "optimal": self.optimal,
                "checked_against": self.checked_against, "attempts": self.attempts, "refusals": self.refusals,
                "planner": self.planner, "planner_name": self.planner_name,
                "planner_optimal": self.planner_optimal,
                "optimal_length": None if self.cost_objective else self.optimum,
                "optimal_cost": self.optimum if self.cost_objective else None, "error": self.error,
                "problem_pddl": self.problem_pddl, "last_answer": self.last_answer, "grammar": self.grammar,
                "accepted": self.accepted,
                "report": self.report.to_json() if self.report is not None else None}


def extract_problem(text: str) -> str:
    """The first ``(define (problem ...) ...)`` form in model text; ValueError if there is none."""
    start = text.lower().find("(define")
    while start >= 0:
        try:
            forms = split_forms(text[start:])
        except ValueError:
            forms = []
        if forms and "(problem" in forms[0].lower().replace("( ", "("):
            return forms[0]
        start = text.lower().find("(define", start + 1)
    first = text.lower().find("(define")
    if first >= 0:
        code = "\n".join(line.split(";", 1)[0] for line in text[first:].splitlines())
        missing = code.count("(") - code.count(")")
        if missing > 0:
            raise ValueError(f"the (define (problem ...)) form is not closed: {missing} ')' missing")
    raise ValueError("no complete (define (problem ...)) form in the answer")


def gate_problem(domain_pddl: str, problem_pddl: str) -> tuple[Problem | None, list[str]]:
    """Parse a model-written problem against the domain; the reasons it is refused (empty: accepted).
    Syntax, declared objects and predicates, arities (by the parser); argument types of the
    initial facts; a goal that already holds, contradicts itself, or asks for a fact no action
    can make true that is false at the start."""
    try:
        prob = parse_problem(domain_pddl, problem_pddl)
    except ValueError as e:
        return None, [str(e)]
    reasons: list[str] = []
    types = prob.object_types()
    for atom in sorted(prob.init):
        allowed = dict(prob.predicates).get(atom[0], ())
        for obj, options in zip(atom[1:], allowed, strict=False):
            if not any(prob.is_a(types.get(obj, "object"), t) for t in options):
                reasons.append(f"init fact ({' '.join(atom)}): {obj} is a {types.get(obj)}, "
                               f"but {atom[0]} needs {' or '.join(options)} there")
                break
    pos = {a for p, a in prob.goal if p}
    neg = {a for p, a in prob.goal if not p}
    for a in sorted(pos & neg):
        reasons.append(f"the goal is contradictory: it asks for ({' '.join(a)}) and its negation")
    if prob.goal and all((a in prob.init) == p for p, a in prob.goal if a[0] != "="):
        reasons.append(ALREADY + " in the initial state (nothing to plan)")
    added = {a[0] for s in prob.schemas for a in s.add}
    deleted = {a[0] for s in prob.schemas for a in s.delete}
    for p, a in prob.goal:
        if p and a not in prob.init and a[0] not in added:
            reasons.append(f"goal ({' '.join(a)}) is false at the start and no action makes {a[0]} true")
        if not p and a in prob.init and a[0] not in deleted:
            reasons.append(f"goal (not ({' '.join(a)})) is true at the start and no action makes {a[0]} false")
    return prob, reasons


def llmp_prompt(inp: Inputs) -> str:
    example = "" if inp.example is None else prompts.LLMP_EXAMPLE.format(
        example_nl=inp.example.nl.strip(), example_pddl=inp.example.pddl.strip())
    return prompts.LLMP.format(domain_nl=inp.domain_nl.strip(), domain_pddl=inp.domain_pddl.strip(),
                               example=example, problem_nl=inp.problem_nl.strip())


def _judge(out: Outcome, inp: Inputs, own: Problem, plan_text: str, truth: Problem | None = None) -> None:
    """Validate the plan against the ground truth when known (``truth``, when the caller read it
    already); else only against the model's problem."""
    if inp.truth_pddl is not None:
        truth = truth or parse_problem(inp.domain_pddl, inp.truth_pddl)
        out.cost_objective = truth.action_costs
        out.report = report_plan(truth, plan_text, out.optimum,
                                 rules="PDDL plan semantics, ground-truth problem")
        out.checked_against = "ground truth"
    else:
        out.report = report_plan(own, plan_text, None, rules="PDDL plan semantics, the model's own problem only")
        out.checked_against = "the model's own problem"


def check_context(client: LMClient, prompt: str, repairs: int, grammar: bool) -> None:
    """ValueError, before any model call, when the longest call of the run (the last repair: the
    prompt, every earlier answer and repair request, and its own answer) may not fit the model's
    context window. Only backends that count tokens (the embedded model) are checked."""
    backend = client.backend
    count, window = getattr(backend, "count_tokens", None), getattr(backend, "n_ctx", None)
    if not callable(count) or not isinstance(window, int):
        return
    answer = OBJECTS_TOKENS + PDDL_TOKENS if grammar else PDDL_TOKENS
    repair = int(count(prompts.REPAIR.format(reasons=""))) + REASONS * (REASON_CHARS + 4)
    first = int(count(prompt))
    need = first + (repairs + 1) * answer + repairs * repair
    if need > window:
        trained = getattr(backend, "trained_context", None)
        raise ValueError(f"LLM+P may need {need} tokens of context (a prompt of {first}, answers of up to "
                         f"{answer} and {repairs} repair{'' if repairs == 1 else 's'}), over the model's context "
                         f"window of {window}; give a larger --context (the model allows {trained or 'unknown'}) "
                         f"or fewer --repairs")


def problem_grammar(domain_pddl: str) -> DomainShape | str:
    """The domain's shape for the problem grammars, or the one-line reason there is none."""
    try:
        return domain_shape(domain_pddl)
    except GrammarUnavailable as e:
        return str(e)


async def _write(model: Session, prompt: str, params: GenParams, shape: DomainShape | None) -> tuple[str, str | None]:
    """One attempt's text, and why it is refused before the gate (None: for the gate to judge).
    Without a shape, one unconstrained call. With one, two calls: the header and object list under
    the domain's object grammar, then the rest under a grammar over the objects the model declared.
    A backend that ignored the grammar and wrote the whole file at once is taken at its word."""
    if shape is None:
        texts = await model.complete(prompt, params, "llmp")
        return (texts[0], None) if texts else ("", "")
    first = dataclasses.replace(params, max_tokens=OBJECTS_TOKENS, grammar=objects_grammar(shape))
    texts = await model.complete(prompt, first, "llmp")
    if not texts:
        return "", ""
    try:
        extract_problem(texts[0])
        return texts[0], None
    except ValueError:
        pass
    try:
        head = read_objects_prefix(texts[0])
        rest = body_grammar(shape, head.objects)
    except ValueError as e:
        return texts[0], str(e)
    texts = await model.complete(prompt + head.text, dataclasses.replace(params, grammar=rest), "llmp")
    if not texts:
        return head.text, ""
    return head.text + texts[0], None


async def run_llmp(inp: Inputs, client: LMClient, *, repairs: int = 2, planner_seconds: float = 30.0,
                   planner_mode: Mode = "optimal", temperature: float = 0.0, seed: int | None = 0,
                   optimum: int | None = None, usage: Usage | None = None, grammar: bool = True,
                   planner: str | None = None) -> Outcome:
    """One LLM+P run: write (under the domain's problem grammar unless ``grammar`` is False or it
    cannot be built), gate (with up to ``repairs`` repairs), plan, validate. Its model calls are
    counted in ``usage`` (with its budget; default: fresh counters), also ``Outcome.usage``.
    ValueError before any call when the run may not fit the model's context window."""
    out = Outcome("llmp" if inp.example is not None else "llmp-no-example", optimum=optimum)
    truth: Problem | None = None
    if inp.truth_pddl is not None:
        with contextlib.suppress(ValueError):  # an unreadable domain: the run goes on, the gate says why
            truth = parse_problem(inp.domain_pddl, inp.truth_pddl)
            out.cost_objective = truth.action_costs
    params = GenParams(n=1, temperature=temperature, max_tokens=PDDL_TOKENS, seed=seed, stop=STOPS)
    prompt = llmp_prompt(inp)
    shape: DomainShape | None = None
    if grammar:
        got = problem_grammar(inp.domain_pddl)
        shape = got if isinstance(got, DomainShape) else None
        out.grammar = "on" if shape is not None else str(got) + "; the model writes unconstrained"
    check_context(client, prompt, repairs, shape is not None)
    model, errors = _session(client, usage, out)
    own: Problem | None = None
    for attempt in range(repairs + 1):
        out.attempts = attempt + 1
        text, refused = await _write(model, prompt, params, shape)
        if refused == "":
            out.error = "the model call failed: " + (errors[-1] if errors else "no answer")
            return out
        out.last_answer = text[:2000]
        if refused is not None:
            reasons = [refused]
        else:
            try:
                candidate = extract_problem(text)
            except ValueError as e:
                reasons = [str(e)]
            else:
                out.problem_pddl = candidate
                own, reasons = gate_problem(inp.domain_pddl, candidate)
        if own is not None and reasons and attempt == repairs and all(r.startswith(ALREADY) for r in reasons):
            reasons = []  # asked to repair and still trivial: some problems are (LLM+P's blocksworld p01)
        if not reasons:
            break
        out.refusals.append("; ".join(reasons)[:500])
        own = None
        prompt = prompt + text + "\n\n" + prompts.REPAIR.format(
            reasons="\n".join(f"- {r[:REASON_CHARS]}" for r in reasons[:REASONS]))
    out.accepted = own is not None
    if own is None:
        out.error = f"the model's problem PDDL was refused {out.attempts} times: {out.refusals[-1]}"
        return out
    found = plan(own, time_limit=planner_seconds, mode=planner_mode, planner=planner)
    # The plan is optimal for the model's problem; for the ground truth only ``optimum`` can say.
    out.planner = found.summary() + " (on the model's problem)"
    out.planner_name, out.planner_optimal = found.planner, found.optimal
    if found.plan is None:
        out.error = ("the model's problem has no plan (the planner proved it)" if found.status == "unsolvable"
                     else "the planner's time limit ran out on the model's problem"
                     if found.detail in ("", "the time limit ran out")
                     else f"the planner gave no answer on the model's problem: {found.detail}")
        return out
    out.plan = [a.text() for a in found.plan]
    _judge(out, inp, own, "\n".join(out.plan), truth)
    return out


def direct_prompt(inp: Inputs, problem: Problem) -> str:
    actions = "\n".join(f"({s.name} {' '.join(v for v, _ in s.params)})" for s in problem.schemas)
    example = "" if inp.example is None or not inp.example.plan else prompts.DIRECT_EXAMPLE.format(
        example_nl=inp.example.nl.strip(), example_plan=inp.example.plan.strip())
    return prompts.DIRECT.format(domain_nl=inp.domain_nl.strip(), actions=actions, example=example,
                                 problem_nl=inp.problem_nl.strip())


def plan_lines(text: str) -> list[str]:
    """The actions in model text, in order: lines that read as an action; stops at the first
    blank line after some actions (a base model goes on with text of its own)."""
    out: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        if not s:
            if out:
                break
            continue
        try:
            out.append(parse_action(s).text())
        except ValueError:
            if out:
                break
    return out


async def run_direct(inp: Inputs, client: LMClient, *, temperature: float = 0.0, seed: int | None = 0,
                     optimum: int | None = None, usage: Usage | None = None) -> Outcome:
    """The direct baseline: the model writes the plan; it is validated as written (the ground-truth
    problem is needed: without it there is nothing to check the plan against). Its model calls are
    counted in ``usage`` (default: fresh counters), also ``Outcome.usage``."""
    out = Outcome("direct", optimum=optimum, attempts=1)
    if inp.truth_pddl is None:
        raise ValueError("the direct baseline needs the problem PDDL to check the plan (pNN.pddl beside pNN.nl)")
    truth = parse_problem(inp.domain_pddl, inp.truth_pddl)
    out.cost_objective = truth.action_costs
    model, errors = _session(client, usage, out)
    texts = await model.complete(direct_prompt(inp, truth), GenParams(
        n=1, temperature=temperature, max_tokens=PLAN_TOKENS, seed=seed, stop=STOPS), "direct")
    if not texts:
        out.error = "the model call failed: " + (errors[-1] if errors else "no answer")
        return out
    out.last_answer = (texts[0] if texts else "")[:2000]
    out.plan = plan_lines(texts[0] if texts else "")
    if not out.plan:
        out.report = AnswerReport("PDDL plan semantics, ground-truth problem",
                                  (Check("plan parses", False, "no action lines in the answer"),))
        out.checked_against = "ground truth"
        return out
    _judge(out, inp, truth, "\n".join(out.plan), truth)
    return out


def _session(client: LMClient, usage: Usage | None, out: Outcome) -> tuple[Session, list[str]]:
    """This run's session of the (possibly shared) client, counting into ``out.usage``, and the
    list its model errors (e.g. a prompt longer than the model's context) are collected in."""
    errors: list[str] = []

    def note(ev: dict[str, object]) -> None:
        if ev.get("event") == "lm_error":
            errors.append(str(ev.get("error")))

    model = client.session(usage, note)
    out.usage = model.usage
    return model, errors


def example_plan(domain_pddl: str, example_pddl: str, seconds: float = 10.0, planner: str = "pyperplan") -> str:
    """The example's plan in PDDL form, made by the planner (LLM+P's .sol files are in English);
    empty when the example itself is not valid PDDL for the domain (LLM+P's floortile example uses
    an undeclared robot2) or has no plan within the limit. The pure-Python planner by default, so
    that the prompt is the same whichever backends are installed."""
    try:
        example = parse_problem(domain_pddl, example_pddl)
    except ValueError:
        return ""
    found = plan(example, time_limit=seconds, mode="satisficing", planner=planner)
    return "\n".join(a.text() for a in found.plan) if found.plan else ""
