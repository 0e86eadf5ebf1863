"""A scripted model for any task: a Backend whose answers are a deterministic function of a seed
and the request, mixing legal thoughts, illegal ones and garbage, and failing some calls.

It knows the state behind a prompt from the task's recording proxy (``RecordingTask``). Legal
thoughts come from the task's legal-move enumeration (``legal_thoughts``) when it gives any, else
from the script's ``pool`` of thought texts (drawn by a strategy the user gives), those the gate
accepts at that state. Illegal thoughts are legal ones mutated, and legal thoughts of other states.
Value, vote and choice prompts get seeded labels and numbers (and some garbage); scoring
requests get seeded log-probabilities.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from solver.lm.base import Completion, GenParams, LMError
from solver.task import Thought
from solver.task_capabilities import LegalMoves, find
from solver.testing.recording import RecordingTask
from verifiers.verdict import Invalid

GARBAGE = ("", "hmm", "= =", "1/0", '{"a": 1}', "Input: 4 4", "\u0663 + \u0664 = \u0667", "(((", "NaN",
           "The best choice is", "-" * 30, "sure", "h1. ", "[[1, 2], [3]]", "Answer:", "\t")
LABELS = ("sure", "likely", "impossible", "maybe")


def seeded(*parts: object) -> int:
    """A 64-bit number from ``parts``, the same on every machine and run (no ``hash()``)."""
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "big")


@dataclass(frozen=True, slots=True)
class Script:
    """How a scripted model answers: ``legal``, ``illegal`` and ``garbage`` weigh the kinds of
    thought lines; ``fail_rate`` is the share of requests that fail (``LMError``); a proposal
    has up to ``max_lines`` lines; ``pool`` holds thought texts for tasks without enumeration."""

    seed: int = 0
    legal: float = 0.6
    illegal: float = 0.25
    garbage: float = 0.15
    fail_rate: float = 0.0
    max_lines: int = 5
    pool: tuple[str, ...] = ()


class ScriptedModel:
    """A ``solver.lm.base.Backend`` answering from ``script``; see the module docstring.
    ``render`` turns a thought's text into the line a model would write (default: as is).
    ``requests`` and ``score_requests`` list what reached it, failed calls included."""

    supports_chat = True
    concurrent = True

    def __init__(self, task: RecordingTask, script: Script,
                 render: Callable[[str], str] | None = None) -> None:
        self.task, self.script = task, script
        self.render = render or (lambda text: text)
        self.model = f"script-{script.seed}"
        self.name = f"scripted:{self.model}"
        self.requests: list[tuple[str, GenParams]] = []
        self.score_requests: list[tuple[str, tuple[str, ...]]] = []
        self._legal: dict[int, tuple[Any, list[str]]] = {}

    # ---- the Backend protocol -----------------------------------------------------------------

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        await asyncio.sleep(0)  # let concurrent requests interleave, as a real server does
        self.requests.append((prompt, params))
        if self.fails(prompt, params.key()):
            raise LMError("scripted failure")
        texts = [self.answer(prompt, params, i) for i in range(params.n)]
        return Completion(texts, prompt_tokens=len(prompt.split()),
                          completion_tokens=sum(len(t.split()) for t in texts))

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        await asyncio.sleep(0)
        self.score_requests.append((prompt, tuple(continuations)))
        if self.fails(prompt, list(continuations)):
            raise LMError("scripted failure")
        return [-(seeded(self.script.seed, prompt, c) % 1000) / 100.0 for c in continuations], len(prompt.split())

    async def close(self) -> None:
        return None

    # ---- answers -------------------------------------------------------------------------------

    def fails(self, prompt: str, key: object) -> bool:
        return (seeded(self.script.seed, "fail", prompt, key) % 10_000) / 10_000 < self.script.fail_rate

    def cost(self, prompt: str, params: GenParams) -> int:
        """Tokens one request costs (what ``complete`` reports), to bound budget overruns."""
        return len(prompt.split()) + sum(len(self.answer(prompt, params, i).split()) for i in range(params.n))

    def answer(self, prompt: str, params: GenParams, i: int) -> str:
        rng = random.Random(seeded(self.script.seed, prompt, params.key(), i))
        asked = self.task.prompts.get(prompt)
        kind = asked.kind if asked is not None else ""
        if kind in ("propose", "sample") and asked is not None and asked.states:
            state = asked.states[0]
            count = 1 if kind == "sample" else rng.randint(0, self.script.max_lines)
            return "\n".join(self.line(rng, state) for _ in range(count))
        if kind == "vote" and asked is not None:
            return rng.choice([f"The best choice is {rng.randint(0, asked.options + 1)}", rng.choice(GARBAGE)])
        if kind == "choice" and asked is not None:
            return rng.choice([str(rng.randint(0, asked.options + 1)), rng.choice(GARBAGE)])
        # value prompts and any prompt of the task's own (e.g. a per-clue judgement)
        return " " + rng.choice([*LABELS, *LABELS, rng.choice(GARBAGE)])

    def line(self, rng: random.Random, state: Any) -> str:
        s = self.script
        r = rng.random() * ((s.legal + s.illegal + s.garbage) or 1.0)
        legal = self.legal_texts(state)
        if r < s.legal and legal:
            return self.render(rng.choice(legal))
        if r < s.legal + s.illegal:
            others = [t for st_, texts in self._legal.values() if st_ is not state for t in texts]  # in the order met
            if others and rng.random() < 0.3:
                return self.render(rng.choice(others))  # legal somewhere else, usually not here
            base = rng.choice(legal or list(s.pool) or ["1 + 1 = 2"])
            return self.render(mutate(base, rng))
        return rng.choice(GARBAGE) if rng.random() < 0.7 else _noise(rng)

    def legal_texts(self, state: Any) -> list[str]:
        """Legal thoughts at ``state``: the task's enumeration, else the pool's texts that pass the
        gate there (computed on the wrapped task, so nothing is recorded as search's)."""
        got = self._legal.get(id(state))
        if got is not None and got[0] is state:
            return got[1]
        inner = self.task.inner
        texts: list[str] = []
        moves = find(inner, LegalMoves)
        if moves is not None:
            texts = [t.text for t in moves.legal_thoughts(state)]
        if not texts:
            texts = [t for t in self.script.pool if not isinstance(inner.check(state, Thought(t)), Invalid)]
        self._legal[id(state)] = (state, texts)
        return texts


def mutate(text: str, rng: random.Random) -> str:
    """A small random edit of ``text``: a character changed, dropped or doubled, two words
    swapped, a word dropped, or junk appended."""
    if not text:
        return rng.choice(GARBAGE)
    op = rng.randrange(6)
    k = rng.randrange(len(text))
    if op == 0:
        return text[:k] + rng.choice("0123456789abcxyzXYZ+-*/()= ") + text[k + 1:]
    if op == 1:
        return text[:k] + text[k + 1:]
    if op == 2:
        return text[:k] + text[k] + text[k:]
    words = text.split(" ")
    if op == 3 and len(words) > 1:
        a, b = rng.sample(range(len(words)), 2)
        words[a], words[b] = words[b], words[a]
        return " ".join(words)
    if op == 4 and len(words) > 1:
        del words[rng.randrange(len(words))]
        return " ".join(words)
    return text + rng.choice([" 7", " x", "!", " (left: 1)", " and"])


def _noise(rng: random.Random) -> str:
    return "".join(rng.choice("abc XYZ 0123456789+-*/=().,:|_\u00e9\u0663") for _ in range(rng.randint(0, 24)))
