"""What a run's ``start`` event records about constrained decoding: whether ``--grammar`` is on,
the engine that follows a grammar, and whether the backend honours grammars at all.

The embedded model always honours one (llguidance's token masks or llama.cpp's sampler, see
``constrain.py``). A server is asked through its probed capabilities (llama.cpp's ``grammar``
field, vLLM's structured outputs; probed once per endpoint and cached, the same probe the first
constrained request would make); a server without one decodes freely and the gate alone sorts
the thoughts. ``honoured`` is None where it is not known: a backend of another kind, a replayed
cache (no server is asked), a run that decodes nothing under a grammar, or a probe that failed.
"""

from __future__ import annotations

from typing import Any

from solver.lm.base import LMError

__all__ = ["grammar_setting"]


async def grammar_setting(client: Any, on: bool, decodes: bool = True) -> dict[str, object]:
    """``{"on", "engine", "honoured"}`` for the start event. ``client``: the run's LMClient (None:
    no model); ``decodes``: the run decodes under a grammar when ``on`` (a generator or baseline
    that writes under one), so a server is probed only then."""
    out: dict[str, object] = {"on": on, "engine": None, "honoured": None}
    if not on or client is None:
        return out
    backend = client.backend
    support = getattr(backend, "grammar_support", None)
    if callable(support):  # the embedded model: known without asking anything
        engine, honoured = support()
        out.update(engine=engine, honoured=honoured)
        return out
    capabilities = getattr(backend, "capabilities", None)
    if not decodes or not callable(capabilities) or getattr(client, "mode", "off") == "replay":
        return out
    try:
        caps = await capabilities(("grammar",))
    except (LMError, OSError):
        return out
    way = getattr(caps, "grammar", None)
    if isinstance(way, str) and way:
        out.update(engine=way, honoured=True)
    elif way is False:
        out.update(honoured=False)
    return out
