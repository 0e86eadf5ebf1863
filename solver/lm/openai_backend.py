"""Any OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, Ollama) through ``openai``."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Sequence

from solver.lm.base import Completion, GenParams, LMError


class OpenAIBackend:
    """Completions (and chat) over the async ``openai`` client.

    The client retries 408/409/429/5xx and dropped connections with exponential backoff and
    honours Retry-After. When a server returns fewer than ``n`` choices (it ignores ``n``), the
    missing samples are requested separately, at once, with seeds seed+i.
    """

    supports_chat = True
    concurrent = True

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3) -> None:
        import openai

        self.model = model
        self.name = f"openai:{model}"
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._secret = key  # scrubbed from every error message
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            timeout=timeout, max_retries=max_retries)
        self._errors: tuple[type[BaseException], ...] = (openai.OpenAIError,)
        # Bounds every HTTP request, including the extra ones one call may fan out into (samples
        # a server ignored ``n`` for, one echo request per scored continuation). LMClient sets it
        # to its own concurrency; None means no bound beyond the caller's.
        self.request_slots: asyncio.Semaphore | None = None
        self._ignores_n = False  # set once the server answered fewer than ``n`` choices

    async def _create(self, create: Any, **kwargs: Any) -> Any:
        if self.request_slots is None:
            return await create(**kwargs)
        async with self.request_slots:
            return await create(**kwargs)

    async def _one(self, prompt: str, params: GenParams, n: int, seed: int | None) -> Completion:
        kwargs: dict[str, Any] = {"model": self.model, "n": n, "temperature": params.temperature,
                                  "max_tokens": params.max_tokens}
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if seed is not None:
            kwargs["seed"] = seed
        if params.logprobs is not None:
            if params.chat:
                kwargs["logprobs"] = True
                if params.logprobs > 0:
                    kwargs["top_logprobs"] = params.logprobs
            else:
                kwargs["logprobs"] = params.logprobs
        try:
            if params.chat:
                resp = await self._create(self._client.chat.completions.create,
                                          messages=[{"role": "user", "content": prompt}], **kwargs)
                texts = [c.message.content or "" for c in resp.choices]
            else:
                resp = await self._create(self._client.completions.create, prompt=prompt, **kwargs)
                texts = [c.text or "" for c in resp.choices]
            logprobs = [_total_logprob(c) for c in resp.choices] if params.logprobs is not None else []
        except self._errors as exc:
            raise LMError(_safe_message(exc, self._secret)) from None
        except _MALFORMED as exc:  # a body that is not JSON, or JSON of the wrong shape
            raise LMError(_safe_message(exc, self._secret, "malformed response from server")) from None
        if not all(isinstance(t, str) for t in texts):
            raise LMError("malformed response from server: a choice's text is not a string")
        usage = getattr(resp, "usage", None)
        return Completion(texts=texts, prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
                          completion_tokens=_count(getattr(usage, "completion_tokens", 0)), logprobs=logprobs)

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        if self._ignores_n and params.n > 1:  # learned earlier: ask for every sample at once
            out = Completion(texts=[])
        else:
            out = await self._one(prompt, params, params.n, params.seed)
            self._ignores_n = self._ignores_n or len(out.texts) < params.n
        # The missing samples are independent requests, so they go out at once (within ``request_slots``).
        missing = range(len(out.texts), params.n)
        extra = await asyncio.gather(*(self._one(prompt, params, 1, None if params.seed is None else params.seed + i)
                                       for i in missing))
        for more in extra:
            if not more.texts:
                raise LMError("server returned no choices")
            out.texts.append(more.texts[0])
            if params.logprobs is not None:
                out.logprobs.append(more.logprobs[0] if more.logprobs else None)
            out.prompt_tokens += more.prompt_tokens
            out.completion_tokens += more.completion_tokens
        out.texts = out.texts[: params.n]
        out.logprobs = out.logprobs[: params.n]
        return out

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        """Echoed log-probabilities (legacy completions with echo=True, as vLLM serves them)."""
        async def one(cont: str) -> tuple[float, int]:
            try:
                resp = await self._create(self._client.completions.create, model=self.model,
                                          prompt=prompt + cont, max_tokens=0, echo=True, logprobs=0)
                lp = resp.choices[0].logprobs if resp.choices else None
                if lp is None or lp.token_logprobs is None or lp.text_offset is None:
                    raise LMError("server does not return echoed log-probabilities")
                total = float(sum(v for off, v in zip(lp.text_offset, lp.token_logprobs, strict=False)
                                  if v is not None and off >= len(prompt)))
            except self._errors as exc:
                raise LMError(_safe_message(exc, self._secret)) from None
            except _MALFORMED as exc:
                raise LMError(_safe_message(exc, self._secret, "malformed response from server")) from None
            return total, _count(getattr(getattr(resp, "usage", None), "prompt_tokens", 0))

        # One echo request per continuation; they are independent, so they go out at once.
        done = await asyncio.gather(*(one(c) for c in continuations))
        return [s for s, _ in done], sum(t for _, t in done)

    async def close(self) -> None:
        await self._client.close()


# What reading a non-JSON body (ValueError) or JSON of the wrong shape raises: a failed call.
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)


def _count(value: object) -> int:
    """A token count from a server; anything but a non-negative integer counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _total_logprob(choice: Any) -> float | None:
    """Sum of the sampled tokens' log-probabilities of one choice (completions or chat shape);
    None when the server sent none."""
    lp = getattr(choice, "logprobs", None)
    if lp is None:
        return None
    values = getattr(lp, "token_logprobs", None)
    if values is None and getattr(lp, "content", None) is not None:
        values = [getattr(t, "logprob", None) for t in lp.content]
    if not isinstance(values, list):
        return None
    nums = [float(v) for v in values if isinstance(v, (int, float))]
    return sum(nums) if nums else None


def _safe_message(exc: BaseException, secret: str | None = None, prefix: str = "") -> str:
    """An error line without any secret: the API key (given, or from the environment) is never
    echoed, even when a server quotes it back."""
    msg = f"{prefix + ': ' if prefix else ''}{type(exc).__name__}: {exc}"
    for key in (secret, os.environ.get("OPENAI_API_KEY")):
        if key and key != "not-needed":
            msg = msg.replace(key, "***")
    return msg.splitlines()[0][:300] if msg.strip() else type(exc).__name__
