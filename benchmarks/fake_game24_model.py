"""A deterministic in-process stand-in model for Game-of-24 prompts, for measurements that
count calls or time the client (``perf_concurrency.py``, ``perf_memo.py``): no model, no server."""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Sequence

from solver.lm.base import Completion, GenParams
from solver.task_capabilities import HasOracle, LegalMoves, find
from tasks.game24 import Game24
from tasks.game24.task import State24

_INPUT_RE = re.compile(r"(?:Input|Numbers):\s*([-\d/ .]+)\s*$", re.MULTILINE)


def game24_responder(k: int) -> Callable[[str, int], str]:
    """A deterministic stand-in model for Game-of-24 prompts: ``propose`` gets the first ``k``
    legal steps of the last input (rotated by the sample index), ``value`` gets the exact verdict
    (sure / impossible), anything else an empty line."""
    task = Game24()

    def respond(prompt: str, index: int) -> str:
        found = _INPUT_RE.findall(prompt)
        if not found:
            return ""
        text = found[-1].strip()
        nums = tuple(sorted(Fraction(x) for x in text.split()))
        state = State24(nums, tuple(str(n) for n in nums))
        if "Judgement:" in prompt[-20:]:
            return " sure" if find(task, HasOracle).oracle(state) else " impossible"
        steps = [t.text for t in find(task, LegalMoves).legal_thoughts(state)]
        if not steps:
            return ""
        r = index % len(steps)
        return "\n".join((steps[r:] + steps[:r])[:k]) + "\n"

    return respond


class FakeBackend:
    """In-process, instant, deterministic model (concurrent like a server) for counting calls."""

    supports_chat = True
    concurrent = True

    def __init__(self, respond: Callable[[str, int], str]) -> None:
        self.respond = respond
        self.model = "fake-game24"
        self.name = "fake:game24"
        self.requests = 0

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        self.requests += 1
        texts = [self.respond(prompt, (params.seed or 0) + i) for i in range(params.n)]
        return Completion(texts, len(prompt.split()), sum(len(t.split()) for t in texts))

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        self.requests += 1
        # A fixed pseudo-likelihood: shorter continuations are likelier (deterministic, no model).
        return [-float(len(c)) for c in continuations], len(prompt.split())

    async def close(self) -> None:
        return None
