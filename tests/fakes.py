"""Scripted model backends for tests: deterministic, no network, no weights."""

from __future__ import annotations

from typing import Callable, Sequence

from solver.lm.base import Completion, GenParams, LMError


class ScriptedBackend:
    """Answers each request with ``respond(prompt, params, sample_index)``; scores with ``scorer``."""

    supports_chat = True
    concurrent = True

    def __init__(self, respond: Callable[[str, GenParams, int], str] | None = None,
                 scorer: Callable[[str, str], float] | None = None, name: str = "scripted") -> None:
        self.respond = respond or (lambda p, g, i: "")
        self.scorer = scorer
        self.model = name
        self.name = f"fake:{name}"
        self.requests: list[tuple[str, GenParams]] = []
        self.score_requests: list[tuple[str, tuple[str, ...]]] = []

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        self.requests.append((prompt, params))
        texts = [self.respond(prompt, params, i) for i in range(params.n)]
        return Completion(texts, prompt_tokens=len(prompt.split()),
                          completion_tokens=sum(len(t.split()) for t in texts))

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        self.score_requests.append((prompt, tuple(continuations)))
        if self.scorer is None:
            raise LMError("this fake cannot score")
        return [self.scorer(prompt, c) for c in continuations], len(prompt.split())

    async def close(self) -> None:
        return None


class ReplayOnly(ScriptedBackend):
    """Looks like the embedded model to the record/replay cache, but fails if a request gets
    through, so a test proves that a run was served entirely from recorded outputs."""

    def __init__(self) -> None:
        from solver.lm.local import DEFAULT_MODEL

        super().__init__(name=DEFAULT_MODEL)
        self.name = f"local:{DEFAULT_MODEL}"

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        raise AssertionError("replay reached the model")

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        raise AssertionError("replay reached the model")
