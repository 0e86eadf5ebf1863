"""The optional parts of the Creative Writing task, each a small object the task composes: the
prompts and their parsers, the paper's unchecked mode, the oracle, the options, its own
``constrained`` generator and the lengths and stops of long thoughts."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Sequence

from solver.evaluators import Value, Vote
from solver.generators import Propose, Sample
from solver.lm.base import GenParams
from solver.task import Thought
from tasks.writing import prompts
from tasks.writing.constrained import Constrained
from tasks.writing.state import (
    LABEL,
    PARAGRAPH_TOKENS,
    PASSAGE_TOKENS,
    VOTE_TOKENS,
    Decomposition,
    WritingState,
    clean_passage,
    shorten,
)
from verifiers.verdict import Invalid, Solved, Valid, Verdict
from verifiers.writing import Relax

__all__ = ["AlwaysCompletable", "ConstrainedGenerator", "LongThoughts", "TrustedText", "WritingOptions",
           "WritingPrompts"]


class WritingPrompts:
    """ProposePrompts, SamplePrompts (one thought per call: propose is one sample), ValuePrompts
    and VotePrompt for the decomposition."""

    def __init__(self, decomposition: Decomposition) -> None:
        self.decomposition: Decomposition = decomposition

    def sample_prompt(self, state: WritingState, chat: bool) -> str:
        if self.decomposition == "plan":
            body = (prompts.plan_prompt(state.sentences) if state.plan is None
                    else prompts.passage_prompt(state.sentences, state.plan))
        else:
            body = prompts.paragraph_prompt(state.sentences, state.paragraphs)
        return prompts.CHAT_PREFIX + body if chat else body

    def propose_prompt(self, state: WritingState, chat: bool) -> str:
        return self.sample_prompt(state, chat)

    def parse_proposals(self, state: WritingState, text: str) -> list[Thought]:
        if self.decomposition == "plan" and state.plan is None:
            plan = " ".join(LABEL.sub("", text.split("Passage:")[0]).split())
            return [Thought(plan)] if plan else []
        if self.decomposition == "plan":
            passage = clean_passage(text)
            return [Thought(passage)] if passage else []
        for line in text.splitlines():
            line = LABEL.sub("", line).strip()
            if line:
                return [Thought(line)]
        return []

    def value_prompt(self, state: WritingState, chat: bool) -> str:
        so_far = state.text() or (f"(plan) {state.plan}" if state.plan else "(nothing yet)")
        return prompts.VALUE_PROMPT.format(so_far=shorten(so_far, 1200))

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|impossible)\b", text.lower())
        return m.group(1) if m else None

    def vote_prompt(self, states: Sequence[WritingState], chat: bool) -> str:
        if not states:
            return prompts.vote_prompt("", [])
        if self.decomposition == "plan":
            so_far = ""
            choices = [s.passage if s.passage is not None else (s.plan or "") for s in states]
        else:
            # The shared paragraphs are shown once; each choice shows only what differs.
            common = 0
            first = states[0].paragraphs
            while common < len(first) and all(len(s.paragraphs) > common and s.paragraphs[common] == first[common]
                                               for s in states):
                common += 1
            so_far = " ".join(first[:common])
            choices = [" ".join(s.paragraphs[common:]) for s in states]
        return prompts.vote_prompt(shorten(so_far, 900), [shorten(c) for c in choices])


class TrustedText:
    """Unchecked: the paper's unchecked behaviour (gate ablation): the model's text as written."""

    def __init__(self, decomposition: Decomposition) -> None:
        self.decomposition: Decomposition = decomposition

    def apply_unchecked(self, state: WritingState, thought: Thought) -> Verdict[WritingState]:
        text = thought.text.strip()
        if not text:
            return Invalid("empty thought")
        if self.decomposition == "plan":
            if state.plan is None:
                return Valid(dataclasses.replace(state, plan=text))
            return Solved(dataclasses.replace(state, passage=text))
        nxt = dataclasses.replace(state, paragraphs=state.paragraphs + (text,))
        return Solved(nxt) if len(nxt.paragraphs) >= len(state.sentences) else Valid(nxt)


class AlwaysCompletable:
    """HasOracle, exact: every gated state can still be completed (the bare sentences are
    paragraphs)."""

    def oracle(self, state: WritingState) -> bool:
        return True


class WritingOptions:
    """HasOptions: what rebuilds the task (recorded in traces): the decomposition and the gate's
    normalisations."""

    def __init__(self, decomposition: Decomposition, relax: Relax) -> None:
        self.decomposition: Decomposition = decomposition
        self.relax = relax

    def options(self) -> dict[str, Any]:
        return {"decomposition": self.decomposition, "normalise": ",".join(sorted(self.relax)) or "none"}


class ConstrainedGenerator:
    """OwnGenerators: this task's own generator names (``constrained``); None for the core's."""

    def make_generator(self, name: str, settings: Any) -> Any:
        if name != "constrained":
            return None
        m = settings.model
        return Constrained(settings.search.k, GenParams(temperature=m.temperature, seed=m.seed), m.chat)


class LongThoughts:
    """TunesParts: writing thoughts are long and multi-line: set lengths and stops the core cannot
    know."""

    def __init__(self, decomposition: Decomposition) -> None:
        self.decomposition: Decomposition = decomposition

    def tune(self, generator: Any, evaluator: Any) -> tuple[Any, Any]:
        stop: tuple[str, ...]
        if self.decomposition == "plan":
            max_tokens, stop = PASSAGE_TOKENS, prompts.PLAN_STOPS
        else:
            max_tokens, stop = PARAGRAPH_TOKENS, ("\n",)
        if isinstance(generator, (Sample, Propose)):
            generator = dataclasses.replace(
                generator, params=dataclasses.replace(generator.params, max_tokens=max_tokens, stop=stop))
        if isinstance(evaluator, Vote):
            evaluator = dataclasses.replace(
                evaluator, params=dataclasses.replace(evaluator.params, max_tokens=VOTE_TOKENS, stop=("\n",)))
        if isinstance(evaluator, Value):
            evaluator = dataclasses.replace(
                evaluator, params=dataclasses.replace(evaluator.params, stop=("\n",)))
        return generator, evaluator
