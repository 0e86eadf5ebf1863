"""The embedded model's tokens/s on repeated prompts, with and without KV prefix reuse."""

from __future__ import annotations

import asyncio
import time

from perf_row import Row

from solver.lm.base import GenParams
from solver.task_capabilities import ProposePrompts, ValuePrompts, find
from tasks.game24 import Game24
from tasks.game24.data import default_csv, load_csv


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
            c = backend._complete_sync(find(task, ProposePrompts).propose_prompt(st, False), params)
            ptok += c.prompt_tokens
            ctok += c.completion_tokens
        return time.perf_counter() - t0, ptok, ctok

    backend._complete_sync(find(task, ProposePrompts).propose_prompt(states[0], False), params)
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
            prompt = find(task, ValuePrompts).value_prompt(st, False)
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

    backend._score_sync(find(task, ValuePrompts).value_prompt(states[0], False), labels)
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
