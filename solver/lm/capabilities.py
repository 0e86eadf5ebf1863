"""What an OpenAI-compatible server supports, found out with small probe requests.

Servers differ: llama.cpp's server ignores ``n`` and echoes prompt log-probabilities; vLLM honours
``n`` and echoes; OpenAI's current API honours ``n`` but no longer echoes, and lists at most 5 (20 in
chat) top log-probabilities. Each feature is probed the first time something needs it (one or two
requests of a token or a few) and cached per (base URL, model) for the life of the process: a
server's abilities, not a run's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from solver.lm.base import LMError, ServerUnavailable

__all__ = ["Capabilities", "FEATURES", "GRAMMAR_WAYS", "PROBE_PROMPT", "TOP_K", "forget", "grammar_body", "probe"]

FEATURES = ("chat", "n", "echo", "top_logprobs", "seed", "grammar")
PROBE_PROMPT = "Count: 1 2 3 4"
# Scoring by the top log-probabilities of one generated token: how many alternatives to ask for
# (probed here first; the backend asks for as many when the probe found no smaller limit).
TOP_K = 20
# A grammar whose one string no model writes after PROBE_PROMPT unless it is made to.
PROBE_GRAMMAR_TEXT = "zebra zebra"
PROBE_GRAMMAR = f'root ::= "{PROBE_GRAMMAR_TEXT}"\n'
# How a server takes a GBNF grammar, tried in this order: llama.cpp's server (``grammar``), vLLM's
# structured outputs (``structured_outputs.grammar``, vLLM 0.10.2 and later) and vLLM's older
# ``guided_grammar``. Each is sent in the request body beside the OpenAI fields.
GRAMMAR_WAYS = ("grammar", "structured_outputs", "guided_grammar")


class _Prober(Protocol):
    base_url: str
    model: str
    _client: Any

    async def request(self, what: str, create: Any, **kwargs: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """None: not probed (nothing needed it yet). ``top_logprobs``: how many alternatives per
    generated token the server lists (0: none). ``grammar``: the request field through which the
    server constrains decoding to a GBNF grammar (one of GRAMMAR_WAYS; False: none)."""

    chat: bool | None = None
    n: bool | None = None
    echo: bool | None = None
    top_logprobs: int | None = None
    seed: bool | None = None
    grammar: str | bool | None = None

    def body(self, grammar: str) -> dict[str, object]:
        """The request-body fields that carry ``grammar`` to this server ({} where it has none)."""
        return grammar_body(self.grammar, grammar)

    def lines(self) -> list[str]:
        what = {
            "chat": "chat completions (--chat)",
            "n": "several samples per request (n > 1); otherwise one request per sample",
            "echo": "prompt log-probabilities (echo): exact scoring of any continuation",
            "top_logprobs": "top log-probabilities of generated tokens",
            "seed": "seeds (same seed, same sample)",
            "grammar": "constrained decoding to a grammar of legal thoughts (GBNF)",
        }
        out = []
        for name in FEATURES:
            value = getattr(self, name)
            if value is None:
                mark = "not probed"
            elif name == "top_logprobs":
                mark = f"yes (top {value})" if value else "no"
            elif name == "grammar":
                mark = f"yes ({value})" if value else "no"
            else:
                mark = "yes" if value else "no"
            out.append(f"  {name:<13} {mark:<14} {what[name]}")
        return out

    def to_json(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in FEATURES}


_CACHE: dict[tuple[str, str], dict[str, object]] = {}


def forget() -> None:
    """Drop every cached probe result (tests start servers that reuse ports)."""
    _CACHE.clear()


async def probe(backend: _Prober, features: Sequence[str] = FEATURES) -> Capabilities:
    """Probe the features not yet known for this (base URL, model); return all known ones.
    A server that cannot be reached raises (ServerUnavailable); a request the server refuses or
    answers in another shape means the feature is missing."""
    known = _CACHE.setdefault((backend.base_url, backend.model), {})
    for name in features:
        if name in known:
            continue
        try:
            known[name] = await _PROBES[name](backend)
        except ServerUnavailable:
            raise
        except (LMError, ValueError, TypeError, AttributeError, KeyError, IndexError):
            known[name] = 0 if name == "top_logprobs" else False
    return Capabilities(**{k: v for k, v in known.items() if k in FEATURES})  # type: ignore[arg-type]


async def _chat(b: _Prober) -> bool:
    resp = await b.request("probe chat", b._client.chat.completions.create, model=b.model, max_tokens=2,
                           temperature=0.0, messages=[{"role": "user", "content": "Say 1."}])
    return bool(resp.choices) and isinstance(resp.choices[0].message.content, (str, type(None)))


async def _n(b: _Prober) -> bool:
    resp = await b.request("probe n", b._client.completions.create, model=b.model, prompt=PROBE_PROMPT,
                           max_tokens=1, n=2, temperature=1.0)
    return isinstance(resp.choices, list) and len(resp.choices) >= 2


async def _echo(b: _Prober) -> bool:
    resp = await b.request("probe echo", b._client.completions.create, model=b.model, prompt=PROBE_PROMPT,
                           max_tokens=1, echo=True, logprobs=0, temperature=0.0)
    lp = resp.choices[0].logprobs if resp.choices else None
    offsets = getattr(lp, "text_offset", None)
    values = getattr(lp, "token_logprobs", None)
    # The prompt's own tokens must be there: offsets inside the prompt, with numbers for all but the first.
    if not isinstance(offsets, list) or not isinstance(values, list) or len(offsets) != len(values):
        return False
    inside = [v for off, v in zip(offsets, values, strict=False) if off < len(PROBE_PROMPT)]
    return len(inside) >= 2 and any(isinstance(v, (int, float)) for v in inside)


async def _top_logprobs(b: _Prober) -> int:
    for k in (TOP_K, 5):  # OpenAI's completions list at most 5
        try:
            resp = await b.request("probe top_logprobs", b._client.completions.create, model=b.model,
                                   prompt=PROBE_PROMPT, max_tokens=1, logprobs=k, temperature=0.0)
        except ServerUnavailable:
            raise
        except LMError:
            continue
        lp = resp.choices[0].logprobs if resp.choices else None
        tops = getattr(lp, "top_logprobs", None)
        if isinstance(tops, list) and tops and isinstance(tops[0], dict) and len(tops[0]) >= 2:
            return min(k, len(tops[0]))
    return 0


async def _seed(b: _Prober) -> bool:
    texts = []
    for _ in range(2):
        resp = await b.request("probe seed", b._client.completions.create, model=b.model, prompt=PROBE_PROMPT,
                               max_tokens=8, seed=1234, temperature=1.0)
        texts.append(resp.choices[0].text)
    return isinstance(texts[0], str) and texts[0] == texts[1]


def grammar_body(way: str | bool | None, grammar: str) -> dict[str, object]:
    """The request-body fields that send ``grammar`` the ``way`` a server takes it."""
    if way == "grammar":
        return {"grammar": grammar}
    if way == "structured_outputs":
        return {"structured_outputs": {"grammar": grammar}}
    if way == "guided_grammar":
        return {"guided_grammar": grammar}
    return {}


async def _grammar(b: _Prober) -> str | bool:
    """The first of GRAMMAR_WAYS whose answer is the probe grammar's one string (a server that
    ignores the field writes something else; one that refuses it answers an error)."""

    for way in GRAMMAR_WAYS:
        try:
            resp = await b.request("probe grammar", b._client.completions.create, model=b.model,
                                   prompt=PROBE_PROMPT, max_tokens=8, temperature=0.0,
                                   extra_body=grammar_body(way, PROBE_GRAMMAR))
        except ServerUnavailable:
            raise
        except LMError:
            continue
        text = resp.choices[0].text if resp.choices else None
        if isinstance(text, str) and text.strip() == PROBE_GRAMMAR_TEXT:
            return way
    return False


_PROBES: dict[str, Any] = {"chat": _chat, "n": _n, "echo": _echo, "top_logprobs": _top_logprobs, "seed": _seed,
                           "grammar": _grammar}
