"""What an OpenAI-compatible server supports, found out with small probe requests.

Servers differ: llama.cpp's server ignores ``n`` and echoes prompt log-probabilities; vLLM honours
``n`` and echoes; OpenAI's current API honours ``n`` but no longer echoes, and lists at most 5 (20 in
chat) top log-probabilities. Each feature is probed the first time something needs it (one or two
requests of a token or a few) and cached per (base URL, model) for the life of the process: a
server's abilities, not a run's state.
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from solver.lm.base import LMError, ServerUnavailable
from solver.lm.logprobs import first_top, logprobs_form

__all__ = ["Capabilities", "FEATURES", "GRAMMAR_SLOW", "GRAMMAR_WAYS", "PROBE_PROMPT", "STREAM_TOKENS", "TOP_K",
           "forget", "grammar_body", "probe", "server_root", "stream_top"]

FEATURES = ("chat", "n", "echo", "top_logprobs", "stream_logprobs", "seed", "grammar", "parallel", "costs",
            "grammar_cost")
# Where a streamed answer's prompt tokens are counted: the stream's own ``usage`` (OpenAI, vLLM
# with ``stream_options``), or llama-cpp-python's tokenizer route beside /v1 (its streams carry no
# usage). A server with neither gets no streamed scoring: budgets count every prompt token.
STREAM_TOKENS = ("usage", "/extras/tokenize/count")
PROBE_PROMPT = "Count: 1 2 3 4"
# Scoring costs are measured on a short prompt (about twenty tokens): a server whose echo works per
# prompt token (llama.cpp's builds log-probabilities over the whole vocabulary for each) shows it
# even there, and a server that does not cancel an abandoned request (llama-cpp-python's) is kept
# busy with it for seconds, not minutes.
COST_PROMPT = "Evaluate if given numbers can reach 24 (sure/likely/impossible)\n4 4 10\n"
# A server answering this fast needs no limit on requests in flight: queueing there costs nothing,
# and timings this short are mostly noise.
FAST_ANSWER = 0.05
# Scoring by the top log-probabilities of one generated token: how many alternatives to ask for
# (probed here first; the backend asks for as many when the probe found no smaller limit).
TOP_K = 20
# A grammar whose one string no model writes after PROBE_PROMPT unless it is made to.
PROBE_GRAMMAR_TEXT = "zebra zebra"
PROBE_GRAMMAR = f'root ::= "{PROBE_GRAMMAR_TEXT}"\n'
# How a server takes a GBNF grammar, tried in this order: llama.cpp's server (``grammar``), vLLM's
# structured outputs (``structured_outputs.grammar``, vLLM 0.10.2 and later), vLLM's older
# ``guided_grammar`` and SGLang's ``ebnf`` (its default backend, XGrammar, reads GBNF). Each is
# sent in the request body beside the OpenAI fields.
GRAMMAR_WAYS = ("grammar", "structured_outputs", "guided_grammar", "ebnf")


class _Prober(Protocol):
    base_url: str
    model: str
    _client: Any

    async def request(self, what: str, create: Any, **kwargs: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """None: not probed (nothing needed it yet). ``top_logprobs``: how many alternatives per
    generated token the server lists (0: none). ``grammar``: the request field through which the
    server constrains decoding to a GBNF grammar (one of GRAMMAR_WAYS; False: none).
    ``parallel``: 1 when the server serves one request at a time, 2 when it serves at least two at
    once (``parallel_how``: how that was found). ``costs``: measured seconds of one request of each
    mode on COST_PROMPT: ``echo`` and ``top-logprobs`` (None: over the probe's bound, kept in
    ``echo_over``; absent: not supported). ``grammar_cost``: seconds per generated token without
    (``plain``) and with (``grammar``) a grammar, where the server takes grammars."""

    chat: bool | None = None
    n: bool | None = None
    echo: bool | None = None
    top_logprobs: int | None = None
    seed: bool | None = None
    grammar: str | bool | None = None
    parallel: int | None = None
    stream_logprobs: str | bool | None = None
    costs: dict[str, float | None] | None = None
    grammar_cost: dict[str, float] | None = None
    parallel_how: str = ""
    stream_logprobs_how: str = ""

    def body(self, grammar: str) -> dict[str, object]:
        """The request-body fields that carry ``grammar`` to this server ({} where it has none)."""
        return grammar_body(self.grammar, grammar)

    def lines(self) -> list[str]:
        what = {
            "chat": "chat completions (--chat)",
            "n": "several samples per request (n > 1); otherwise one request per sample",
            "echo": "prompt log-probabilities (echo): exact scoring of any continuation",
            "top_logprobs": "top log-probabilities of generated tokens",
            "stream_logprobs": "the same top log-probabilities in a streamed answer (llama-cpp-python computes "
                               "them for one token there, for every prompt token otherwise)",
            "seed": "seeds (same seed, same sample)",
            "grammar": "constrained decoding to a grammar of legal thoughts (GBNF)",
            "parallel": "requests served at once (1: one at a time, so tot sends one at a time)",
            "costs": "measured seconds of one scoring request of each mode",
            "grammar_cost": "measured seconds per generated token, without and with a grammar",
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
            elif name == "stream_logprobs":
                mark = (f"yes (tokens: {value})" if value else "no") + (f" ({self.stream_logprobs_how})"
                                                                       if self.stream_logprobs_how else "")
            elif name == "parallel":
                mark = ("one at a time" if value == 1 else "several") + (f" ({self.parallel_how})"
                                                                        if self.parallel_how else "")
            elif name in ("costs", "grammar_cost"):
                mark = ", ".join(f"{k} {_secs(v)}" for k, v in value.items()) or "none measured"
            else:
                mark = "yes" if value else "no"
            out.append(f"  {name:<13} {mark:<14} {what[name]}")
        return out

    def to_json(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in FEATURES}


def _secs(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g} s"


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
            got = await _PROBES[name](backend)
            if name in ("parallel", "stream_logprobs"):
                known[f"{name}_how"] = got[1]
                got = got[0]
            known[name] = got
        except ServerUnavailable:
            raise
        except (LMError, ValueError, TypeError, AttributeError, KeyError, IndexError):
            known[name] = {"top_logprobs": 0, "parallel": 2, "costs": {}, "grammar_cost": {}}.get(name, False)
    fields = {k: v for k, v in known.items() if k in FEATURES or k in ("parallel_how", "stream_logprobs_how")}
    return Capabilities(**fields)  # type: ignore[arg-type]


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
    return _echoed(resp, PROBE_PROMPT)


def _echoed(resp: Any, prompt: str) -> bool:
    """The answer carries the prompt's own tokens: offsets inside the prompt, with numbers for all
    but the first."""
    lp = resp.choices[0].logprobs if resp.choices else None
    offsets = getattr(lp, "text_offset", None)
    values = getattr(lp, "token_logprobs", None)
    if not isinstance(offsets, list) or not isinstance(values, list) or len(offsets) != len(values):
        return False
    inside = [v for off, v in zip(offsets, values, strict=False) if off < len(prompt)]
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
        top = first_top(resp.choices[0].logprobs if resp.choices else None)
        if top is not None and len(top) >= 2:
            return min(k, len(top))
    return 0


async def stream_top(b: _Prober, timeout: float | None = None, *, prompt: str, k: int,
                     count: str | bool | None = "usage",
                     extra_body: dict[str, Any] | None = None) -> tuple[dict[str, float] | None, int | None]:
    """One streamed request for the top ``k`` log-probabilities of the next token: (the
    alternatives, or None; the prompt's tokens: from the stream's usage, or counted by the
    server's tokenizer route when ``count`` names it; None where neither said). The whole answer
    is read here, so a caller's wait bounds it all."""
    extra: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
    if extra_body:
        extra["extra_body"] = extra_body
    stream = await b._client.completions.create(model=b.model, prompt=prompt, max_tokens=1, logprobs=k,
                                                temperature=0.0, stream=True, **extra)
    top: dict[str, float] | None = None
    tokens: int | None = None
    try:
        async for chunk in stream:
            for choice in getattr(chunk, "choices", None) or []:
                if top is None:
                    top = first_top(getattr(choice, "logprobs", None))
            used = getattr(getattr(chunk, "usage", None), "prompt_tokens", None)
            if isinstance(used, int) and not isinstance(used, bool) and used >= 0:
                tokens = used
    finally:
        await stream.close()
    if tokens is None and isinstance(count, str) and count != "usage":
        tokens = await _tokenizer_count(b, count, prompt, timeout)
    return top, tokens


def server_root(base_url: str) -> str:
    """The server's own routes' base (``/props``, ``/lora-adapters``, tokenizers): the base URL
    without its ``/v1``."""
    return base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url


async def _tokenizer_count(b: _Prober, route: str, text: str, timeout: float | None) -> int | None:
    """The prompt's tokens by the server's tokenizer route beside /v1 (None: no such route)."""
    got = await b._client.post(server_root(b.base_url) + route, cast_to=object, body={"input": text, "model": b.model},
                               options={"timeout": timeout or 30.0, "max_retries": 0})
    n = got.get("count") if isinstance(got, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None


def _same_top(a: dict[str, float], b: dict[str, float]) -> bool:
    """The same five most likely alternatives with the same log-probabilities, up to the server's
    arithmetic (llama.cpp's differ by about 0.01 between a prompt read in one batch and one found
    in its cache: -0.2017 vs -0.1943 measured); a wrong position or token is off by whole units."""
    best = sorted(a, key=lambda t: -a[t])[:5]
    return bool(best) and all(t in b and abs(a[t] - b[t]) <= 0.05 for t in best)


async def _stream_logprobs(b: _Prober) -> tuple[str | bool, str]:
    """Whether scoring by top log-probabilities goes streamed here: (where a stream's prompt tokens
    are counted, one of STREAM_TOKENS, or False; how that was found). Streamed only where the
    stream lists the same alternatives as a plain answer, its prompt tokens can be counted, and a
    streamed request (with its count) took less time than a plain one, each on a prompt of its
    own (COST_PROMPT, as the costs probe)."""
    caps = await probe(b, ("top_logprobs",))
    if not caps.top_logprobs:
        return False, ""
    k = caps.top_logprobs
    # llama.cpp's own server (the content form of log-probabilities, not llama-cpp-python's legacy
    # dicts) computes one token's log-probabilities for a plain answer as for a stream (streams were
    # for llama-cpp-python's cost), and with streamed scoring its answers lost connections here.
    resp = await b.request("probe stream_logprobs", b._client.completions.create, model=b.model,
                           prompt=PROBE_PROMPT, max_tokens=1, logprobs=k, temperature=0.0)
    if logprobs_form(resp.choices[0].logprobs if resp.choices else None) == "content":
        return False, "llama.cpp's own server: scored by plain answers"
    # The streamed request first: a server that refuses streams, or streams no log-probabilities,
    # costs one request.
    t0 = time.perf_counter()
    streamed, tokens = await b.request("probe stream_logprobs", functools.partial(stream_top, b),
                                       prompt="S. " + COST_PROMPT, k=k, count=None)
    if streamed is None:
        return False, "no log-probabilities in streams"
    how: str | bool = "usage" if tokens is not None else False
    if tokens is None:
        try:
            tokens = await _tokenizer_count(b, STREAM_TOKENS[1], "S. " + COST_PROMPT, 10.0)
        except ServerUnavailable:
            raise
        except Exception:  # noqa: BLE001 - no tokenizer route (404) or another answer: no streamed scoring
            tokens = None
        how = STREAM_TOKENS[1] if tokens is not None else False
    took = time.perf_counter() - t0
    t0 = time.perf_counter()
    await b.request("probe stream_logprobs", b._client.completions.create, model=b.model,
                    prompt="P. " + COST_PROMPT, max_tokens=1, logprobs=k, temperature=0.0)
    plain_took = time.perf_counter() - t0
    # The plain answer on the streamed request's own prompt: the same alternatives, the same count.
    resp = await b.request("probe stream_logprobs", b._client.completions.create, model=b.model,
                           prompt="S. " + COST_PROMPT, max_tokens=1, logprobs=k, temperature=0.0)
    plain = first_top(resp.choices[0].logprobs if resp.choices else None)
    if plain is None or not _same_top(plain, streamed):
        return False, "streams list other log-probabilities"
    if not how or tokens != getattr(getattr(resp, "usage", None), "prompt_tokens", None):
        return False, "a stream's prompt tokens cannot be counted"
    timing = f"{took:.3g} s streamed vs {plain_took:.3g} s plain"
    return (how, timing) if took < plain_took else (False, f"not cheaper: {timing}")


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
    if way == "ebnf":
        return {"ebnf": grammar}
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


async def _timed(b: _Prober, bound: float | None = None, **kwargs: Any) -> tuple[float | None, Any]:
    """Seconds one request took (None: over ``bound``, then abandoned) and its answer."""
    t0 = time.perf_counter()
    try:
        resp = await asyncio.wait_for(b.request("probe cost", b._client.completions.create, model=b.model,
                                                temperature=0.0, **kwargs), bound)
    except asyncio.TimeoutError:
        return None, None
    return time.perf_counter() - t0, resp


def _completion_tokens(resp: Any, default: int) -> int:
    n = getattr(getattr(resp, "usage", None), "completion_tokens", None)
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else default


async def _costs(b: _Prober) -> dict[str, float | None]:
    """Seconds of one request of each scoring mode the server supports, on COST_PROMPT (each
    with its own first token, so that no request finds the other's prompt in a server's cache, as
    in a run, where each state's prompt is new). The top log-probabilities first: they bound the
    echo request at ECHO_BOUND times their cost, so that a server whose echo is very slow costs
    the probe seconds, not minutes. Where echo was not probed yet, this request probes it: a
    server that answers in time with the prompt's log-probabilities has echo; one that does not
    answer in time stays unprobed (``echo_over``: the bound), which is all labels need to know."""
    known = _CACHE.setdefault((b.base_url, b.model), {})
    caps = await probe(b, ("top_logprobs",))
    out: dict[str, float | None] = {}
    if caps.top_logprobs:
        out["top-logprobs"], _ = await _timed(b, prompt="A. " + COST_PROMPT, max_tokens=1,
                                              logprobs=caps.top_logprobs)
    if known.get("echo", True):
        top = out.get("top-logprobs")
        bound = None if top is None else max(ECHO_FLOOR, ECHO_BOUND * top)
        try:
            took, resp = await _timed(b, bound, prompt="B. " + COST_PROMPT, max_tokens=1, echo=True, logprobs=0)
        except LMError:  # refused: no echo
            known["echo"] = False
            return out
        if took is None:
            out["echo"], out["echo_over"] = None, bound
        else:
            known.setdefault("echo", _echoed(resp, "B. " + COST_PROMPT))
            if known["echo"]:
                out["echo"] = took
    return out


async def _grammar_cost(b: _Prober) -> dict[str, float]:
    """Seconds per generated token of the same short request without and with the probe grammar
    ({} where the server takes no grammar)."""
    caps = await probe(b, ("grammar",))
    if not caps.grammar:
        return {}
    await _timed(b, prompt=PROBE_PROMPT, max_tokens=1)  # waits out whatever the server still does
    plain_s, plain = await _timed(b, prompt=PROBE_PROMPT, max_tokens=8)
    gram_s, gram = await _timed(b, prompt=PROBE_PROMPT, max_tokens=8,
                                extra_body=grammar_body(caps.grammar, PROBE_GRAMMAR))
    if plain_s is None or gram_s is None:
        return {}
    return {"plain": plain_s / _completion_tokens(plain, 8), "grammar": gram_s / _completion_tokens(gram, 2)}


async def _props_slots(b: _Prober) -> int | None:
    """llama.cpp's own server (llama-server) says how many requests it serves at once:
    ``total_slots`` in ``GET /props`` (beside the /v1 routes)."""
    try:
        got = await b._client.get(server_root(b.base_url) + "/props", cast_to=object,
                                  options={"timeout": 5.0, "max_retries": 0})
        slots = got.get("total_slots") if isinstance(got, dict) else None
    except Exception:  # noqa: BLE001 - any failure here means only: no /props, measure instead
        return None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None


async def _parallel(b: _Prober) -> tuple[int, str]:
    """1 when the server serves one request at a time, else 2 (at least two). From llama-server's
    /props where it answers; else measured: one short request alone, then two at once; a server
    that serves them one after the other takes about twice as long for the two."""
    slots = await _props_slots(b)
    if slots is not None:
        return (1 if slots == 1 else 2), f"/props: {slots} slot{'s' if slots > 1 else ''}"

    async def one() -> None:
        await b.request("probe parallel", b._client.completions.create, model=b.model, prompt=PROBE_PROMPT,
                        max_tokens=8, temperature=0.0)

    await one()  # warm: the first request may load the model or fill a cache
    t0 = time.perf_counter()
    await one()
    alone = time.perf_counter() - t0
    if alone < FAST_ANSWER:
        return 2, f"answers in {alone * 1000:.0f} ms: no limit needed"
    t0 = time.perf_counter()
    await asyncio.gather(one(), one())
    ratio = (time.perf_counter() - t0) / alone
    return (1 if ratio >= SERIAL_RATIO else 2), f"measured: two requests at once took {ratio:.1f}x one"


# Two requests at once taking this many times one request's time: served one after the other.
SERIAL_RATIO = 1.5
# The echo probe is abandoned after ECHO_BOUND times the top-logprobs probe (at least ECHO_FLOOR s):
# slower than that, echo cannot be the cheaper way to score labels (it needs one request per label),
# and for longer texts it is needed whatever it costs.
ECHO_BOUND = 2.0
ECHO_FLOOR = 2.0
# Decoding under a grammar this many times slower per token than without: too slow to be worth it
# (--grammar auto decodes unconstrained there; the gate checks every thought either way).
GRAMMAR_SLOW = 4.0


_PROBES: dict[str, Any] = {"chat": _chat, "n": _n, "echo": _echo, "top_logprobs": _top_logprobs,
                           "stream_logprobs": _stream_logprobs, "seed": _seed,
                           "grammar": _grammar, "parallel": _parallel, "costs": _costs,
                           "grammar_cost": _grammar_cost}
