"""Repeated work: model calls the client's in-run memo saves on Game of 24, with the
deterministic fake model (so repeats are exact) and the real search."""

from __future__ import annotations

import asyncio

from fake_game24_model import FakeBackend, game24_responder
from perf_row import Row

from tasks.game24 import Game24
from tasks.game24.data import default_csv, load_csv


def bench_memo(ranks: str) -> list[Row]:
    from solver.run import SearchSettings, Settings, make_client, solve

    puzzles = load_csv(default_csv(), ranks)
    rows = []
    configs = [("tot-bfs", "propose", "value"), ("tot-dfs", "propose", "value"),
               ("tot-bfs", "enumerate-rank", "likelihood")]
    for method, gen, ev in configs:
        s = Settings(search=SearchSettings(method=method, generator=gen, evaluator=ev))
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
