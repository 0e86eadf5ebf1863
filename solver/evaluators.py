"""State evaluators: soft model judgements (value, vote, likelihood) and the exact oracle.

Each returns one score per node; higher is more promising. Search keeps or cuts by score.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, ClassVar, Hashable, Protocol, Sequence, TypeVar

from solver.lm.adapters import trained_for
from solver.lm.base import GenParams
from solver.lm.session import Session
from solver.node import Node
from solver.task import Task, ValueScale
from solver.task_capabilities import (
    HasOracle,
    Needs,
    TrainingPrompts,
    ValuePrompts,
    VotePrompt,
    find,
    require,
)

S = TypeVar("S", bound=Hashable)  # the task's state type
__all__ = ["EVALUATORS", "Evaluator", "EvaluatorFactory", "Likelihood", "Oracle", "Prior", "RandomOrder", "Value",
           "Vote", "make_evaluator", "parse_vote", "register_evaluator"]


class Evaluator(Protocol):
    """Scores nodes. Built-in evaluators also declare ``needs`` (the task capabilities they call
    and whether they need a model; ``solver.task_capabilities``)."""

    name: str
    prune_below: float

    async def __call__(self, task: Task[S], nodes: Sequence[Node[S]],
                       model: Session | None) -> list[tuple[float, object]]:
        ...


_OneState = Callable[[ValuePrompts, Node[Any], Session], Awaitable[tuple[float, object]]]


class _TrainedValue:
    """ValuePrompts with the task's short value prompt (TrainingPrompts), for a model whose
    adapter was trained on it (solver/lm/adapters.py); the label parser stays the task's."""

    def __init__(self, prompts: ValuePrompts, short: TrainingPrompts) -> None:
        self.prompts, self.short = prompts, short

    def value_prompt(self, state: Any, chat: bool) -> str:
        return self.short.train_value_prompt(state)

    def parse_value(self, text: str) -> str | None:
        return self.prompts.parse_value(text)


async def _each_state(name: str, one: _OneState, task: Task[S], nodes: Sequence[Node[S]],
                      model: Session | None) -> list[tuple[float, object]]:
    """Value-prompt evaluators: ``one`` per node, concurrently, after the capability and model checks."""
    prompts = require(task, ValuePrompts, f"evaluator `{name}`", model=model)
    assert model is not None
    short = find(task, TrainingPrompts) if trained_for(model.backend, "value") else None
    if short is not None:
        prompts = _TrainedValue(prompts, short)
    return list(await model.gather(*(one(prompts, nd, model) for nd in nodes)))


@dataclass(slots=True)
class Value:
    """The paper's value: n samples of sure/likely/impossible per state, mapped and summed."""

    n: int = 3
    scale: ValueScale = field(default_factory=ValueScale)
    params: GenParams = field(default_factory=lambda: GenParams(temperature=0.7, max_tokens=8, stop=("\n",)))
    chat: bool = False
    name: str = "value"
    prune_below: float = 1.0
    needs: ClassVar[Needs] = Needs((ValuePrompts,), model=True)

    async def _one(self, task: ValuePrompts, node: Node[S], model: Session) -> tuple[float, object]:
        p = self.params
        params = GenParams(n=self.n, temperature=p.temperature, max_tokens=p.max_tokens, stop=p.stop,
                           seed=p.seed, chat=self.chat)
        texts = await model.complete(task.value_prompt(node.state, self.chat), params, "value")
        labels = [task.parse_value(t) for t in texts]
        score = sum(self.scale.labels.get(lab, 0.0) for lab in labels if lab is not None)
        return score, {"labels": labels}

    async def __call__(self, task: Task[S], nodes: Sequence[Node[S]],
                       model: Session | None) -> list[tuple[float, object]]:
        return await _each_state(self.name, self._one, task, nodes, model)


@dataclass(slots=True)
class Likelihood:
    """Deterministic value from one scoring call: the model's probabilities of the labels after
    the value prompt, renormalised over the labels, give the expected label value."""

    scale: ValueScale = field(default_factory=ValueScale)
    chat: bool = False
    name: str = "likelihood"
    prune_below: float = 1.0
    needs: ClassVar[Needs] = Needs((ValuePrompts,), model=True, scores=True)

    async def _one(self, task: ValuePrompts, node: Node[S], model: Session) -> tuple[float, object]:
        labels = list(self.scale.labels)
        lps = await model.score(task.value_prompt(node.state, self.chat), [" " + lab for lab in labels], "value")
        if lps is None:
            return 0.0, {"error": "scoring failed"}
        top = max(lps)
        weights = [math.exp(lp - top) for lp in lps]
        total = sum(weights)
        probs = {lab: w / total for lab, w in zip(labels, weights, strict=False)}
        score = sum(probs[lab] * self.scale.labels[lab] for lab in labels)
        return score, {"p": {k: round(v, 4) for k, v in probs.items()}}

    async def __call__(self, task: Task[S], nodes: Sequence[Node[S]],
                       model: Session | None) -> list[tuple[float, object]]:
        return await _each_state(self.name, self._one, task, nodes, model)


# re.ASCII: \d would also match other scripts' digits, which int() then reads.
_VOTE_RE = re.compile(r"best\s+choice\s+is\s*:?\s*\(?#?\s*(\d+)", re.IGNORECASE | re.ASCII)


def parse_vote(text: str, n_choices: int) -> int | None:
    """The 1-based choice in "The best choice is 12" (the whole number, not its last digit)."""
    m = _VOTE_RE.search(text)
    if not m or len(m.group(1)) > 6:
        return None
    choice = int(m.group(1))
    return choice if 1 <= choice <= n_choices else None


@dataclass(slots=True)
class Vote:
    """The paper's vote: n samples each pick the most promising of the numbered states."""

    n: int = 5
    params: GenParams = field(default_factory=lambda: GenParams(temperature=0.7, max_tokens=64))
    chat: bool = False
    name: str = "vote"
    prune_below: float = -math.inf
    needs: ClassVar[Needs] = Needs((VotePrompt,), model=True)

    async def __call__(self, task: Task[S], nodes: Sequence[Node[S]],
                       model: Session | None) -> list[tuple[float, object]]:
        prompt = require(task, VotePrompt, f"evaluator `{self.name}`", model=model)
        assert model is not None
        p = self.params
        params = GenParams(n=self.n, temperature=p.temperature, max_tokens=p.max_tokens, stop=p.stop,
                           seed=p.seed, chat=self.chat)
        texts = await model.complete(prompt.vote_prompt([nd.state for nd in nodes], self.chat), params, "vote")
        votes = [0] * len(nodes)
        for t in texts:
            # The prompt may end with "The best choice is", so the answer can be a bare number.
            c = parse_vote(t, len(nodes)) or parse_vote("The best choice is " + t, len(nodes))
            if c is not None:
                votes[c - 1] += 1
        return [(float(v), {"votes": v}) for v in votes]


@dataclass(slots=True)
class Prior:
    """No extra calls: a node's score is its generator's prior (e.g. the ranking likelihood)."""

    name: str = "prior"
    prune_below: float = -math.inf
    needs: ClassVar[Needs] = Needs()

    async def __call__(self, task: Task[S], nodes: Sequence[Node[S]],
                       model: Session | None) -> list[tuple[float, object]]:
        return [(nd.prior if nd.prior is not None else 0.0, None) for nd in nodes]


@dataclass(slots=True)
class Oracle:
    """Exact ground truth (1 solvable, 0 not). For ablations and upper bounds; the default only
    where a task says so (Countdown, whose tree is too large to search without it)."""

    name: str = "oracle"
    prune_below: float = 0.5
    exact: ClassVar[bool] = True  # a score below prune_below is a proof: no answer below that state
    needs: ClassVar[Needs] = Needs((HasOracle,))

    async def __call__(self, task: Task[S], nodes: Sequence[Node[S]],
                       model: Session | None) -> list[tuple[float, object]]:
        exact = require(task, HasOracle, f"evaluator `{self.name}`")
        oracle = exact.oracle
        return [(1.0 if oracle(nd.state) else 0.0, None) for nd in nodes]


@dataclass(slots=True)
class RandomOrder:
    """No model: a pseudo-random score per state from a hash of the seed and the state's text, so
    a search visits children in a seeded random order that is the same on every machine."""

    seed: int = 0
    name: str = "random"
    prune_below: float = -math.inf
    needs: ClassVar[Needs] = Needs()

    async def __call__(self, task: Task[S], nodes: Sequence[Node[S]],
                       model: Session | None) -> list[tuple[float, object]]:
        out: list[tuple[float, object]] = []
        for nd in nodes:
            digest = hashlib.sha256(f"{self.seed}\0{task.describe(nd.state)}".encode()).digest()
            out.append((float(int.from_bytes(digest[:3], "big")), None))  # whole numbers: exact
        return out


EvaluatorFactory = Callable[..., Evaluator]
"""Makes an evaluator from the run's options, given as keywords: ``n`` (samples per judgement),
``scale`` (a ValueScale), ``seed`` and ``chat``. A factory takes them all (``**_`` for those it
ignores)."""

# The evaluators by name, in the order help texts list them; ``register_evaluator`` adds more.
EVALUATORS: dict[str, EvaluatorFactory] = {
    "value": lambda *, n, scale, seed, chat: Value(
        n, scale, GenParams(temperature=0.7, max_tokens=8, stop=("\n",), seed=seed), chat),
    "likelihood": lambda *, n, scale, seed, chat: Likelihood(scale, chat),
    "vote": lambda *, n, scale, seed, chat: Vote(n, GenParams(temperature=0.7, max_tokens=64, seed=seed), chat),
    "prior": lambda *, n, scale, seed, chat: Prior(),
    "oracle": lambda *, n, scale, seed, chat: Oracle(),
    "random": lambda *, n, scale, seed, chat: RandomOrder(seed or 0),
}


def register_evaluator(name: str, factory: EvaluatorFactory) -> None:
    """Make ``factory`` the evaluator called ``name`` (``--evaluator NAME``, ``make_evaluator``);
    a name already registered is replaced."""
    if not name or not isinstance(name, str):
        raise ValueError("an evaluator needs a non-empty name")
    EVALUATORS[name] = factory


def make_evaluator(name: str, *, n: int = 3, scale: ValueScale | None = None, seed: int | None = 0,
                   chat: bool = False) -> Evaluator:
    """The registered evaluator called ``name``, made for these options."""
    factory = EVALUATORS.get(name)
    if factory is None:
        raise ValueError(f"unknown evaluator {name!r}; choose one of {', '.join(EVALUATORS)}")
    return factory(n=n, scale=scale or ValueScale(), seed=seed, chat=chat)
