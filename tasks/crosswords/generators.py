"""Lexicon-backed enumerate-and-rank for crosswords: candidates come from the pattern index and
the model only ranks them, by its likelihood of the word after the slot's own clue."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from solver.lm.session import Session
from solver.task import Thought
from solver.task_capabilities import Needs, require
from tasks.crosswords.parts import CandidateWords, rank_prompt


@dataclass(slots=True)
class ClueRank:
    """The task's enumeration (``CandidateWords``: every word of the most constrained slot, or
    the ``candidates`` most frequent words of each open slot; at most ``slots`` slots), scored
    with one scoring call per slot: log P(" WORD\\n" | clue, letters), normalised over that
    slot's candidates so slots compare. Without a model the words keep lexicon order. The model
    only orders the words; which words exist is the enumeration's (a cut is reported)."""

    slots: int | None = None
    name: str = "enumerate-rank"
    needs: ClassVar[Needs] = Needs((CandidateWords,))  # the crossword's lexicon; ranks with a model when there is one
    # Each thought's ``prior`` is the word's log-likelihood, normalised over its slot, which the beam
    # search (solver/searches/beam.py) mixes into its score; without a model (or a failed scoring call) the
    # prior is None and the beam draws those words uniformly.
    log_likelihoods: ClassVar[bool] = True

    @property
    def exhaustive(self) -> bool:
        """Every thought of the task's enumeration (its own cut is reported by the gated step)."""
        return self.slots is None

    async def __call__(self, task: Any, state: Any, model: Session | None) -> list[Thought]:
        words_part = require(task, CandidateWords, f"generator `{self.name}`")
        per_slot, _cut = words_part.slot_words(state)
        per_slot = [(s, words) for s, words in per_slot if words]  # a slot nothing fits gives no thought
        per_slot = per_slot[: self.slots] if self.slots else per_slot
        if model is None:
            return [Thought(f"{s.name}. {w}") for s, words in per_slot for w in words]
        out: list[Thought] = []
        for s, words in per_slot:
            scores = await model.score(rank_prompt(state, s), [f" {w}\n" for w in words], "rank")
            if scores is None:
                out.extend(Thought(f"{s.name}. {w}") for w in words)
                continue
            finite = [x for x in scores if math.isfinite(x)]
            top = max(finite) if finite else 0.0
            z = top + math.log(sum(math.exp(x - top) for x in finite)) if finite else 0.0
            out.extend(Thought(f"{s.name}. {w}", x - z if math.isfinite(x) else -math.inf)
                       for w, x in zip(words, scores, strict=True))
        out.sort(key=lambda t: -(t.prior if t.prior is not None else -math.inf))
        return out


class ClueRanking:
    """TunesParts part of the crossword task: ``enumerate-rank`` here ranks lexicon candidates by
    the likelihood of the word after its own clue (the generic one would score every thought
    after one shared prompt)."""

    def tune(self, generator: Any, evaluator: Any) -> tuple[Any, Any]:
        if generator.name == "enumerate-rank":
            return ClueRank(), evaluator
        return generator, evaluator
