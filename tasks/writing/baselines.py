"""Creative Writing baselines: IO, CoT (one sample each) and iterative refinement (up to 5 rounds).

Every method writes raw passages; only one that passes the same exact ending check as search is
ever returned, and each result says how many raw passages passed before the check. Each method
is one run on the given (possibly shared) client, counted in ``usage`` (default: fresh counters).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.budget import Usage
from solver.lm.base import GenParams
from solver.lm.client import LMClient
from solver.lm.session import Session
from tasks.writing import prompts
from tasks.writing.coherence import coherence
from tasks.writing.task import PASSAGE_TOKENS, clean_passage
from verifiers.writing import check_passage

PLAN_TOKENS = 100  # CoT writes its plan and then the passage in one completion
BASELINES = ("io", "cot", "refine")


@dataclass(frozen=True, slots=True)
class BaselineResult:
    method: str
    passage: str | None  # a verified passage, or None when no raw passage passed
    raw: tuple[str, ...]  # every passage the model wrote, in order
    raw_valid: tuple[bool, ...]  # whether each raw passage passed the check
    reason: str | None  # why the last raw passage failed; None when it passed
    judged: tuple[float | None, ...] = ()  # refine: the model's own coherence judgement per round

    @property
    def verified(self) -> bool:
        return self.passage is not None


def _gate(sentences: tuple[str, ...], method: str, raw: list[str],
          judged: tuple[float | None, ...] = ()) -> BaselineResult:
    problems = [check_passage(sentences, p) for p in raw]
    valid = tuple(pr is None for pr in problems)
    passed = [p for p, ok in zip(raw, valid, strict=True) if ok]
    last = problems[-1] if problems else None
    reason = "the model wrote no passage" if not raw else (last.reason if last is not None else None)
    return BaselineResult(method, passed[-1] if passed else None, tuple(raw), valid, reason, judged)


def _params(seed: int | None, temperature: float, max_tokens: int, stop: tuple[str, ...], chat: bool) -> GenParams:
    return GenParams(n=1, temperature=temperature, max_tokens=max_tokens, stop=stop, seed=seed, chat=chat)


def _chat(prompt: str, chat: bool) -> str:
    return prompts.CHAT_PREFIX + prompt if chat else prompt


async def _passage(model: Session, prompt: str, seed: int | None, temperature: float, chat: bool) -> str:
    texts = await model.complete(_chat(prompt, chat), _params(seed, temperature, PASSAGE_TOKENS,
                                                               prompts.PASSAGE_STOPS, chat), "passage")
    return clean_passage(texts[0]) if texts else ""


async def io(sentences: tuple[str, ...], client: LMClient, *, seed: int | None = 0,
             temperature: float = 0.7, chat: bool = False, usage: Usage | None = None) -> BaselineResult:
    """Input-output: one passage straight from the few-shot prompt."""
    text = await _passage(client.session(usage), prompts.passage_prompt(sentences), seed, temperature, chat)
    return _gate(sentences, "io", [text])


def split_cot(text: str) -> tuple[str, str]:
    """(plan, passage) of a chain-of-thought answer; the passage is "" when none follows the plan."""
    plan, sep, rest = text.partition("Passage:")
    return " ".join(plan.split()), clean_passage(rest) if sep else ""


async def cot(sentences: tuple[str, ...], client: LMClient, *, seed: int | None = 0,
              temperature: float = 0.7, chat: bool = False, usage: Usage | None = None) -> BaselineResult:
    """Chain of thought: a plan, then the passage, in one completion."""
    texts = await client.session(usage).complete(_chat(prompts.cot_prompt(sentences), chat),
                                  _params(seed, temperature, PLAN_TOKENS + PASSAGE_TOKENS,
                                          prompts.PASSAGE_STOPS, chat), "cot")
    passage = split_cot(texts[0])[1] if texts else ""
    return _gate(sentences, "cot", [passage])


async def refine(sentences: tuple[str, ...], client: LMClient, *, rounds: int = 5, threshold: float = 8.0,
                 judge_samples: int = 1, seed: int | None = 0, temperature: float = 0.7,
                 gate_feedback: bool = False, chat: bool = False, usage: Usage | None = None) -> BaselineResult:
    """Iterative refinement (the paper's, up to ``rounds`` passages): write, let the model judge
    coherence 1-10, and rewrite until it judges ``threshold`` or more and the passage passes the
    exact check. ``gate_feedback`` also tells the model the check's reason (not in the paper).
    The latest passage that passed the check is returned."""
    if rounds < 1:
        raise ValueError("refine needs at least one round")
    model = client.session(usage)
    raw: list[str] = []
    judged: list[float | None] = []
    text = await _passage(model, prompts.passage_prompt(sentences), seed, temperature, chat)
    for r in range(rounds):
        raw.append(text)
        problem = check_passage(sentences, text) if text else None
        score = (await coherence(model, text, judge_samples, seed=seed, temperature=temperature,
                                 chat=chat)).mean if text else None
        judged.append(score)
        if text and problem is None and score is not None and score >= threshold:
            break
        if r == rounds - 1:
            break
        why = f"not fully coherent (judged {score:.0f}/10)" if score is not None else "not fully coherent"
        if gate_feedback and problem is not None:
            why += f"; {problem.reason}"
        draft = text or "(empty)"
        text = await _passage(model, prompts.passage_prompt(sentences, draft=draft, problem=why),
                              None if seed is None else seed + r + 1, temperature, chat)
    return _gate(sentences, "refine", raw, tuple(judged))


async def run_baseline(method: str, sentences: tuple[str, ...], client: LMClient, *, seed: int | None = 0,
                       temperature: float = 0.7, chat: bool = False, usage: Usage | None = None) -> BaselineResult:
    if method == "io":
        return await io(sentences, client, seed=seed, temperature=temperature, chat=chat, usage=usage)
    if method == "cot":
        return await cot(sentences, client, seed=seed, temperature=temperature, chat=chat, usage=usage)
    if method == "refine":
        return await refine(sentences, client, seed=seed, temperature=temperature, chat=chat, usage=usage)
    raise ValueError(f"unknown baseline {method!r}; choose one of {', '.join(BASELINES)}")
