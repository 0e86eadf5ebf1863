"""Creative Writing as a Task: four required sentences, a passage whose paragraphs end with them.

Two decompositions:

* ``plan`` (the paper): depth 2, a plan and then the whole passage. The plan is only checked for
  form; the passage is gated exactly and is Solved when every paragraph ends right.
* ``paragraphs``: depth 4, each thought is one paragraph, gated at once: a partial state is Valid
  when its paragraphs so far each end with the right sentence, Solved after the fourth.

The class holds the five methods search and verification need; its optional parts (prompts, the
unchecked mode, the oracle, options, its own generator, tuning, baselines, the coherence score)
are the objects in ``parts``, from ``parts.py``, ``baselines.py`` and ``coherence.py``.
"""

from __future__ import annotations

import dataclasses

from solver.task import Thought
from tasks.writing.baselines import PassageBaselines
from tasks.writing.coherence import CoherenceScore
from tasks.writing.parts import (
    AlwaysCompletable,
    ConstrainedGenerator,
    LongThoughts,
    TrustedText,
    WritingOptions,
    WritingPrompts,
)
from tasks.writing.state import (
    DECOMPOSITIONS,
    MAX_PLAN_CHARS,
    PASSAGE_TOKENS,
    Decomposition,
    WritingState,
    clean_passage,
    shorten,
)
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Solved, Valid, Verdict
from verifiers.writing import (
    MAX_PASSAGE_CHARS,
    STRICT,
    Relax,
    check_passage,
    ending_problem,
    paragraphs,
    report_passage,
    rules_text,
    split_sentences,
)

__all__ = ["DECOMPOSITIONS", "PASSAGE_TOKENS", "Decomposition", "Writing", "WritingState", "clean_passage"]


class Writing:
    """The Creative Writing task (``decomposition``: plan or paragraphs)."""

    name = "writing"

    def __init__(self, decomposition: Decomposition = "plan", relax: Relax = STRICT) -> None:
        if decomposition not in DECOMPOSITIONS:
            raise ValueError(f"unknown decomposition {decomposition!r}; use plan or paragraphs")
        self.decomposition: Decomposition = decomposition
        self.relax = relax  # the gate's normalisations (verifiers/writing.py); strict by default
        self.max_depth = 2 if decomposition == "plan" else 4
        self.parts = (WritingPrompts(decomposition), TrustedText(decomposition), AlwaysCompletable(),
                      WritingOptions(decomposition, relax), ConstrainedGenerator(), LongThoughts(decomposition),
                      PassageBaselines(), CoherenceScore())

    def root(self, puzzle: str) -> WritingState:
        return WritingState(split_sentences(puzzle))

    def check(self, state: WritingState, thought: Thought) -> Verdict[WritingState]:
        text = thought.text.strip()
        if self.decomposition == "plan":
            if state.passage is not None:
                return Invalid("the passage is already complete")
            if state.plan is None:
                if not text:
                    return Invalid("the plan is empty")
                if len(text) > MAX_PLAN_CHARS:
                    return Invalid(f"the plan is {len(text)} characters; at most {MAX_PLAN_CHARS}")
                return Valid(dataclasses.replace(state, plan=text))
            problem = check_passage(state.sentences, text, self.relax)
            if problem is not None:
                return Invalid(problem.reason)
            return Solved(dataclasses.replace(state, passage=text))
        i = len(state.paragraphs)
        if i >= len(state.sentences):
            return Invalid("all four paragraphs are written")
        if len(paragraphs(text)) != 1:
            return Invalid(f"paragraph {i + 1} must be one paragraph without blank lines")
        why = ending_problem(state.sentences[i], text, self.relax)
        if why is not None:
            return Invalid(f"paragraph {i + 1} must end with sentence {i + 1}: {why}")
        nxt = dataclasses.replace(state, paragraphs=state.paragraphs + (text,))
        if len(nxt.text()) > MAX_PASSAGE_CHARS:
            return Invalid(f"the passage would be {len(nxt.text())} characters; at most {MAX_PASSAGE_CHARS}")
        if i + 1 < len(state.sentences):
            return Valid(nxt)
        # The last paragraph: the gate's Solved is the final answer check itself.
        problem = check_passage(state.sentences, nxt.text())
        return Invalid(problem.reason) if problem is not None else Solved(nxt)

    def answer(self, state: WritingState) -> str:
        return state.text()

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every exact check of a passage from the puzzle text alone."""
        try:
            sentences = split_sentences(puzzle)
        except ValueError as exc:
            return AnswerReport(rules_text(4, self.relax),
                                (Check("the input holds four sentences", False, str(exc)),))
        return report_passage(sentences, answer, self.relax)

    def describe(self, state: WritingState) -> str:
        if state.passage is not None:
            return f"passage: {shorten(state.passage, 120)}"
        if self.decomposition == "plan":
            return f"plan: {shorten(state.plan, 120)}" if state.plan is not None else "no plan yet"
        return f"{len(state.paragraphs)} paragraphs: {shorten(state.text(), 120)}"
