"""The paper's coherence judgement for benchmarks: n samples of a 1-10 score, averaged.

A soft model judgement, used to compare methods; never part of the gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from solver.lm.base import GenParams
from solver.lm.session import Session
from tasks.writing import prompts

_SCORE = re.compile(r"^\s*(10|[1-9])(?!\d|[.,]\d)")


def parse_score(text: str) -> int | None:
    """The whole number 1-10 that the answer starts with ("7", " 10/10"), else None."""
    m = _SCORE.match(text)
    return int(m.group(1)) if m else None


@dataclass(frozen=True, slots=True)
class Coherence:
    """Parsed scores of the n samples (None where unparseable) and their mean (None if none)."""

    scores: tuple[int | None, ...]

    @property
    def mean(self) -> float | None:
        got = [s for s in self.scores if s is not None]
        return sum(got) / len(got) if got else None


async def coherence(model: Session, passage: str, n: int = 5, *, seed: int | None = 0,
                    temperature: float = 0.7, chat: bool = False) -> Coherence:
    """Ask for n 1-10 coherence scores of ``passage`` (one request, n samples)."""
    prompt = prompts.score_prompt(passage)
    if chat:
        prompt = prompts.CHAT_PREFIX + prompt
    params = GenParams(n=n, temperature=temperature, max_tokens=4, stop=("\n",), seed=seed, chat=chat)
    texts = await model.complete(prompt, params, "coherence")
    return Coherence(tuple(parse_score(t) for t in texts))


class CoherenceScore:
    """SoftScore part of the writing task: the paper's 1-10 coherence judgement, n samples
    (``tot bench --score-samples``). Never part of the gate."""

    soft_score_name = "coherence 1-10"

    async def soft_score(self, model: Any, passage: str, n: int, *, seed: int | None = 0,
                         chat: bool = False) -> tuple[int | None, ...]:
        return (await coherence(model, passage, n, seed=seed, chat=chat)).scores
