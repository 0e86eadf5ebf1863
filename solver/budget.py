"""Run budgets (LM calls, tokens, search steps, wall time) and usage accounting with cost."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

__all__ = ["Budget", "BudgetExhausted", "DEFAULT_PRICES", "Usage"]


class BudgetExhausted(Exception):
    """Raised before a model call or a search step that a budget does not allow."""

    def __init__(self, which: str) -> None:
        super().__init__(f"{which} budget exhausted")
        self.which = which


@dataclass(slots=True)
class Budget:
    """Limits for one run; None means unlimited. Checked before each call, so calls never exceed
    ``calls`` and tokens exceed ``tokens`` by at most one call's worth."""

    calls: int | None = None
    tokens: int | None = None
    steps: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        for name in ("calls", "tokens", "steps", "seconds"):
            value = getattr(self, name)
            if value is not None and not value >= 0:  # also refuses NaN
                raise ValueError(f"budget {name} must be 0 or more, not {value}")


# Price per million tokens (prompt, completion), USD. Users can add their own with --price.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4": (30.0, 60.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-3.5-turbo": (0.5, 1.5),
}


@dataclass(slots=True)
class Usage:
    """Counts for one run. ``calls`` counts requests the search made (cache hits included, so a
    replayed run counts the same); ``backend_calls`` counts requests that reached a model."""

    calls: int = 0
    backend_calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0
    score_calls: int = 0  # scoring calls (log-probabilities), counted as ``calls`` are (cache hits included)
    failed_scores: int = 0  # of those, the ones that failed
    replayed_tokens: int = 0  # tokens of cache hits, counted as when they were recorded
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0  # the part of completion_tokens a reasoning model spent thinking
    steps: int = 0
    started: float = field(default_factory=time.monotonic)
    budget: Budget = field(default_factory=Budget)
    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    model: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    @property
    def cost(self) -> float | None:
        price = self.prices.get(self.model)
        if price is None:
            return None
        return (self.prompt_tokens * price[0] + self.completion_tokens * price[1]) / 1e6

    def check_call(self) -> None:
        """Raise BudgetExhausted if another model call is not allowed."""
        b = self.budget
        if b.calls is not None and self.calls >= b.calls:
            raise BudgetExhausted("calls")
        if b.tokens is not None and self.tokens >= b.tokens:
            raise BudgetExhausted("tokens")
        self.check_time()

    def check_time(self) -> None:
        if self.budget.seconds is not None and self.seconds >= self.budget.seconds:
            raise BudgetExhausted("seconds")

    def check_step(self) -> None:
        """Count one search step (a state expansion), raising if the budget forbids it."""
        if self.budget.steps is not None and self.steps >= self.budget.steps:
            raise BudgetExhausted("steps")
        self.check_time()
        self.steps += 1

    def summary(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "backend_calls": self.backend_calls,
            "cache_hits": self.cache_hits,
            "failed_calls": self.failed_calls,
            "score_calls": self.score_calls,
            "failed_scores": self.failed_scores,
            "replayed_tokens": self.replayed_tokens,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens": self.tokens,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "cost": self.cost,
            # only when a model thought: outputs of runs without reasoning models stay as they were
            **({"reasoning_tokens": self.reasoning_tokens} if self.reasoning_tokens else {}),
        }
