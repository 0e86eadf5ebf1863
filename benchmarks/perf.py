"""Performance on this machine, as one table: concurrency, repeated work, exact layers, the model.

    python benchmarks/perf.py                    # everything: about 4 minutes on 2 busy cores
    python benchmarks/perf.py --json             # the same rows as JSON, for scripts
    python benchmarks/perf.py --only oracle,check --json

Machines are noisy, so every comparison is measured side by side in the same run and reported as
a ratio; absolute times are context. Sections:

- oracle:      the fast Game-of-24 oracle against the plain memoized exhaustive search, all 1,820
               multisets of 1..13, each from cold caches.
- concurrency: the real ``bfs`` (propose + value) and sample batches through ``LMClient`` and
               ``OpenAIBackend`` against a fake OpenAI-compatible server on 127.0.0.1 that answers
               after a fixed delay; speed-up of one BFS level and of 16-sample batches at N = 1, 4,
               16, and the peak number of requests the server saw in flight.
- memo:        calls that the client's in-run memo saved on Game of 24 901-1000, with a
               deterministic in-process fake model (so repeats are exact) and the real search.
- check:       median time to check one proposed thought (parse + exact verify), per task.
- lexicon:     pattern queries and crossword fillability, when those modules exist.
- model:       the embedded model's tokens/s on repeated prompts with and without KV prefix reuse
               (a few seconds; skipped when the model is not installed, or with --no-model).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from fake_openai_server import ServerProcess  # noqa: E402

from solver.lm.base import Completion, GenParams  # noqa: E402
from solver.lm.client import LMClient  # noqa: E402
from solver.task import Thought  # noqa: E402
from solver.trace import Trace  # noqa: E402
from tasks.game24 import Game24  # noqa: E402
from tasks.game24.data import all_multisets, default_csv, load_csv  # noqa: E402
from tasks.game24.task import State24  # noqa: E402
from verifiers.verdict import Invalid  # noqa: E402

SECTIONS = ("oracle", "concurrency", "memo", "lexicon", "check", "model")


@dataclass(frozen=True, slots=True)
class Row:
    section: str
    measure: str
    value: float | int | str
    unit: str = ""
    goal: str = ""
    note: str = ""


# ---- oracle ---------------------------------------------------------------------------------

def bench_oracle(repeats: int = 3) -> list[Row]:
    from verifiers import arithmetic as ar

    ms = all_multisets()
    fast_runs = []
    for _ in range(repeats):  # each from cold caches; the best run counts (the machine is shared)
        for f in (ar._values, ar._needs, ar._reaches):
            f.cache_clear()
        w, c = time.perf_counter(), time.process_time()
        fast = [ar.can_reach(m) for m in ms]
        fast_runs.append((time.perf_counter() - w, time.process_time() - c))
    t_fast, c_fast = min(fast_runs)
    ar._solvable_sorted.cache_clear()
    w, c = time.perf_counter(), time.process_time()
    plain = [ar.can_reach_exhaustive(m) for m in ms]
    t_plain, c_plain = time.perf_counter() - w, time.process_time() - c
    agree = fast == plain
    return [
        Row("oracle", "multisets classified / solvable", f"{len(ms)} / {sum(fast)}", "",
            "1820 / 1362", "fast and exhaustive agree" if agree else "DISAGREE with the exhaustive search"),
        Row("oracle", "fast oracle, all multisets, cold", round(t_fast, 4), "s", "< 0.2 s",
            f"CPU time {c_fast:.4f} s; best of {repeats} cold runs"),
        Row("oracle", "plain exhaustive search, cold", round(t_plain, 3), "s", "", f"CPU time {c_plain:.3f} s"),
        Row("oracle", "speed-up of the fast oracle", round(t_plain / t_fast, 1), "x", "",
            f"{c_plain / c_fast:.0f}x in CPU time"),
    ]


# ---- a Game-of-24 fake model, shared by the concurrency and memo sections ----------------------

_INPUT_RE = re.compile(r"(?:Input|Numbers):\s*([-\d/ .]+)\s*$", re.MULTILINE)


def game24_responder(k: int) -> Callable[[str, int], str]:
    """A deterministic stand-in model for Game-of-24 prompts: ``propose`` gets the first ``k``
    legal steps of the last input (rotated by the sample index), ``value`` gets the exact verdict
    (sure / impossible), anything else an empty line."""
    task = Game24()

    def respond(prompt: str, index: int) -> str:
        found = _INPUT_RE.findall(prompt)
        if not found:
            return ""
        text = found[-1].strip()
        nums = tuple(sorted(Fraction(x) for x in text.split()))
        state = State24(nums, tuple(str(n) for n in nums))
        if "Judgement:" in prompt[-20:]:
            return " sure" if task.oracle(state) else " impossible"
        steps = [t.text for t in task.legal_thoughts(state)]
        if not steps:
            return ""
        r = index % len(steps)
        return "\n".join((steps[r:] + steps[:r])[:k]) + "\n"

    return respond


class FakeBackend:
    """In-process, instant, deterministic model (concurrent like a server) for counting calls."""

    supports_chat = True
    concurrent = True

    def __init__(self, respond: Callable[[str, int], str]) -> None:
        self.respond = respond
        self.model = "fake-game24"
        self.name = "fake:game24"
        self.requests = 0

    async def complete(self, prompt: str, params: GenParams) -> Completion:
        self.requests += 1
        texts = [self.respond(prompt, (params.seed or 0) + i) for i in range(params.n)]
        return Completion(texts, len(prompt.split()), sum(len(t.split()) for t in texts))

    async def score(self, prompt: str, continuations: Sequence[str]) -> tuple[list[float], int]:
        self.requests += 1
        # A fixed pseudo-likelihood: shorter continuations are likelier (deterministic, no model).
        return [-float(len(c)) for c in continuations], len(prompt.split())

    async def close(self) -> None:
        return None


# ---- concurrency ----------------------------------------------------------------------------

PUZZLE = "4 9 10 13"


async def _bfs_level(n: int, breadth: int, server: ServerProcess) -> dict[str, float]:
    from solver.evaluators import Value
    from solver.generators import Propose
    from solver.lm.openai_backend import OpenAIBackend
    from solver.search import bfs

    client = LMClient(OpenAIBackend("fake", server.base_url, max_retries=0), concurrency=n)
    trace = Trace()
    server.stats(reset=True)
    gen = Propose(GenParams(n=1, temperature=0.7, max_tokens=160, seed=0))
    ev = Value(n=3, params=GenParams(temperature=0.7, max_tokens=8, stop=("\n",), seed=0))
    try:
        res = await bfs(Game24(), PUZZLE, gen, ev, client, breadth=breadth, depth=2, trace=trace)
    finally:
        await client.close()
    # Level 2 is the one with a full frontier: from its first expansion to its last score.
    start = min(e["t"] for e in trace.of("expand") if e["depth"] == 1)
    level2_nodes = {e["node"] for e in trace.of("proposal") if e.get("depth") == 2}
    scores = [e for e in trace.of("score") if e["node"] in level2_nodes]
    end = max(e["t"] for e in scores)
    frontier = sum(1 for e in trace.of("expand") if e["depth"] == 1)
    return {"seconds": end - start, "frontier": frontier, "evaluations": len(scores),
            "peak": server.stats()["peak_in_flight"], "failed": res.usage.failed_calls}


async def _samples(n: int, batch: int, independent: bool, server: ServerProcess) -> dict[str, float]:
    from solver.lm.openai_backend import OpenAIBackend

    client = LMClient(OpenAIBackend("fake", server.base_url, max_retries=0), concurrency=n)
    model = client.session()
    # Untimed: open the connections and learn whether the server honours n, as the first wave of
    # any longer run would; the timed batch then shows the steady state.
    await model.gather(*(model.complete(f"warm up {i}", GenParams(n=2, seed=0)) for i in range(n)))
    server.stats(reset=True)
    t0 = time.perf_counter()
    try:
        if independent:  # e.g. CoT-SC over several puzzles, or samples asked one request each
            await model.gather(*(model.complete(f"Q{i}: 1+1=", GenParams(n=1, seed=0)) for i in range(batch)))
        else:  # CoT-SC on one question: one request for ``batch`` samples
            texts = await model.complete("Q: 1+1=", GenParams(n=batch, seed=0))
            assert len(texts) == batch, texts
    finally:
        await client.close()
    seconds = time.perf_counter() - t0
    stats = server.stats()
    return {"seconds": seconds, "peak": stats["peak_in_flight"], "requests": stats["requests"],
            "failed": model.usage.failed_calls}


def _ideal(calls: Sequence[int], n: int) -> float:
    """Speed-up over N=1 if every wave of N requests took exactly one delay."""
    return sum(calls) / sum(math.ceil(c / n) for c in calls)


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    """The fastest repetition: on a shared machine, slower ones measure other people's load."""
    return min(runs, key=lambda r: r["seconds"])


def bench_concurrency(delay: float, repeats: int = 3, ns: Sequence[int] = (1, 4, 16)) -> list[Row]:
    import os

    rows: list[Row] = [Row("concurrency", "machine: cores / load average (1 min) at start",
                           f"{os.cpu_count()} / {os.getloadavg()[0]:.1f}", "", "",
                           f"fake server in a child process, {delay:.2f} s per answer; best of {repeats} runs")]
    batch = breadth = max(ns)

    def goal(n: int) -> str:
        return f">= {0.8 * n:.1f}" if n > 1 else ""

    # Level 1 proposes from one state; it gets enough lines to fill a frontier of ``breadth``.
    with ServerProcess(delay, _wide_first_level(breadth), max_requests=20_000) as srv:
        level = {n: _best([asyncio.run(_bfs_level(n, breadth, srv)) for _ in range(repeats)]) for n in ns}
    for n in ns:
        lv = level[n]
        ideal = _ideal([int(lv["frontier"]), int(lv["evaluations"])], n)
        rows.append(Row("concurrency", f"BFS level (propose+value), N={n}",
                        round(level[ns[0]]["seconds"] / lv["seconds"], 2), "x", goal(n),
                        f"{lv['seconds']:.2f} s; {int(lv['frontier'])} proposals + {int(lv['evaluations'])} "
                        f"value requests; ideal {ideal:.1f}x; peak in flight {int(lv['peak'])}; "
                        f"failed {int(lv['failed'])}"))
    cases = [("16 one-sample requests (CoT-SC over 16 inputs)", True, True),
             ("16 samples in one request, server honours n", False, True),
             ("16 samples in one request, server ignores n", False, False)]
    for label, independent, honor_n in cases:
        with ServerProcess(delay, lambda p, i: f" {i}", honor_n=honor_n, max_requests=5_000) as srv:
            res = {n: _best([asyncio.run(_samples(n, batch, independent, srv)) for _ in range(repeats)])
                   for n in ns}
        for n in ns:
            r = res[n]
            rows.append(Row("concurrency", f"{label}, N={n}", round(res[ns[0]]["seconds"] / r["seconds"], 2),
                            "x", goal(n) if r["requests"] > 1 else "",
                            f"{r['seconds']:.2f} s; {int(r['requests'])} requests; "
                            f"peak in flight {int(r['peak'])}; failed {int(r['failed'])}"))
    return rows


def _wide_first_level(breadth: int) -> Callable[[str, int], str]:
    narrow, wide = game24_responder(3), game24_responder(breadth + 8)

    def respond(prompt: str, index: int) -> str:
        found = _INPUT_RE.findall(prompt)
        four = bool(found) and len(found[-1].split()) == 4
        return (wide if four else narrow)(prompt, index)

    return respond


# ---- no repeated work -----------------------------------------------------------------------

def bench_memo(ranks: str) -> list[Row]:
    from solver.run import Settings, make_client, solve

    puzzles = load_csv(default_csv(), ranks)
    rows = []
    configs = [("tot-bfs", "propose", "value"), ("tot-dfs", "propose", "value"),
               ("tot-bfs", "enumerate-rank", "likelihood")]
    for method, gen, ev in configs:
        s = Settings(method=method, generator=gen, evaluator=ev)
        for shared in (False, True):
            calls = backend_calls = 0
            client = None
            for _rank, puzzle in puzzles:
                if client is None or not shared:
                    client = make_client(s, FakeBackend(game24_responder(5)))
                assert client is not None
                res = asyncio.run(solve(Game24(), puzzle, s, client))
                calls += res.usage.calls
                backend_calls += res.usage.backend_calls
            scope = "one client for all puzzles (as tot solve --range)" if shared else "a fresh client per puzzle"
            saved = calls - backend_calls
            rows.append(Row("memo", f"{method}:{gen}:{ev}, {scope}", saved, "calls saved",
                            "", f"{saved}/{calls} requests ({saved / calls:.1%}) served from the memo; "
                            f"{len(puzzles)} puzzles"))
    return rows


# ---- checking one proposed thought ----------------------------------------------------------

def _median_us(fn: Callable[[], object], items: int, reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) / items)
    return statistics.median(times) * 1e6


def bench_check() -> list[Row]:
    task = Game24()
    rng = random.Random(0)
    puzzles = [p for _r, p in load_csv(default_csv(), "901-1000")]
    cases: list[tuple[Any, Thought]] = []
    for p in puzzles:
        st = task.root(p)
        legal = [t.text for t in task.legal_thoughts(st)]
        for text in rng.sample(legal, min(4, len(legal))):
            cases.append((st, Thought(text)))
            cases.append((st, Thought(text.replace("(left:", "(left: 1"))))  # a wrong left list
        cases.append((st, Thought("13 - 9 = 5 (left: 4 5 10)")))
        cases.append((st, Thought("I think we should multiply")))
    per = []
    for st, th in cases:
        t0 = time.perf_counter_ns()
        task.check(st, th)
        per.append(time.perf_counter_ns() - t0)
    rows = [Row("check", "game24: parse + check one step", round(statistics.median(per) / 1000, 1), "us (median)",
                "", f"{len(cases)} proposals on 901-1000, valid and invalid")]
    ans = [(task, p, "(10 - 4) * (13 - 9)") for p in puzzles]
    per = []
    for t, p, a in ans:
        t0 = time.perf_counter_ns()
        t.verify_answer(p, a)
        per.append(time.perf_counter_ns() - t0)
    rows.append(Row("check", "game24: verify one final answer", round(statistics.median(per) / 1000, 1),
                    "us (median)", "", f"{len(ans)} answers (ast whitelist, exact)"))
    rows.extend(_check_other_tasks())
    return rows


def _time_checks(task: Any, cases: Sequence[tuple[Any, Thought]]) -> tuple[float, int]:
    per = []
    valid = 0
    for st, th in cases:
        t0 = time.perf_counter_ns()
        verdict = task.check(st, th)
        per.append(time.perf_counter_ns() - t0)
        valid += not isinstance(verdict, Invalid)
    return statistics.median(per) / 1000, valid


def _sudoku_cases() -> tuple[Any, list[tuple[Any, Thought]], str]:
    from tasks.sudoku.cli import PLUGIN

    parser = argparse.ArgumentParser()
    PLUGIN.add_solve_args(parser)
    args = parser.parse_args(["--size", "4", "--count", "20"])
    args.seed = 0
    task = PLUGIN.make_task(args)
    cases = []
    for _pid, text in PLUGIN.puzzles(args):
        st = task.root(text)
        cases += [(st, t) for t in list(task.legal_thoughts(st))[:10]]
        cases += [(st, Thought("row 9 col 9 = 9")), (st, Thought("no idea"))]
    return task, cases, "20 generated 4x4 boards: legal moves and malformed ones"


def _writing_cases() -> tuple[Any, list[tuple[Any, Thought]], str]:
    import dataclasses

    from tasks.writing.cli import PLUGIN

    parser = argparse.ArgumentParser()
    PLUGIN.add_solve_args(parser)
    args = parser.parse_args(["--index", "0-19"])
    task = PLUGIN.make_task(args)
    cases = []
    for _pid, text in PLUGIN.puzzles(args):
        st = dataclasses.replace(task.root(text), plan="Plan: one paragraph per sentence.")
        paras = [f"The day went on as days do, and then this happened. {s}" for s in st.sentences]
        cases.append((st, Thought("\n\n".join(paras))))
        cases.append((st, Thought("\n\n".join(paras[1:] + paras[:1]))))  # endings out of order
    return task, cases, "20 inputs: a full passage after the plan, valid and with endings out of order"


def _crossword_cases() -> tuple[Any, list[tuple[Any, Thought]], str]:
    from lexicon import default_lexicon
    from tasks.crosswords.data import load_puzzles
    from tasks.crosswords.task import Crosswords
    from verifiers.crossword import LAYOUT_5X5

    task = Crosswords(default_lexicon())
    cases = []
    for pz in load_puzzles()[:20]:
        st = task.root(pz.text())
        words = pz.words()
        for slot, word in zip(LAYOUT_5X5.names, words, strict=False):
            cases.append((st, Thought(f"{slot}. {word}")))
            cases.append((st, Thought(f"{slot}. {word[::-1]}X")))  # wrong length
        nxt = task.check(st, Thought(f"h1. {words[0]}"))
        if not isinstance(nxt, Invalid):
            cases += [(nxt.state, Thought(f"v{k}. {'Q' * 5}")) for k in range(1, 6)]  # crossing clash
    return task, cases, "20 puzzles: answer words, wrong lengths, crossing clashes"


def _check_other_tasks() -> list[Row]:
    """The other registered tasks, each with thoughts of its own kind (valid and invalid)."""
    from solver.tools.plugins import load_plugins

    builders = {"sudoku": _sudoku_cases, "writing": _writing_cases, "crosswords": _crossword_cases}
    rows = []
    for name in sorted(load_plugins()):
        if name == "game24":
            continue
        build = builders.get(name)
        if build is None:
            rows.append(Row("check", f"{name}: parse + check one thought", "n/a", "", "", "no cases written yet"))
            continue
        try:
            task, cases, what = build()
            median, valid = _time_checks(task, cases)
        except Exception as exc:  # noqa: BLE001 - a task still being built elsewhere: say so, go on
            rows.append(Row("check", f"{name}: parse + check one thought", "n/a", "", "",
                            f"not measurable: {type(exc).__name__}: {exc}"))
            continue
        rows.append(Row("check", f"{name}: parse + check one thought", round(median, 1), "us (median)", "",
                        f"{len(cases)} thoughts ({valid} valid); {what}"))
    return rows


# ---- lexicon and crosswords (when present) ---------------------------------------------------

def bench_lexicon(queries: int = 2000, states: int = 200) -> list[Row]:
    try:
        from lexicon import default_lexicon
        from tasks.crosswords.data import load_puzzles
        from verifiers.crossword import EMPTY, LAYOUT_5X5, Grid, fillability
    except ImportError as exc:
        return [Row("lexicon", "pattern queries, fillability", "n/a", "", "", f"not available yet: {exc}")]
    built_before = default_lexicon.cache_info().currsize > 0
    t0 = time.perf_counter()
    lex = default_lexicon()
    idx = lex.index(5)
    build = time.perf_counter() - t0
    rng = random.Random(0)
    # Patterns as crossword search meets them: 5-letter words with 1 to 4 letters known.
    words = [idx.words[rng.randrange(idx.size)] for _ in range(queries)]
    pats = []
    for w in words:
        known = set(rng.sample(range(5), rng.randint(1, 4)))
        pats.append("".join(ch if i in known else "?" for i, ch in enumerate(w)))
    t0 = time.perf_counter()
    hits = sum(idx.indices(p).size for p in pats)
    t_idx = (time.perf_counter() - t0) / len(pats)
    t0 = time.perf_counter()
    for p in pats:
        lex.match(p, limit=10)
    t_match = (time.perf_counter() - t0) / len(pats)
    rows = [Row("lexicon", "build the default lexicon + 5-letter index", round(build, 2), "s", "",
                f"{idx.size} five-letter words; once per process"
                + ("; already built earlier in this run" if built_before else "")),
            Row("lexicon", "pattern query (indices of all matches)", round(t_idx * 1000, 4), "ms (mean)", "< 0.1 ms",
                f"{len(pats)} patterns with 1-4 known letters; {hits / len(pats):.0f} matches on average"),
            Row("lexicon", "pattern query, top 10 words", round(t_match * 1000, 4), "ms (mean)", "< 0.1 ms")]
    # Partial fills of the real puzzles' answer boards: 5 to 20 of the 25 cells known.
    boards = [pz.answer for pz in load_puzzles() if pz.answer]
    grids = []
    for _ in range(states):
        b = list(rng.choice(boards))
        for c in rng.sample(range(25), rng.randint(5, 20)):
            b[c] = EMPTY
        grids.append(Grid(LAYOUT_5X5, "".join(b)))
    for level in ("slots", "arc", "full"):
        per = []
        verdicts = {True: 0, False: 0, None: 0}
        for g in grids:
            t0 = time.perf_counter_ns()
            res = fillability(g, lex, level)  # type: ignore[arg-type]
            per.append(time.perf_counter_ns() - t0)
            verdicts[res.ok] += 1
        rows.append(Row("lexicon", f"5x5 fillability check, level {level}", round(statistics.median(per) / 1e6, 3),
                        "ms (median)", "< 5 ms" if level == "arc" else "",
                        f"{len(grids)} partial fills; mean {statistics.mean(per) / 1e6:.2f} ms, "
                        f"max {max(per) / 1e6:.1f} ms; fillable {verdicts[True]}, not {verdicts[False]}, "
                        f"unknown {verdicts[None]}"))
    return rows


# ---- the embedded model ---------------------------------------------------------------------

def bench_model(calls: int, threads: int | None) -> list[Row]:
    try:
        from solver.lm.local import LocalBackend
        backend = LocalBackend(threads=threads)
    except Exception as exc:  # noqa: BLE001 - any failure to load means: not measurable here
        return [Row("model", "embedded model", "n/a", "", "", f"not available: {exc}")]
    task = Game24()
    states = [task.root(p) for _r, p in load_csv(default_csv(), "901-1000")[: calls]]
    params = GenParams(n=1, temperature=0.7, max_tokens=4, seed=0)
    backend._complete_sync("warm up", GenParams(max_tokens=1))  # load weights outside the timing
    rows = [Row("model", "threads", backend.threads, "", "", "llama.cpp threads for both contexts")]

    def gen(reuse: bool) -> tuple[float, int, int]:
        t0 = time.perf_counter()
        ptok = ctok = 0
        for st in states:
            if not reuse:
                backend._gen.reset()  # forget the KV cache: the whole prompt is read again
            c = backend._complete_sync(task.propose_prompt(st, False), params)
            ptok += c.prompt_tokens
            ctok += c.completion_tokens
        return time.perf_counter() - t0, ptok, ctok

    backend._complete_sync(task.propose_prompt(states[0], False), params)
    without, with_ = gen(False), gen(True)
    for label, (secs, p, c) in (("without prefix reuse", without), ("with prefix reuse", with_)):
        rows.append(Row("model", f"propose, {label}", round((p + c) / secs, 1), "tokens/s",
                        "", f"{len(states)} calls, {p} prompt + {c} generated tokens in {secs:.2f} s "
                        f"({secs / len(states) * 1000:.0f} ms/call)"))
    rows.append(Row("model", "propose: speed-up from prefix reuse", round(without[0] / with_[0], 2), "x"))

    labels = [" sure", " likely", " impossible"]

    def score(mode: str) -> tuple[float, int]:
        t0 = time.perf_counter()
        full = 0
        for st in states:
            prompt = task.value_prompt(st, False)
            if mode == "none":  # every continuation read from scratch
                for lab in labels:
                    backend._scorer.reset()
                    backend._score_sync(prompt, [lab])
            else:
                if mode == "within":
                    backend._scorer.reset()
                backend._score_sync(prompt, labels)
            full += 3 * len(backend._scorer.tokenize(prompt.encode(), add_bos=True, special=False))
        return time.perf_counter() - t0, full

    backend._score_sync(task.value_prompt(states[0], False), labels)
    res = {m: score(m) for m in ("none", "within", "across")}
    names = {"none": "no reuse", "within": "reuse within a call", "across": "reuse within and across calls"}
    for m, (secs, full) in res.items():
        rows.append(Row("model", f"likelihood value, {names[m]}", round(full / secs, 1), "tokens/s",
                        "", f"{len(states)} states x 3 labels; {secs / len(states) * 1000:.0f} ms/state "
                        "(tokens counted as if each label were read with its whole prompt)"))
    rows.append(Row("model", "likelihood value: speed-up of full reuse over none",
                    round(res["none"][0] / res["across"][0], 2), "x"))
    asyncio.run(backend.close())
    return rows


# ---- output ---------------------------------------------------------------------------------

def print_table(rows: list[Row]) -> None:
    w = max(len(r.measure) for r in rows)
    head = f"{'section':12} {'measure':{w}} {'value':>12} {'unit':12} {'goal':10} note"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r.section:12} {r.measure:{w}} {str(r.value):>12} {r.unit:12} {r.goal:10} {r.note}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {', '.join(SECTIONS)}")
    p.add_argument("--delay", type=float, default=0.25, help="the fake server's answer delay, seconds")
    p.add_argument("--repeats", type=int, default=3, help="runs per concurrency measurement (the best counts)")
    p.add_argument("--range", default="901-1000", help="Game-of-24 ranks for the memo section")
    p.add_argument("--model-calls", type=int, default=4, help="prompts per embedded-model measurement")
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    p.add_argument("--no-model", action="store_true", help="skip the embedded model")
    args = p.parse_args(argv)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = [s for s in chosen if s not in SECTIONS]
    if bad:
        print(f"unknown section {bad[0]!r}; choose from {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    import os

    load0 = os.getloadavg()[0]
    rows: list[Row] = []
    for sec in chosen:
        if sec == "oracle":
            rows += bench_oracle()
        elif sec == "concurrency":
            rows += bench_concurrency(args.delay, args.repeats)
        elif sec == "memo":
            rows += bench_memo(args.range)
        elif sec == "check":
            rows += bench_check()
        elif sec == "lexicon":
            rows += bench_lexicon()
        elif sec == "model" and not args.no_model:
            rows += bench_model(args.model_calls, args.threads)
    rows.insert(0, Row("machine", "cores / load average (1 min) at start, at end",
                       f"{os.cpu_count()} / {load0:.1f}, {os.getloadavg()[0]:.1f}", "", "",
                       "load above the core count means other work shared the CPUs"))
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
