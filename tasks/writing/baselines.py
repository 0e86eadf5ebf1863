"""Creative Writing's baselines part: the prompts and parser of the core's IO, CoT and CoT-SC
(``PassageBaselines``), and its own baseline, the paper's iterative refinement judged by coherence.

IO, CoT and CoT-SC are the core's (solver/baselines.py, with this task's prompts and
parser); refine here replaces the core's checker-feedback refine for this task, as the paper
ran it: write a passage, let the model judge its coherence 1-10, rewrite until it judges 8 or
more and the passage passes the exact check, at most ``--refine-rounds`` passages. The latest
passage that passed the check is the answer; the core's ``BaselineRun`` reads, counts, traces and
finally checks every passage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks.writing import prompts
from tasks.writing.coherence import coherence
from tasks.writing.state import MARKERS, PASSAGE_TOKENS, clean_passage
from verifiers.writing import check_passage, split_sentences

if TYPE_CHECKING:
    from solver.baselines import BaselineRun

THRESHOLD = 8.0  # the coherence judgement that ends the loop (with a passage that passes)
JUDGE_SAMPLES = 1


async def refine(run: BaselineRun, *, threshold: float = THRESHOLD, judge_samples: int = JUDGE_SAMPLES,
                 gate_feedback: bool = False) -> str | None:
    """The paper's refine (``run.cfg.rounds`` passages at most). ``gate_feedback`` also tells
    the model the exact check's reason (not in the paper). Round 1 asks what IO asks, so with a
    record/replay store it reuses IO's passage."""
    cfg, chat = run.cfg, run.cfg.chat
    sentences = split_sentences(run.puzzle)
    wrap = (lambda p: prompts.CHAT_PREFIX + p) if chat else (lambda p: p)  # noqa: E731
    prompt = prompts.passage_prompt(sentences)
    latest_ok: str | None = None
    for r in range(cfg.rounds):
        texts = await run.ask(wrap(prompt), 1, PASSAGE_TOKENS, "passage", seed_offset=r)
        passage, problem = run.read(texts[0] if texts else "")
        if passage is not None and problem is None:
            latest_ok = passage
        score = (await coherence(run.model, passage, judge_samples, seed=cfg.seed, temperature=cfg.temperature,
                                 chat=chat)).mean if passage else None
        if passage is not None and problem is None and score is not None and score >= threshold:
            break
        why = f"not fully coherent (judged {score:.0f}/10)" if score is not None else "not fully coherent"
        if gate_feedback and problem is not None:  # the check's own words, with the paragraph named
            located = check_passage(sentences, passage) if passage else None
            why += f"; {located.reason if located is not None else problem.reason}"
        prompt = prompts.passage_prompt(sentences, draft=passage or "(empty)", problem=why)
    return latest_ok


class PassageBaselines:
    """BaselinePrompts, AnswerParser, BaselineStops, BaselineTokens and OwnBaselines. The core's
    baselines need about PASSAGE_TOKENS for io and PASSAGE_TOKENS + 100 for cot (48 tokens cut a
    passage short); ``refine`` is the paper's, above, in place of the core's."""

    baseline_stop = prompts.PASSAGE_STOPS
    baseline_tokens = {"io": PASSAGE_TOKENS, "cot": PASSAGE_TOKENS + 100}

    @property
    def own_baselines(self) -> dict[str, Any]:
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
        passage = clean_passage(rest if sep and not MARKERS.search(plan) else text)
        return passage or None
