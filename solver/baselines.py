"""The paper's baselines, task-agnostic: IO, CoT, CoT-SC (majority vote), iterative refinement
with the exact checker's feedback, and best-of-k with an oracle pick.

A task opts in by composing a ``BaselinePrompts`` part (prompts and an answer parser;
``solver.task_capabilities``), and a ``RefinePrompt`` part for ``refine``; parts are found with
``solver.task_capabilities.find``. A task may also bring baselines of its own (``OwnBaselines``:
writing's coherence-judged refine, Sudoku's zero-/one-/few-shot prompts): each is a function
of a ``BaselineRun`` that asks the model through it and returns the answer it picked; the run does
the parsing, the counting, the trace and the final exact check, here and nowhere else. Every
method returns an answer only after the task's answer rules (``solver.expansion.rule_failure``)
accepted it, and counts the raw model answers that were invalid (unparseable or rejected) before
that check.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Hashable, Mapping, Sequence

from solver.baseline_capabilities import (
    AnswerGrammar,
    AnswerKey,
    AnswerParser,
    BaselinePrompts,
    BaselineStops,
    OwnBaselines,
    RefinePrompt,
)
from solver.budget import BudgetExhausted, Usage
from solver.expansion import rule_failure
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.lm.grammar_report import grammar_setting
from solver.lm.session import trace_sink
from solver.task_capabilities import find, has, no_model, require, task_options
from solver.trace import Trace
from verifiers.report import AnswerReport
from verifiers.verdict import Invalid

BASELINES: tuple[str, ...] = ("io", "cot", "cot-sc", "refine", "io-best", "cot-best")
# The generic baselines that decode their answers under the task's AnswerGrammar (refine's later
# rounds answer a feedback prompt, which the answer grammars are not written for). A task's own
# baselines ask for it through ``BaselineRun.answer_grammar``.
GRAMMAR_METHODS = ("io", "cot", "cot-sc", "io-best", "cot-best")


def own_baselines(task: Any) -> Mapping[str, Callable[[BaselineRun], Awaitable[str | None]]]:
    """The task's own baselines by name; empty when it has none."""
    own = find(task, OwnBaselines)
    return own.own_baselines if own is not None else {}


def baseline_names(task: Any) -> tuple[str, ...]:
    """Every baseline ``task`` can run: the generic ones it supports, then its own."""
    own = own_baselines(task)
    return tuple(m for m in BASELINES if m not in own and supports(task, m)) + tuple(own)


@dataclass(frozen=True, slots=True)
class BaselineConfig:
    samples: int = 5  # k for cot-sc and *-best (the paper: 100)
    rounds: int = 10  # attempts of refine, the first one included (the paper: up to 10)
    temperature: float = 0.7
    seed: int | None = 0
    chat: bool = False
    io_tokens: int = 48
    cot_tokens: int = 192
    grammar: bool = True  # io, cot, cot-sc and *-best decode under the task's AnswerGrammar, where it has one


@dataclass(slots=True)
class BaselineResult:
    answer: str | None
    verified: bool
    raw_answers: int = 0  # model outputs read
    invalid_answers: int = 0  # of those, unparseable or rejected by the exact check
    stopped_by: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    texts: list[str] = field(default_factory=list)  # the outputs, for traces and failure analysis
    report: AnswerReport | None = None  # every check of the returned answer

    def summary(self) -> dict[str, object]:
        return {"answer": self.answer, "verified": self.verified,
                "report": self.report.to_json() if self.report is not None else None,
                "stopped_by": self.stopped_by,
                "raw_answers": self.raw_answers, "invalid_answers": self.invalid_answers,
                "error": self.error, **self.usage.summary()}


def baseline_needs(method: str) -> tuple[type, ...]:
    """The task capabilities baseline ``method`` calls (each also calls a model)."""
    return (BaselinePrompts, RefinePrompt) if method == "refine" else (BaselinePrompts,)


def baseline_parts(task: Any, method: str) -> tuple[type, ...]:
    """The capabilities baseline ``method`` needs of ``task``: a task's own baseline of that name
    (which takes the place of the generic one) needs only its answer parser."""
    return (AnswerParser,) if method in own_baselines(task) else baseline_needs(method)


def supports(task: Any, method: str) -> bool:
    """Whether ``task`` implements what ``method`` needs (a task's own baseline of that name counts)."""
    known = method in BASELINES or method in own_baselines(task)
    return known and all(has(task, part) for part in baseline_parts(task, method))


def require_baseline(task: Any, method: str, client: object) -> None:
    """MissingCapability (one line) when ``task`` lacks a capability ``method`` needs, or when
    there is no model (``client`` None)."""
    for part in baseline_parts(task, method):
        require(task, part, f"baseline `{method}`")
    if client is None:
        raise no_model(f"baseline `{method}`")


def majority(answers: Sequence[str | None], key: Any = None) -> str | None:
    """The most frequent answer (None answers do not vote). Ties go to the answer whose first
    occurrence came earliest, so the vote is deterministic for a given sample order."""
    keyf = key or (lambda a: " ".join(a.split()))
    counts: Counter[Hashable] = Counter()
    first: dict[Hashable, tuple[int, str]] = {}
    for i, a in enumerate(answers):
        if a is None:
            continue
        k = keyf(a)
        counts[k] += 1
        first.setdefault(k, (i, a))
    if not counts:
        return None
    best = max(counts, key=lambda k: (counts[k], -first[k][0]))
    return first[best][1]


class BaselineRun:
    """One baseline on one puzzle: asks the model, reads and checks each raw answer (counting the
    invalid ones and tracing them), and gates the answer finally picked (``final``)."""

    def __init__(self, task: Any, puzzle: str, client: LMClient, cfg: BaselineConfig, trace: Trace,
                 usage: Usage) -> None:
        self.task, self.puzzle, self.cfg, self.trace = task, puzzle, cfg, trace
        self.usage = usage
        self.model = client.session(usage, trace_sink(trace))
        self.raw = self.invalid = 0
        self.texts: list[str] = []
        stops = find(task, BaselineStops)
        self.stop: tuple[str, ...] = tuple(stops.baseline_stop) if stops is not None else ()
        self.parser = require(task, AnswerParser, "a baseline")

    def answer_grammar(self, cot: bool) -> str | None:
        """The task's grammar of an answer to this puzzle (AnswerGrammar; ``cot``: after the
        chain-of-thought prompt), for ``ask``; None where the task has none or ``--grammar off``."""
        part = find(self.task, AnswerGrammar) if self.cfg.grammar else None
        return part.answer_grammar(self.puzzle, cot) if part is not None else None

    def params(self, n: int, max_tokens: int) -> GenParams:
        return GenParams(n=n, temperature=self.cfg.temperature, max_tokens=max_tokens, stop=self.stop,
                         seed=self.cfg.seed, chat=self.cfg.chat)

    async def ask(self, prompt: str, n: int, max_tokens: int, purpose: str, seed_offset: int = 0,
                  temperature: float | None = None, grammar: str | None = None) -> list[str]:
        """``n`` samples of ``prompt``; ``seed_offset`` moves the seed (a rewrite round's own
        seed), ``temperature`` replaces the configured one (a greedy one-answer baseline),
        ``grammar`` (GBNF) constrains decoding where the backend can."""
        params = self.params(n, max_tokens)
        if grammar is not None:
            params = dataclasses.replace(params, grammar=grammar)
        if seed_offset and params.seed is not None:
            params = dataclasses.replace(params, seed=params.seed + seed_offset)
        if temperature is not None:
            params = dataclasses.replace(params, temperature=temperature)
        texts = await self.model.complete(prompt, params, purpose)
        self.texts.extend(texts)
        return texts

    def read(self, text: str) -> tuple[str | None, Invalid | None]:
        """Parse and check one raw output: (answer, problem)."""
        self.raw += 1
        answer = self.parser.parse_answer(self.puzzle, text)
        problem = Invalid("no answer found") if answer is None else rule_failure(self.task, self.puzzle, answer)
        if problem is not None:
            self.invalid += 1
        self.trace.emit("raw_answer", text=text[:500], answer=answer, valid=problem is None,
                        reason=problem.reason if problem else None)
        return answer, problem

    def final(self, answer: str | None, stopped_by: str | None = None) -> BaselineResult:
        # The returned answer always passes the exact check, whichever method picked it.
        report = self.task.report_answer(self.puzzle, answer) if answer is not None else None
        verified = report is not None and report.verified
        out = answer if verified else None
        self.trace.emit("answer", answer=answer, verified=verified, accepted=verified,
                        report=report.to_json() if report is not None else None)
        res = BaselineResult(out, verified, self.raw, self.invalid, stopped_by, self.usage, None, self.texts,
                             report if verified else None)
        self.trace.emit("end", **res.summary())
        return res


async def run_baseline(task: Any, puzzle: str, method: str, client: LMClient,
                       cfg: BaselineConfig | None = None, trace: Trace | None = None,
                       usage: Usage | None = None) -> BaselineResult:
    """Run one baseline on one puzzle with its own usage (``usage``, with its budget; default: fresh
    counters, no limits) and trace; the client may be shared, also by runs at the same time."""
    cfg = cfg or BaselineConfig()
    if method not in BASELINES and method not in own_baselines(task):
        raise ValueError(f"unknown baseline {method!r}; choose one of {', '.join(baseline_names(task))}")
    require_baseline(task, method, client)
    if cfg.samples < 1 or cfg.rounds < 1:
        raise ValueError("samples and rounds must be at least 1")
    task.root(puzzle)  # bad input fails here with the task's own message
    trace = trace or Trace()
    usage = usage or Usage(model=client.backend.model)
    b = BaselineRun(task, puzzle, client, cfg, trace, usage)
    decodes = (method in GRAMMAR_METHODS or method in own_baselines(task)) and find(task, AnswerGrammar) is not None
    grammar = await grammar_setting(client, cfg.grammar, decodes)
    trace.emit("start", task=task.name, puzzle=puzzle, options=task_options(task), method=method,
               model=client.backend.name,
               samples=cfg.samples, rounds=cfg.rounds, seed=cfg.seed, grammar=grammar)
    chosen: str | None = None
    grammars = method in GRAMMAR_METHODS and own_baselines(task).get(method) is None
    io_grammar = b.answer_grammar(False) if grammars else None
    cot_grammar = b.answer_grammar(True) if grammars else None
    own = own_baselines(task).get(method)
    prompts = find(task, BaselinePrompts)  # present unless the method is the task's own (required above)
    try:
        if own is not None:
            chosen = await own(b)
        elif method in ("io", "cot"):
            assert prompts is not None
            prompt = prompts.io_prompt(puzzle, cfg.chat) if method == "io" else prompts.cot_prompt(puzzle, cfg.chat)
            texts = await b.ask(prompt, 1, cfg.io_tokens if method == "io" else cfg.cot_tokens, method,
                                grammar=io_grammar if method == "io" else cot_grammar)
            if texts:
                chosen, _ = b.read(texts[0])
        elif method == "cot-sc":
            assert prompts is not None
            texts = await b.ask(prompts.cot_prompt(puzzle, cfg.chat), cfg.samples, cfg.cot_tokens, method,
                                grammar=cot_grammar)
            answers = [b.read(t)[0] for t in texts]
            keyer = find(task, AnswerKey)
            chosen = majority(answers, keyer.answer_key if keyer is not None else None)
        elif method in ("io-best", "cot-best"):
            # Oracle pick: the exact check is the oracle, so any valid sample is the answer.
            io = method == "io-best"
            assert prompts is not None
            prompt = prompts.io_prompt(puzzle, cfg.chat) if io else prompts.cot_prompt(puzzle, cfg.chat)
            texts = await b.ask(prompt, cfg.samples, cfg.io_tokens if io else cfg.cot_tokens, method,
                                grammar=io_grammar if io else cot_grammar)
            for t in texts:
                answer, problem = b.read(t)
                if problem is None and chosen is None:
                    chosen = answer
        elif method == "refine":
            chosen = await _refine(b)
    except BudgetExhausted as exc:
        return b.final(chosen, exc.which)
    return b.final(chosen)


async def _refine(b: BaselineRun) -> str | None:
    """Attempt 1 is IO; each later attempt sees the previous one and the exact checker's reason."""
    task, puzzle, cfg = b.task, b.puzzle, b.cfg
    user = "baseline `refine`"
    prompts, refiner = require(task, BaselinePrompts, user), require(task, RefinePrompt, user)
    prompt = prompts.io_prompt(puzzle, cfg.chat)
    for attempt in range(cfg.rounds):
        # A distinct seed per round: the same prompt may recur, and the same sample would too.
        texts = await b.ask(prompt, 1, cfg.io_tokens, "refine", seed_offset=attempt)
        if not texts:
            continue
        answer, problem = b.read(texts[0])
        if problem is None:
            return answer
        prompt = refiner.refine_prompt(puzzle, answer or texts[0].strip(), problem.reason if problem else "",
                                    cfg.chat)
    return None
