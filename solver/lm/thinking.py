"""Reasoning models: their thinking kept apart from their answer, and the ``--thinking`` setting.

Reasoning models (DeepSeek-R1 distills, Qwen3, gpt-oss, OpenAI's o-series) think before they
answer. Servers hand the thinking back in one of two ways: in a field of its own beside the
answer (``reasoning_content``, vLLM's newer ``reasoning``), or inside the text, as a
``<think>...</think>`` block before the answer. The block may lack its opening tag (templates
that open it in the prompt, as DeepSeek-R1's does) or its closing tag (``max_tokens`` cut the
thinking short: then there is no answer at all). ``split_thinking`` separates the two, so that
nothing a model thought is ever parsed as a thought or an answer.

``--thinking`` asks the server to turn thinking off or to bound it, with the request fields the
servers document: ``chat_template_kwargs`` (``enable_thinking``, ``thinking_budget``: vLLM, SGLang
and llama.cpp's server pass them to the model's chat template), ``thinking_token_budget`` (vLLM)
and ``reasoning_effort`` (OpenAI, and SGLang/vLLM for models that take it). A server that refuses
these fields gets the request again without them, and the run says so once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["THINKING_CHOICES", "Thinking", "parse_thinking", "split_thinking"]

THINKING_CHOICES = "auto, on, off, low, medium, high or a number of tokens"
_OPEN, _CLOSE = "<think>", "</think>"
_LEADING_OPEN = re.compile(r"\A\s*<think>", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str, str]:
    """(thinking, answer) of one model output. Only a block at the very start is thinking: a
    ``<think>`` later in the text is the answer's own business (and the gate's)."""
    m = _LEADING_OPEN.match(text)
    if m:
        rest = text[m.end():]
        close = rest.lower().find(_CLOSE)
        if close < 0:  # cut off while thinking: no answer
            return rest.strip(), ""
        return rest[:close].strip(), rest[close + len(_CLOSE):].lstrip()
    close = text.lower().find(_CLOSE)
    if close >= 0 and _OPEN not in text[:close].lower():  # opened by the template, in the prompt
        return text[:close].strip(), text[close + len(_CLOSE):].lstrip()
    return "", text


@dataclass(frozen=True, slots=True)
class Thinking:
    """``mode``: auto (send nothing: the server's default), on, off, low/medium/high (an effort)
    or budget (at most ``tokens`` tokens of thinking)."""

    mode: str = "auto"
    tokens: int = 0

    def __str__(self) -> str:
        return str(self.tokens) if self.mode == "budget" else self.mode

    def fields(self) -> dict[str, object]:
        """The request-body fields that ask a chat endpoint for this ({} for auto)."""
        if self.mode in ("on", "off"):
            return {"chat_template_kwargs": {"enable_thinking": self.mode == "on"}}
        if self.mode in ("low", "medium", "high"):
            return {"reasoning_effort": self.mode}
        if self.mode == "budget":
            return {"chat_template_kwargs": {"thinking_budget": self.tokens}, "thinking_token_budget": self.tokens}
        return {}

    def extra_tokens(self) -> int:
        """Tokens added to a request's ``max_tokens`` so that thinking up to the bound leaves the
        answer the room it was given (the server counts thinking against ``max_tokens``)."""
        return self.tokens if self.mode == "budget" else 0


def parse_thinking(value: str) -> Thinking:
    """``--thinking``'s value; ValueError (one line) for anything else."""
    v = value.strip().lower()
    if v in ("auto", "on", "off", "low", "medium", "high"):
        return Thinking(v)
    if v.isdigit() and v.isascii():
        n = int(v)
        if n == 0:
            return Thinking("off")
        if n <= 1_000_000:
            return Thinking("budget", n)
    raise ValueError(f"bad --thinking {value!r}: use {THINKING_CHOICES} (at most 1000000)")
