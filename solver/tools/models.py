"""``tot models --base-url URL [--model M]``: a server's models and what it supports.

Lists the models the server names (``GET /models``), then probes one of them (``--model``, else
the first listed) with small requests: chat, ``n`` > 1, echoed prompt log-probabilities, top
log-probabilities of generated tokens, seeds, grammars, requests served at once, and the measured
cost of each scoring mode and of grammar decoding; and says how ``tot`` will score there, and why.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from solver.lm.base import LMError, ServerUnavailable


def add_parser(subparsers: Any, plugins: dict[str, Any]) -> None:
    p = subparsers.add_parser("models", help="list a server's models and probe what it supports",
                              description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("--base-url", action="append", required=True,
                   help="OpenAI-compatible server URL (repeat, or separate by commas, for several)")
    p.add_argument("--model", default=None, help="the model to probe (default: the first the server lists)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    p.add_argument("--retries", type=int, default=1, help="retries of transient server errors")
    p.add_argument("--json", action="store_true", help="one JSON object per server on stdout")


async def _one(url: str, args: argparse.Namespace) -> dict[str, Any]:
    from solver.lm.openai_backend import OpenAIBackend, choose_scoring

    probe = OpenAIBackend(args.model or "unknown", url, timeout=args.timeout, max_retries=args.retries)
    try:
        try:
            names = await probe.models()
        except ServerUnavailable:
            raise
        except LMError as exc:  # some servers list no models; probing still works with --model
            if not args.model:
                raise LMError(f"{url} does not list its models ({exc}); name one with --model") from None
            names = []
        model = args.model or (names[0] if names else None)
        if model is None:
            raise LMError(f"{url} lists no models; name one with --model")
        probe.model, probe.name = model, f"openai:{model}"
        caps = await probe.capabilities()
        # What --scoring auto picks: for the value labels (three one-word continuations, the likelihood
        # evaluator) and for longer texts (enumerate-rank's steps, five here).
        chosen = {kind: choose_scoring(caps, n, labels) for kind, n, labels in (("labels", 3, True),
                                                                              ("texts", 5, False))}
        scoring = {k: (m or "none (use --evaluator value)") for k, (m, _) in chosen.items()}
        why = {k: w for k, (_, w) in chosen.items()}
        return {"base_url": probe.base_url, "models": names, "model": model, "capabilities": caps.to_json(),
                "scoring": scoring, "scoring_why": why, "grammar": _grammar_choice(caps), "lines": caps.lines()}
    finally:
        await probe.close()


def _grammar_choice(caps: Any) -> str:
    """What --grammar auto does on this server, and why."""
    from solver.lm.server_features import GRAMMAR_SLOW

    if not caps.grammar:
        return "off (the server takes no grammar)"
    cost = caps.grammar_cost or {}
    plain, slow = cost.get("plain"), cost.get("grammar")
    if not plain or not slow:
        return f"on ({caps.grammar}; cost not measured)"
    ratio = f"{slow * 1000:.0f} vs {plain * 1000:.0f} ms per token, {slow / plain:.1f}x"
    if slow > GRAMMAR_SLOW * plain:
        return f"off: too slow ({ratio}; --grammar on keeps it)"
    return f"on ({caps.grammar}; {ratio})"


async def run(args: argparse.Namespace, plugins: dict[str, Any]) -> int:
    from solver.tools.cli import UsageError, _urls

    if args.timeout <= 0 or args.retries < 0:
        raise UsageError("--timeout must be positive and --retries at least 0")
    urls = (_urls(args.base_url) or "").split(",")
    for url in urls:
        info = await _one(url, args)
        if args.json:
            print(json.dumps({k: v for k, v in info.items() if k != "lines"}, ensure_ascii=False), flush=True)
            continue
        print(f"server {info['base_url']}")
        print(f"  models: {', '.join(info['models']) or '(none listed)'}")
        print(f"model {info['model']} supports:")
        print("\n".join(info["lines"]))
        for kind, what in (("labels", "value labels (evaluator likelihood)"),
                           ("texts", "longer texts (generator enumerate-rank)")):
            print(f"  tot scores {what} here: {kind} by {info['scoring'][kind]} ({info['scoring_why'][kind]})")
        print("  (--scoring echo or top-logprobs overrides the choice)")
        print(f"  tot decodes under grammars here (--grammar auto): {info['grammar']}", flush=True)
    return 0
