"""Time to check one proposed thought (parse + exact verify), median per task, valid and
invalid thoughts mixed; and Game of 24's final-answer check."""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any, Sequence

from perf_row import Row

from solver.expansion import rule_failure
from solver.task import Thought
from solver.task_capabilities import LegalMoves, find
from tasks.game24 import Game24
from tasks.game24.data import default_csv, load_csv
from verifiers.verdict import Invalid


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
        legal = [t.text for t in find(task, LegalMoves).legal_thoughts(st)]
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
        rule_failure(t, p, a)
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
        cases += [(st, t) for t in list(find(task, LegalMoves).legal_thoughts(st))[:10]]
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
