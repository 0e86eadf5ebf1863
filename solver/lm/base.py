"""Types shared by every LM backend."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

__all__ = ["Backend", "Completion", "EndpointDown", "GenParams", "LMError", "ServerTooSlow",
           "ServerUnavailable"]


class LMError(Exception):
    """A model call failed for good (after retries) or a backend cannot do what was asked.
    ``status``: the HTTP status a server answered with, where there was one."""

    status: int | None = None


class ServerUnavailable(LMError):
    """The server cannot serve this run: a failure that ends it (exit 3) instead of being recorded
    as one failed call, because every later call would fail, or stall, the same way."""


class ServerTooSlow(ServerUnavailable):
    """A request timed out on every try, with the timeout doubled each time."""


class EndpointDown(ServerUnavailable):
    """The server refused connections on every try."""


@dataclass(frozen=True, slots=True)
class GenParams:
    """Sampling parameters of one request. ``n`` independent samples; sample i uses seed+i.
    ``logprobs`` (None or the number of top alternatives) asks for each sample's log-probability.
    ``grammar``: GBNF text (llama.cpp's grammar format) the decoder should follow where the backend
    can constrain decoding; an optimisation only, since the gate still checks every thought."""

    n: int = 1
    temperature: float = 0.7
    max_tokens: int = 128
    stop: tuple[str, ...] = ()
    seed: int | None = 0
    logprobs: int | None = None
    chat: bool = False
    grammar: str | None = None

    def key(self) -> dict[str, object]:
        """Everything but ``n`` (the sample index is keyed separately). The grammar is keyed only
        when there is one, so a constrained and an unconstrained request never share an entry and
        the keys of requests recorded before grammars existed stay the same."""
        key: dict[str, object] = {"temperature": self.temperature, "max_tokens": self.max_tokens,
                                  "stop": list(self.stop), "seed": self.seed, "logprobs": self.logprobs,
                                  "chat": self.chat}
        if self.grammar is not None:
            key["grammar"] = self.grammar
        return key


@dataclass(slots=True)
class Completion:
    """Texts of the samples of one request and the tokens it used; ``logprobs`` holds each
    sample's total log-probability when the request asked for them (None where unknown).
    ``thinking``: what a reasoning model thought before each answer ("" where nothing; empty when
    the backend has no reasoning models), never part of ``texts``; ``reasoning_tokens``: the
    part of ``completion_tokens`` spent thinking."""

    texts: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    logprobs: list[float | None] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    reasoning_tokens: int = 0


class Backend(Protocol):
    """A model behind some transport. ``name`` is 'backend:model'."""

    name: str
    model: str
    supports_chat: bool
    concurrent: bool

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        """``params.n`` samples of a continuation (or a chat reply when ``params.chat``)."""

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        """Sum of log-probabilities of each continuation after ``prompt``, and tokens read."""

    async def close(self) -> None:
        """Release network or model resources."""
