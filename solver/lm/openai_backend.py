"""Any OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, Ollama) through ``openai``."""

from __future__ import annotations

import os
from typing import Any, Sequence

from solver.lm.base import Completion, GenParams, LMError


class OpenAIBackend:
    """Completions (and chat) over the async ``openai`` client.

    The client retries 408/409/429/5xx and dropped connections with exponential backoff and
    honours Retry-After. When a server returns fewer than ``n`` choices (it ignores ``n``), the
    missing samples are requested one by one with seeds seed+i.
    """

    supports_chat = True
    concurrent = True

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3) -> None:
        import openai

        self.model = model
        self.name = f"openai:{model}"
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            timeout=timeout, max_retries=max_retries)
        self._errors: tuple[type[BaseException], ...] = (openai.OpenAIError,)

    async def _one(self, prompt: str, params: GenParams, n: int, seed: int | None) -> Completion:
        kwargs: dict[str, Any] = {"model": self.model, "n": n, "temperature": params.temperature,
                                  "max_tokens": params.max_tokens}
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if seed is not None:
            kwargs["seed"] = seed
        try:
            if params.chat:
                resp = await self._client.chat.completions.create(
                    messages=[{"role": "user", "content": prompt}], **kwargs)
                texts = [c.message.content or "" for c in resp.choices]
            else:
                resp = await self._client.completions.create(prompt=prompt, **kwargs)
                texts = [c.text or "" for c in resp.choices]
        except self._errors as exc:
            raise LMError(_safe_message(exc)) from None
        usage = getattr(resp, "usage", None)
        return Completion(texts=texts,
                          prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          completion_tokens=getattr(usage, "completion_tokens", 0) or 0)

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        out = await self._one(prompt, params, params.n, params.seed)
        while len(out.texts) < params.n:
            i = len(out.texts)
            seed = None if params.seed is None else params.seed + i
            more = await self._one(prompt, params, 1, seed)
            if not more.texts:
                raise LMError("server returned no choices")
            out.texts.extend(more.texts)
            out.prompt_tokens += more.prompt_tokens
            out.completion_tokens += more.completion_tokens
        out.texts = out.texts[: params.n]
        return out

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        """Echoed log-probabilities (legacy completions with echo=True, as vLLM serves them)."""
        scores, tokens = [], 0
        for cont in continuations:
            try:
                resp = await self._client.completions.create(
                    model=self.model, prompt=prompt + cont, max_tokens=0, echo=True, logprobs=0)
            except self._errors as exc:
                raise LMError(_safe_message(exc)) from None
            lp = resp.choices[0].logprobs if resp.choices else None
            if lp is None or lp.token_logprobs is None or lp.text_offset is None:
                raise LMError("server does not return echoed log-probabilities")
            total = sum(v for off, v in zip(lp.text_offset, lp.token_logprobs, strict=False)
                        if v is not None and off >= len(prompt))
            scores.append(float(total))
            tokens += getattr(resp.usage, "prompt_tokens", 0) or 0
        return scores, tokens

    async def close(self) -> None:
        await self._client.close()


def _safe_message(exc: BaseException) -> str:
    """An error line without any secret: the API key is never echoed."""
    msg = f"{type(exc).__name__}: {exc}"
    key = os.environ.get("OPENAI_API_KEY")
    if key:
        msg = msg.replace(key, "***")
    return msg.splitlines()[0][:300] if msg else type(exc).__name__
