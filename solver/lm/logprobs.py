"""Reading log-probabilities out of a server's answer, in both forms servers send them.

- **legacy** (OpenAI's completions, vLLM, SGLang, llama-cpp-python): ``logprobs.tokens``,
  ``token_logprobs`` and ``top_logprobs``, the last a list with one ``{token: logprob}`` dict per
  generated token;
- **content** (OpenAI's chat completions, and llama.cpp's own server on ``/v1/completions`` too):
  ``logprobs.content``, a list with one entry per generated token, each ``{token, logprob, bytes,
  top_logprobs: [{token, logprob, bytes, id}, ...]}``.

The openai client hands the content form over as plain dicts on a completion (its completions
model does not know the field) and as objects on a chat answer; both are read here. Nothing here
raises on a malformed answer: it returns None, and the caller says what the server failed to send.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["first_top", "logprobs_form", "total_logprob"]


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        value = (getattr(obj, "model_extra", None) or {}).get(name)
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if not math.isnan(value) else None


def logprobs_form(logprobs: Any) -> str | None:
    """``"legacy"``, ``"content"``, or None (no log-probabilities in either form)."""
    if logprobs is None:
        return None
    if isinstance(_field(logprobs, "top_logprobs"), list) or isinstance(_field(logprobs, "token_logprobs"), list):
        return "legacy"
    return "content" if isinstance(_field(logprobs, "content"), list) else None


def first_top(logprobs: Any) -> dict[str, float] | None:
    """The alternatives for the first generated token, ``{token text: log-probability}``, from
    either form; None where the answer carries none. A token text listed twice (two token ids that
    print alike) keeps its larger log-probability."""
    if logprobs is None:
        return None
    legacy = _field(logprobs, "top_logprobs")
    if isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        out = {str(t): v for t, raw in legacy[0].items() if t and (v := _number(raw)) is not None}
        return out or None
    content = _field(logprobs, "content")
    if not isinstance(content, list) or not content:
        return None
    alts = _field(content[0], "top_logprobs")
    if not isinstance(alts, list):
        return None
    found: dict[str, float] = {}
    for alt in alts:
        token, value = _field(alt, "token"), _number(_field(alt, "logprob"))
        if isinstance(token, str) and token and value is not None:
            found[token] = max(value, found.get(token, -math.inf))
    return found or None


def total_logprob(logprobs: Any) -> float | None:
    """The sum of the generated tokens' log-probabilities, from either form; None where the answer
    carries none."""
    if logprobs is None:
        return None
    values = _field(logprobs, "token_logprobs")
    if not isinstance(values, list):
        content = _field(logprobs, "content")
        values = [_field(t, "logprob") for t in content] if isinstance(content, list) else None
    if not isinstance(values, list):
        return None
    nums = [n for n in map(_number, values) if n is not None]
    return sum(nums) if nums else None
