"""Creative Writing as a Task: four required sentences, a passage whose paragraphs end with them.

Two decompositions:

* ``plan`` (the paper): depth 2, a plan and then the whole passage. The plan is only checked for
  form; the passage is gated exactly and is Solved when every paragraph ends right.
* ``paragraphs``: depth 4, each thought is one paragraph, gated at once: a partial state is Valid
  when its paragraphs so far each end with the right sentence, Solved after the fourth.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Literal, Sequence

from solver.evaluators import Value, Vote
from solver.generators import Propose, Sample
from solver.task import Thought
from tasks.writing import prompts
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

Decomposition = Literal["plan", "paragraphs"]
DECOMPOSITIONS: tuple[str, ...] = ("plan", "paragraphs")

MAX_PLAN_CHARS = 1500
# Generation limits. A passage of four short paragraphs is ~150-240 tokens (the example: ~140); at ~36 tokens/s on
# the embedded model every extra 100 tokens of cap costs ~3 s per sample when the model rambles.
PASSAGE_TOKENS = 240
PARAGRAPH_TOKENS = 110
VOTE_TOKENS = 16
VOTE_SHOW_CHARS = 500  # each choice shown to the judge is cut to this (keeps the prompt in context)

_LABEL = re.compile(r'^\s*(?:paragraph\s*\d+\s*(?:\([^)]*\))?\s*:|plan\s*:|passage\s*:)\s*', re.IGNORECASE)
_MARKERS = re.compile(r"^\s*(?:Sentences|Plan|Passage|Draft|Improved passage)\s*:|End of passage", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class WritingState:
    """The required sentences and what has been written so far (never changed in place)."""

    sentences: tuple[str, str, str, str]
    plan: str | None = None
    paragraphs: tuple[str, ...] = ()
    passage: str | None = None

    def text(self) -> str:
        """The passage so far: the full passage, or the paragraphs joined by blank lines."""
        return self.passage if self.passage is not None else "\n\n".join(self.paragraphs)


def clean_passage(text: str) -> str:
    """A model's passage text up to the first marker of a new section (no other change)."""
    m = _MARKERS.search(text)
    return (text[: m.start()] if m else text).strip()


def _shorten(text: str, width: int = VOTE_SHOW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


class Writing:
    """The Creative Writing task (``decomposition``: plan or paragraphs)."""

    name = "writing"

    def __init__(self, decomposition: Decomposition = "plan", relax: Relax = STRICT) -> None:
        if decomposition not in DECOMPOSITIONS:
            raise ValueError(f"unknown decomposition {decomposition!r}; use plan or paragraphs")
        self.decomposition: Decomposition = decomposition
        self.relax = relax  # the gate's normalisations (verifiers/writing.py); strict by default
        self.max_depth = 2 if decomposition == "plan" else 4

    # -- states and the gate -------------------------------------------------------------------

    def root(self, puzzle: str) -> WritingState:
        return WritingState(split_sentences(puzzle))

    def depth(self, state: WritingState) -> int:
        if self.decomposition == "plan":
            return (state.plan is not None) + (state.passage is not None)
        return len(state.paragraphs)

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

    def apply_unchecked(self, state: WritingState, thought: Thought) -> Verdict[WritingState]:
        """The paper's unchecked behaviour (gate ablation): take the model's text as written."""
        text = thought.text.strip()
        if not text:
            return Invalid("empty thought")
        if self.decomposition == "plan":
            if state.plan is None:
                return Valid(dataclasses.replace(state, plan=text))
            return Solved(dataclasses.replace(state, passage=text))
        nxt = dataclasses.replace(state, paragraphs=state.paragraphs + (text,))
        return Solved(nxt) if len(nxt.paragraphs) >= len(state.sentences) else Valid(nxt)

    def oracle(self, state: WritingState) -> bool:
        # Exact: every gated state can still be completed (the bare sentences are paragraphs).
        return True

    def answer(self, state: WritingState) -> str:
        return state.text()

    def options(self) -> dict[str, Any]:
        """What rebuilds this task (recorded in traces): the decomposition and the gate's normalisations."""
        return {"decomposition": self.decomposition, "normalise": ",".join(sorted(self.relax)) or "none"}

    def rules(self, puzzle: str) -> str:
        return rules_text(len(split_sentences(puzzle)), self.relax)

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
            return f"passage: {_shorten(state.passage, 120)}"
        if self.decomposition == "plan":
            return f"plan: {_shorten(state.plan, 120)}" if state.plan is not None else "no plan yet"
        return f"{len(state.paragraphs)} paragraphs: {_shorten(state.text(), 120)}"

    # -- prompts and parsers -------------------------------------------------------------------

    def sample_prompt(self, state: WritingState, chat: bool) -> str:
        if self.decomposition == "plan":
            body = (prompts.plan_prompt(state.sentences) if state.plan is None
                    else prompts.passage_prompt(state.sentences, state.plan))
        else:
            body = prompts.paragraph_prompt(state.sentences, state.paragraphs)
        return prompts.CHAT_PREFIX + body if chat else body

    def propose_prompt(self, state: WritingState, chat: bool) -> str:
        return self.sample_prompt(state, chat)  # one thought per call: propose == one sample

    def parse_proposals(self, state: WritingState, text: str) -> list[Thought]:
        if self.decomposition == "plan" and state.plan is None:
            plan = " ".join(_LABEL.sub("", text.split("Passage:")[0]).split())
            return [Thought(plan)] if plan else []
        if self.decomposition == "plan":
            passage = clean_passage(text)
            return [Thought(passage)] if passage else []
        for line in text.splitlines():
            line = _LABEL.sub("", line).strip()
            if line:
                return [Thought(line)]
        return []

    def value_prompt(self, state: WritingState, chat: bool) -> str:
        so_far = state.text() or (f"(plan) {state.plan}" if state.plan else "(nothing yet)")
        return prompts.VALUE_PROMPT.format(so_far=_shorten(so_far, 1200))

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
        return prompts.vote_prompt(_shorten(so_far, 900), [_shorten(c) for c in choices])

    # -- the core's task-agnostic baselines (solver/tools/baselines.py: io, cot, cot-sc, *-best) -------
    # They need about PASSAGE_TOKENS for io and PASSAGE_TOKENS + 100 for cot; 48 tokens cut a
    # passage short. tasks/writing/baselines.py has this task's own refine (the paper's).
    baseline_stop = prompts.PASSAGE_STOPS
    baseline_tokens = {"io": PASSAGE_TOKENS, "cot": PASSAGE_TOKENS + 100}

    @property
    def own_baselines(self) -> dict[str, Any]:
        """refine: the paper's coherence-judged refinement, in place of the core's (OwnBaselines)."""
        from tasks.writing.baselines import refine

        return {"refine": refine}

    def io_prompt(self, puzzle: str, chat: bool) -> str:
        body = prompts.passage_prompt(split_sentences(puzzle))
        return prompts.CHAT_PREFIX + body if chat else body

    def cot_prompt(self, puzzle: str, chat: bool) -> str:
        body = prompts.cot_prompt(split_sentences(puzzle))
        return prompts.CHAT_PREFIX + body if chat else body

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The passage in an io answer, or after "Passage:" in a cot answer; None when empty."""
        plan, sep, rest = text.partition("Passage:")
        passage = clean_passage(rest if sep and not _MARKERS.search(plan) else text)
        return passage or None

    soft_score_name = "coherence 1-10"

    async def soft_score(self, model: Any, passage: str, n: int, *, seed: int | None = 0,
                         chat: bool = False) -> tuple[int | None, ...]:
        """The paper's 1-10 coherence judgement, n samples (tot bench --score-samples)."""
        from tasks.writing.coherence import coherence

        return (await coherence(model, passage, n, seed=seed, chat=chat)).scores

    def make_generator(self, name: str, settings: Any) -> Any:
        """This task's own generator names (``constrained``); None for the core's."""
        if name != "constrained":
            return None
        from solver.lm.base import GenParams
        from tasks.writing.constrained import Constrained

        return Constrained(settings.k, GenParams(temperature=settings.temperature, seed=settings.seed),
                           settings.chat)

    def tune(self, generator: Any, evaluator: Any) -> tuple[Any, Any]:
        """Writing thoughts are long and multi-line: set lengths and stops the core cannot know."""
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
