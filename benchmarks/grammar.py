"""Grammars of legal thoughts, measured: per task and generator, with and without the grammar,
the thoughts proposed, those the gate refused, the verified answers and the seconds per generator
call (what the grammar costs the decoder); and, with ``--overhead``, seconds per call of one
prompt decoded free, under llama.cpp's grammar sampler (LlamaGrammar) and under llguidance driving
llama-cpp-python's sampler through a logits processor (where llguidance is installed).

    TOT_THREADS=1 python benchmarks/grammar.py --task game24 --range 901-905 --generator propose --evaluator value
    TOT_THREADS=1 python benchmarks/grammar.py --overhead 3

Runs the embedded model (or ``--base-url``/``--model`` for a server) with the search ``tot-bfs``
(breadth ``--breadth``); no cache, so every call is made. Puzzles: Game of 24 ranks from the
paper's data (``--range``), or the puzzles given with ``--puzzle`` (repeatable) for any task.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.budget import Budget  # noqa: E402
from solver.lm.client import LMClient  # noqa: E402
from solver.run import ModelSettings, SearchSettings, Settings, make_backend, make_parts, usage_for  # noqa: E402
from solver.searches import run_search  # noqa: E402
from solver.searches.tot import BfsOptions  # noqa: E402
from solver.trace import Trace  # noqa: E402

IN_GENERATOR: contextvars.ContextVar[bool] = contextvars.ContextVar("in_generator", default=False)


@dataclass
class Timed:
    """A generator that marks the model calls it makes (a context variable the backend reads)."""

    inner: Any
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.inner.name

    @property
    def needs(self) -> Any:
        return self.inner.needs

    async def __call__(self, task: Any, state: Any, model: Any) -> Any:
        token = IN_GENERATOR.set(True)
        try:
            return await self.inner(task, state, model)
        finally:
            IN_GENERATOR.reset(token)


class TimedBackend:
    """The backend, one call at a time, each timed: seconds of the generator's calls and of the
    others. One at a time so that a call's seconds are its own (the embedded model is serial
    anyway; a server's concurrency is not measured here)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.model = inner.name, inner.model
        self.supports_chat, self.concurrent = inner.supports_chat, False
        self._lock = asyncio.Lock()
        self.gen = [0, 0.0, 0]  # calls, seconds, completion tokens
        self.other = [0, 0.0]

    async def complete(self, prompt: str, params: Any) -> Any:
        async with self._lock:
            t0 = time.perf_counter()
            out = await self.inner.complete(prompt, params)
            dt = time.perf_counter() - t0
        if IN_GENERATOR.get():
            self.gen[0] += 1
            self.gen[1] += dt
            self.gen[2] += out.completion_tokens
        else:
            self.other[0] += 1
            self.other[1] += dt
        return out

    async def score(self, prompt: str, continuations: Any) -> Any:
        async with self._lock:
            t0 = time.perf_counter()
            out = await self.inner.score(prompt, continuations)
            self.other[0] += 1
            self.other[1] += time.perf_counter() - t0
        return out

    async def close(self) -> None:
        await self.inner.close()


def _puzzles(args: argparse.Namespace) -> list[str]:
    if args.puzzle:
        return list(args.puzzle)
    from tasks.game24.data import default_csv, load_csv

    return [p for _rank, p in load_csv(default_csv(), args.range)]


async def _row(task: Any, puzzles: list[str], s: Settings, client: LMClient,
               backend: TimedBackend) -> dict[str, Any]:
    gen, ev = make_parts(task, s)
    timed = Timed(gen)
    backend.gen, backend.other = [0, 0.0, 0], [0, 0.0]
    out: dict[str, Any] = {"grammar": "on" if s.model.grammar else "off", "proposed": 0, "rejected": 0, "verified": 0,
                           "calls": 0, "seconds": 0.0}
    for puzzle in puzzles:
        usage = usage_for(s, client)
        t0 = time.perf_counter()
        res = await run_search("tot-bfs", task, puzzle, timed, ev, client, breadth=s.search.own(BfsOptions).breadth,
                               depth=s.search.depth, trace=Trace(), usage=usage)
        out["seconds"] += time.perf_counter() - t0
        summary = res.summary()
        out["proposed"] += int(summary["proposed"])  # type: ignore[call-overload]
        out["rejected"] += int(summary["rejected"])  # type: ignore[call-overload]
        out["verified"] += bool(summary["verified"])
        out["calls"] += int(summary["calls"])  # type: ignore[call-overload]
    out["gen_calls"], out["gen_seconds"], out["gen_tokens"] = backend.gen
    out["other_calls"], out["other_seconds"] = backend.other
    return out


def _make_task(name: str) -> Any:
    if name == "game24":
        from tasks.game24 import Game24

        return Game24()
    if name == "sudoku":
        from tasks.sudoku.task import Sudoku

        return Sudoku()
    if name == "crosswords":
        from tasks.crosswords.task import Crosswords

        return Crosswords()
    if name == "planning":
        from tasks.planning.task import Planning

        return Planning()
    raise SystemExit(f"grammar.py: unknown task {name!r}")


async def search_table(args: argparse.Namespace) -> list[dict[str, Any]]:
    task = _make_task(args.task)
    puzzles = _puzzles(args)
    base = Settings(SearchSettings(method="tot-bfs", evaluator=args.evaluator, n_evaluate=args.n_evaluate,
                                   options=BfsOptions(breadth=args.breadth)),
                    ModelSettings(backend="openai" if args.base_url else "local", model=args.model,
                                  base_url=args.base_url),
                    budget=Budget(seconds=args.budget_seconds))
    backend = TimedBackend(make_backend(base.model))
    client = LMClient(backend, None, "off", base.model.concurrency)
    rows = []
    try:
        for gen in args.generator:
            for on in (True, False):
                s = replace(base, search=replace(base.search, generator=gen), model=replace(base.model, grammar=on))
                row = {"task": args.task, "generator": gen, "evaluator": args.evaluator, "puzzles": len(puzzles),
                       **await _row(task, puzzles, s, client, backend)}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    finally:
        await client.close()
    return rows


# ---- the decoder's cost on one prompt ------------------------------------------------------------

def _llguidance_processor(llm: Any, gbnf: str) -> Any:
    """A llama-cpp-python logits processor that masks every token llguidance's matcher refuses
    (the grammar converted from GBNF to llguidance's Lark by the project's rewrite,
    solver/lm/gbnf_lark.py, as the embedded backend does)."""
    import llguidance
    import llguidance.llamacpp
    import numpy as np

    from solver.lm.gbnf_lark import gbnf_to_lark

    tok = _LLG_TOKENIZERS.get(id(llm))
    if tok is None:
        tok = _LLG_TOKENIZERS[id(llm)] = llguidance.llamacpp.lltokenizer_from_vocab(llm._model.vocab)
    matcher = llguidance.LLMatcher(tok, llguidance.LLMatcher.grammar_from_lark(gbnf_to_lark(gbnf)))
    if matcher.is_error():
        raise ValueError(matcher.get_error())
    state = {"start": None}
    n_vocab = llm.n_vocab()

    def process(input_ids: Any, scores: Any) -> Any:
        if state["start"] is None:
            state["start"] = len(input_ids)
        else:
            new = list(input_ids[state["pos"]:])
            if new:
                matcher.consume_tokens([int(t) for t in new])
        state["pos"] = len(input_ids)
        bits = np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8)
        allowed = np.unpackbits(bits, bitorder="little")[:n_vocab].astype(bool)
        out = np.where(allowed[: len(scores)], scores, -np.inf)
        return out

    return process


_LLG_TOKENIZERS: dict[int, Any] = {}


def overhead(calls: int) -> list[dict[str, Any]]:
    from llama_cpp import LlamaGrammar, LogitsProcessorList

    from solver.generators import LINE_TOKENS, thought_grammar
    from solver.grammar import lines
    from solver.lm.local import LocalBackend
    from solver.task_capabilities import LegalMoves, ProposePrompts, find
    from tasks.game24 import Game24

    task = Game24()
    state = task.root("4 9 10 13")
    prompt = find(task, ProposePrompts).propose_prompt(state, False)
    gbnf = lines(thought_grammar(task, state) or "", 160 // LINE_TOKENS)
    backend = LocalBackend()
    llm = backend._load(False)
    rows = []
    engines = ["free", "LlamaGrammar", "llguidance"]
    for engine in engines:
        seconds = tokens = 0.0
        texts = []
        try:
            for i in range(calls):
                kwargs: dict[str, Any] = {}
                t0 = time.perf_counter()
                if engine == "LlamaGrammar":
                    kwargs["grammar"] = LlamaGrammar.from_string(gbnf, verbose=False)
                elif engine == "llguidance":
                    kwargs["logits_processor"] = LogitsProcessorList([_llguidance_processor(llm, gbnf)])
                resp = llm.create_completion(prompt, max_tokens=160, temperature=0.7, seed=i, **kwargs)
                seconds += time.perf_counter() - t0
                tokens += resp["usage"]["completion_tokens"]
                texts.append(resp["choices"][0]["text"])
        except ImportError as exc:
            rows.append({"engine": engine, "error": f"not installed: {exc}"})
            continue
        legal = {t.text for t in find(task, LegalMoves).legal_thoughts(state)}
        lines_out = [ln for t in texts for ln in t.splitlines() if ln.strip()]
        rows.append({"engine": engine, "calls": calls, "s_per_call": round(seconds / calls, 2),
                     "tokens_per_call": round(tokens / calls, 1),
                     "ms_per_token": round(1000 * seconds / max(tokens, 1), 1),
                     "lines": len(lines_out), "legal_lines": sum(ln.strip() in legal for ln in lines_out)})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    llm.close()
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--task", default="game24", choices=["game24", "sudoku", "crosswords", "planning"])
    p.add_argument("--range", default="901-905", help="Game of 24: ranks of the paper's data")
    p.add_argument("--puzzle", action="append", default=[], help="a puzzle (repeatable; overrides --range)")
    p.add_argument("--generator", action="append", default=None, help="propose and/or sample (default: propose)")
    p.add_argument("--evaluator", default="value")
    p.add_argument("--n-evaluate", type=int, default=3)
    p.add_argument("--breadth", type=int, default=5)
    p.add_argument("--budget-seconds", type=float, default=None, help="per puzzle")
    p.add_argument("--base-url", default=None)
    p.add_argument("--model", default=None)
    p.add_argument("--overhead", type=int, default=0, metavar="CALLS",
                   help="instead: CALLS calls of one propose prompt per decoding engine")
    args = p.parse_args()
    args.generator = args.generator or ["propose"]
    if args.overhead:
        rows = overhead(args.overhead)
        print("| engine | calls | s/call | tokens/call | ms/token | lines | legal lines |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            if "error" in r:
                print(f"| {r['engine']} | {r['error']} |")
            else:
                print(f"| {r['engine']} | {r['calls']} | {r['s_per_call']} | {r['tokens_per_call']} | "
                      f"{r['ms_per_token']} | {r['lines']} | {r['legal_lines']} |")
        return 0
    rows = asyncio.run(search_table(args))
    print("| task | generator | grammar | puzzles | proposed | refused by the gate | verified | model calls | "
          "generator calls | s per generator call | tokens per generator call | s per other call | s total |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        n, m = r["gen_calls"] or 1, r["other_calls"] or 1
        print(f"| {r['task']} | {r['generator']} | {r['grammar']} | {r['puzzles']} | {r['proposed']} | "
              f"{r['rejected']} | {r['verified']} | {r['calls']} | {r['gen_calls']} | {r['gen_seconds'] / n:.2f} | "
              f"{r['gen_tokens'] / n:.0f} | {r['other_seconds'] / m:.2f} | {r['seconds']:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
