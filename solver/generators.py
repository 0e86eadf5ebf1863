"""Thought generators: turn a state into candidate thoughts (unchecked; the gate comes next)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar, Hashable, Protocol, TypeVar, runtime_checkable

from solver.grammar import lines, one_line
from solver.lm.adapters import trained_for
from solver.lm.base import GenParams
from solver.lm.session import Session
from solver.task import Task, Thought
from solver.task_capabilities import (
    ChoicePrompt,
    LegalMoves,
    Needs,
    ProposePrompts,
    SamplePrompts,
    ThoughtGrammar,
    TrainingPrompts,
    find,
    require,
)

S = TypeVar("S", bound=Hashable)  # the task's state type
__all__ = ["EnumerateChoice", "EnumerateRank", "GENERATORS", "Generator", "GeneratorFactory", "Propose", "Sample",
           "first_thoughts", "make_generator", "register_generator", "step_prompt", "thought_grammar"]

# Tokens a proposed line may take (a Game-of-24 step with fractions is about 28 with Gemma's
# tokenizer): a ``propose`` grammar allows as many lines as fit in the token limit, so that the
# decoder ends by itself and the limit never cuts the last line in half.
LINE_TOKENS = 30


def thought_grammar(task: object, state: Any) -> str | None:
    """The task's grammar of one legal thought from ``state`` (ThoughtGrammar), or None when it
    has none or cannot write one for this state."""
    part = find(task, ThoughtGrammar)
    return None if part is None else part.thought_grammar(state)


@runtime_checkable
class Generator(Protocol):
    """Turns a state into candidate thoughts. Built-in generators also declare ``needs`` (the
    task capabilities they call and whether they need a model; ``solver.task_capabilities``).

    Every generator declares two facts the searches rely on (a run refuses one that does not):
    ``exhaustive``: it gives every legal thought of the state, so a search that tried them all and
    cut nothing has proved there is no answer; ``log_likelihoods``: each thought's ``prior`` is its
    log-likelihood under the model, which the beam mixes into its score. Plain class attributes
    do: ``exhaustive: ClassVar[bool] = False``."""

    name: str

    @property
    def exhaustive(self) -> bool: ...

    @property
    def log_likelihoods(self) -> bool: ...

    async def __call__(self, task: Task[S], state: S, model: Session | None) -> list[Thought]:
        ...


@dataclass(slots=True)
class Propose:
    """The paper's ``propose``: one call asks for several next thoughts, one per line."""

    params: GenParams = field(default_factory=lambda: GenParams(n=1, temperature=0.7, max_tokens=160))
    chat: bool = False
    name: str = "propose"
    needs: ClassVar[Needs] = Needs((ProposePrompts,), model=True)
    exhaustive: ClassVar[bool] = False
    log_likelihoods: ClassVar[bool] = False
    grammar: bool = True  # decode under the task's ThoughtGrammar, where it has one

    async def __call__(self, task: Task[S], state: S, model: Session | None) -> list[Thought]:
        prompts = require(task, ProposePrompts, f"generator `{self.name}`", model=model)
        assert model is not None
        params = self.params
        one = thought_grammar(task, state) if self.grammar else None
        if one is not None:
            params = replace(params, grammar=lines(one, max(1, params.max_tokens // LINE_TOKENS)))
        texts = await model.complete(step_prompt(task, state, model, prompts.propose_prompt(state, self.chat)),
                                     params, "propose")
        out: list[Thought] = []
        for text in texts:
            out.extend(prompts.parse_proposals(state, text))
        return out


@dataclass(slots=True)
class Sample:
    """The paper's ``sample``: k independent calls, each asked for exactly one next thought."""

    k: int = 5
    params: GenParams = field(default_factory=lambda: GenParams(temperature=0.7, max_tokens=48))
    chat: bool = False
    name: str = "sample"
    needs: ClassVar[Needs] = Needs((SamplePrompts,), model=True)
    exhaustive: ClassVar[bool] = False
    log_likelihoods: ClassVar[bool] = False
    grammar: bool = True  # decode under the task's ThoughtGrammar, where it has one

    async def __call__(self, task: Task[S], state: S, model: Session | None) -> list[Thought]:
        prompts = require(task, SamplePrompts, f"generator `{self.name}`", model=model)
        assert model is not None
        one = thought_grammar(task, state) if self.grammar else None
        params = GenParams(n=self.k, temperature=self.params.temperature,
                           max_tokens=self.params.max_tokens, stop=self.params.stop,
                           seed=self.params.seed, chat=self.chat,
                           grammar=None if one is None else one_line(one))
        texts = await model.complete(step_prompt(task, state, model, prompts.sample_prompt(state, self.chat)),
                                     params, "sample")
        return first_thoughts(prompts, state, texts)


def step_prompt(task: object, state: Any, model: Session, few_shot: str) -> str:
    """``few_shot``, or the task's short step prompt (TrainingPrompts) when the model runs an
    adapter trained on it (solver/lm/adapters.py)."""
    short = find(task, TrainingPrompts) if trained_for(model.backend, "step") else None
    return short.train_step_prompt(state) if short is not None else few_shot


def first_thoughts(task: SamplePrompts | ProposePrompts, state: Any, texts: list[str]) -> list[Thought]:
    """One thought per sampled text: the first the task's parser finds in it (none if it finds none)."""
    out: list[Thought] = []
    for text in texts:
        found = task.parse_proposals(state, text)
        if found:
            out.append(found[0])
    return out


@dataclass(slots=True)
class EnumerateRank:
    """For weak models: the checker enumerates every legal next thought and the model only ranks
    them, by the log-likelihood of each thought's text after the propose prompt (``rank=True``),
    or not at all (``rank=False``: task order, no model calls)."""

    rank: bool = True
    chat: bool = False
    name: str = "enumerate-rank"
    exhaustive: bool = True  # every legal thought, so a search that tries them all is complete

    @property
    def log_likelihoods(self) -> bool:
        """Whether each thought's ``prior`` is its log-likelihood under the model (ranked), which
        the beam search of solver/searches/beam.py mixes into its score."""
        return self.rank

    @property
    def needs(self) -> Needs:
        """Ranked: legal moves, the propose prompt and a model; unranked: legal moves only."""
        return Needs((LegalMoves, ProposePrompts), model=True, scores=True) if self.rank else Needs((LegalMoves,))

    async def __call__(self, task: Task[S], state: S, model: Session | None) -> list[Thought]:
        moves = require(task, LegalMoves, f"generator `{self.name}`")
        thoughts = list(moves.legal_thoughts(state))
        if not self.rank or not thoughts or model is None:
            return thoughts
        prompts = require(task, ProposePrompts, f"generator `{self.name}`")
        prompt = step_prompt(task, state, model, prompts.propose_prompt(state, self.chat))
        scores = await model.score(prompt, [t.text + "\n" for t in thoughts], "rank")
        if scores is None:
            return thoughts
        ranked = [Thought(t.text, s if math.isfinite(s) else -math.inf) for t, s in zip(thoughts, scores, strict=False)]
        order = sorted(range(len(ranked)), key=lambda i: -(ranked[i].prior or -math.inf))
        return [ranked[i] for i in order]


_CHOICE_RE = re.compile(r"^\s*\(?(\d{1,4})\b", re.ASCII)  # ASCII digits only


@dataclass(slots=True)
class EnumerateChoice:
    """For weak models without log-probabilities: the checker enumerates every legal next thought,
    the task lists them numbered, and ``n`` sampled answers each pick one; thoughts are ordered by
    how many picks they got (ties keep the task's order). Needs the task's ``choice_prompt``."""

    n: int = 5
    params: GenParams = field(default_factory=lambda: GenParams(temperature=0.7, max_tokens=6, stop=("\n",)))
    chat: bool = False
    name: str = "enumerate-choice"
    exhaustive: bool = True
    log_likelihoods: ClassVar[bool] = False  # its priors are vote counts
    needs: ClassVar[Needs] = Needs((LegalMoves, ChoicePrompt), model=True)

    async def __call__(self, task: Task[S], state: S, model: Session | None) -> list[Thought]:
        moves = require(task, LegalMoves, f"generator `{self.name}`")
        chooser = require(task, ChoicePrompt, f"generator `{self.name}`")
        thoughts = list(moves.legal_thoughts(state))
        make_prompt = chooser.choice_prompt
        if not thoughts or model is None:
            return thoughts
        p = self.params
        params = GenParams(n=self.n, temperature=p.temperature, max_tokens=p.max_tokens, stop=p.stop,
                           seed=p.seed, chat=self.chat)
        texts = await model.complete(make_prompt(state, thoughts, self.chat), params, "choice")
        votes = [0] * len(thoughts)
        for text in texts:
            m = _CHOICE_RE.match(text)
            if m and 1 <= int(m.group(1)) <= len(thoughts):
                votes[int(m.group(1)) - 1] += 1
        order = sorted(range(len(thoughts)), key=lambda i: -votes[i])
        return [Thought(thoughts[i].text, float(votes[i])) for i in order]


GeneratorFactory = Callable[..., Generator]
"""Makes a generator from the run's options, given as keywords: ``k`` (samples per state),
``temperature``, ``seed`` and ``chat``. A factory takes them all (``**_`` for those it ignores)."""

# The generators by name, in the order help texts list them; ``register_generator`` adds more.
GENERATORS: dict[str, GeneratorFactory] = {
    "propose": lambda *, k, temperature, seed, chat, grammar: Propose(
        GenParams(n=1, temperature=temperature, max_tokens=160, seed=seed), chat, grammar=grammar),
    "sample": lambda *, k, temperature, seed, chat, grammar: Sample(
        k, GenParams(temperature=temperature, max_tokens=48, seed=seed, stop=("\n",)), chat, grammar=grammar),
    "enumerate-rank": lambda *, k, temperature, seed, chat, grammar: EnumerateRank(True, chat),
    "enumerate-choice": lambda *, k, temperature, seed, chat, grammar: EnumerateChoice(
        k, GenParams(temperature=temperature, max_tokens=6, stop=("\n",), seed=seed), chat),
    "enumerate": lambda *, k, temperature, seed, chat, grammar: EnumerateRank(False, chat, name="enumerate"),
}


def register_generator(name: str, factory: GeneratorFactory) -> None:
    """Make ``factory`` the generator called ``name`` (``--generator NAME``, ``make_generator``);
    a name already registered is replaced. The factory is called with the keywords ``k``,
    ``temperature``, ``seed``, ``chat`` and ``grammar`` (take ``**_`` for those it ignores)."""
    if not name or not isinstance(name, str):
        raise ValueError("a generator needs a non-empty name")
    GENERATORS[name] = factory


def make_generator(name: str, *, k: int = 5, temperature: float = 0.7, seed: int | None = 0,
                   chat: bool = False, grammar: bool = True) -> Generator:
    """The registered generator called ``name``, made for these options. ``grammar``: whether
    ``propose`` and ``sample`` decode under the task's ThoughtGrammar."""
    factory = GENERATORS.get(name)
    if factory is None:
        raise ValueError(f"unknown generator {name!r}; choose one of {', '.join(GENERATORS)}")
    return factory(k=k, temperature=temperature, seed=seed, chat=chat, grammar=grammar)
