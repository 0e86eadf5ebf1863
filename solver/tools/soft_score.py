"""Soft scores in ``tot bench``: a task's own model judgement of each pair's final answer.

``--score-samples N`` asks the task's ``soft_score`` (writing: the paper's 1-10 coherence
score) for N samples of a judgement of the answer each pair ended with, whether or not it passed
the exact check (the row says which). ``--score-model``/``--score-base-url`` name a scoring model
apart from the one that wrote the answers (default: the same model). Scores are soft evidence,
never part of the gate; the scoring calls are not counted in the method's own calls and tokens.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from dataclasses import replace
from typing import Any, Callable

from solver.baseline_capabilities import SoftScore
from solver.lm.client import LMClient
from solver.task_capabilities import find, has, missing_message
from solver.tools.stats import mean_interval, wilson

MAX_SCORED_CHARS = 8000


def add_score_args(g: Any) -> None:
    g.add_argument("--score-samples", type=int, default=0,
                   help="score each pair's final answer (passed the check or not) with the task's soft "
                        "scorer (e.g. a coherence score of 1-10), mean of N samples; 0 (default): no scoring")
    g.add_argument("--score-model", default=None,
                   help="the scorer's model: a server model name (or a GGUF path); default: the run's model")
    g.add_argument("--score-base-url", default=None,
                   help="the scorer's OpenAI-compatible server; default: the run's (or --score-model's) server")
    g.add_argument("--score-chat", action="store_true", help="score with chat completions")


def final_answer(row: dict[str, Any], events: list[dict[str, Any]]) -> tuple[str | None, bool]:
    """(the answer a pair ended with, whether it passed the exact check): the returned answer,
    else the last answer the method put forward and the final check refused."""
    if row.get("answer"):
        return str(row["answer"]), True
    for ev in reversed(events):
        if ev.get("event") == "answer" and ev.get("answer"):
            return str(ev["answer"]), False
    return None, False


class SoftScorer:
    """Scores bench rows in place; one scoring client for the whole run."""

    def __init__(self, args: argparse.Namespace, task: Any, settings: Any) -> None:
        from solver.tools.cli import UsageError

        self.n = int(getattr(args, "score_samples", 0) or 0)
        if self.n < 0:
            raise UsageError("--score-samples must be 0 or more")
        self.task, self.seed = task, settings.model.seed
        model, url = getattr(args, "score_model", None), getattr(args, "score_base_url", None)
        if self.n and not has(task, SoftScore):
            raise UsageError(missing_message(task, SoftScore, "--score-samples") + "; drop --score-samples")
        if (model or url) and not self.n:
            raise UsageError("--score-model/--score-base-url need --score-samples N (N >= 1)")
        self.own = None
        if model or url:
            backend = "openai" if (url or (model and not os.path.isfile(model))) else "local"
            self.own = replace(settings.model, backend=backend, model=model, base_url=url,
                               chat=bool(getattr(args, "score_chat", False)), cache=None)
        self.chat = bool(getattr(args, "score_chat", False)) or settings.model.chat
        self._client: LMClient | None = None

    def _client_for(self, run_client: Callable[[], LMClient]) -> LMClient:
        if self._client is None:
            if self.own is not None:
                from solver.run import make_backend

                self._client = LMClient(make_backend(self.own), None, "off", self.own.concurrency)
            else:
                self._client = run_client()  # the run's own client, shared; scoring has its own session
        return self._client

    async def score(self, row: dict[str, Any], puzzle: str, events: list[dict[str, Any]],
                    run_client: Callable[[], LMClient]) -> None:
        if not self.n:
            return
        text, passed = final_answer(row, events)
        scorer = find(self.task, SoftScore)
        row["soft_score_name"] = scorer.soft_score_name if scorer is not None else "soft score"
        if text is None:
            row.update(soft_score=None, soft_scores=[], soft_scored=None)
            return
        client = self._client_for(run_client)
        model = client.session()  # scoring is counted apart from the method's own calls and tokens
        assert scorer is not None  # __init__ refused --score-samples without one
        scores = await scorer.soft_score(model, text[:MAX_SCORED_CHARS], self.n, seed=self.seed,
                                            chat=self.chat)
        got = [s for s in scores if s is not None]
        row.update(soft_score=sum(got) / len(got) if got else None, soft_scores=list(scores),
                   soft_scored="passed" if passed else "refused", score_model=client.backend.model,
                   scoring_calls=model.usage.calls, scoring_tokens=model.usage.tokens)
        if not passed:
            row["unverified_answer"] = text[:MAX_SCORED_CHARS]

    async def close(self) -> None:
        if self._client is not None and self.own is not None:
            await self._client.close()


def soft_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per method (finished pairs): passed the check, scored, the score's mean and interval."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r.get("status") == "done" and "soft_score_name" in r:
            by[str(r["method"])].append(r)
    out = {}
    for method, rs in by.items():
        passed = sum(1 for r in rs if r.get("verified"))
        scores = [float(r["soft_score"]) for r in rs if r.get("soft_score") is not None]
        out[method] = {"n": len(rs), "passed": passed, "wilson": wilson(passed, len(rs)),
                       "scored": len(scores), "mean": mean_interval(scores),
                       "name": rs[0]["soft_score_name"],
                       "models": sorted({str(r["score_model"]) for r in rs if r.get("score_model")})}
    return out


def soft_table(rows: list[dict[str, Any]]) -> str:
    """The side-by-side table of check pass rate and soft score; "" when nothing was scored."""
    data = soft_rows(rows)
    if not data:
        return ""
    name = next(iter(data.values()))["name"]
    head = f"{'method':24} {'passed the check (95% Wilson)':>32} {name + ' mean [95% CI]':>28} {'scored':>7}  scorer"
    lines = [head, "-" * len(head)]
    for method in sorted(data):
        d = data[method]
        lo, hi = d["wilson"]
        rate = f"{d['passed']}/{d['n']} {d['passed'] / d['n']:.0%} [{lo:.0%}-{hi:.0%}]" if d["n"] else "-"
        mean = d["mean"]
        score = f"{mean[0]:.2f} [{mean[1]:.2f}-{mean[2]:.2f}]" if mean else "-"
        lines.append(f"{method:24} {rate:>32} {score:>28} {d['scored']:>7}  {', '.join(d['models']) or '-'}")
    lines.append(f"{name}: each pair's final answer, passed the check or not (a pair with none is not scored); "
                 "mean of the samples per answer, normal-approximation interval over answers")
    return "\n".join(lines)
