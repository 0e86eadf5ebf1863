"""The constrained generator for Creative Writing (``--generator constrained``, the default).

The model writes only what is soft: the plan and, for each paragraph, a lead-in. The required
sentence then closes the paragraph exactly as given (``lead_in + " " + sentence``), so every
passage it proposes ends right by construction. The construction is not trusted: every thought
still goes through the task's exact gate like any other.

Lead-ins are sanitised (``sanitise_lead_in``), in this order:

1. the first non-empty line only (blank lines and later lines are dropped), a leading label such
   as ``Paragraph 2 (ends with "..."):`` removed, Unicode NFKC, straight quotes, one space;
2. cut before the first copy of any required sentence (case-insensitive; the model usually writes
   the paragraph's own sentence at its end) and before the start of this paragraph's sentence
   (its first four words, or all of a shorter one), and before a section marker
   (``Paragraph N``, ``Sentences:``, ``Plan:``, ``Passage:``);
3. only whole sentences are kept (a sentence ends at ``. ! ?`` or ``…``, optionally followed by
   closing quotes or brackets), and only those that look like prose: at least two words with
   letters, and letters at least 60% of their non-space characters;
4. at most ``MAX_LEAD_SENTENCES`` sentences and ``MAX_LEAD_CHARS`` characters (whole sentences
   from the start).

If nothing usable is left (the model gave nothing, garbage, only the required sentence, or one
overlong sentence) the lead-in is empty and the paragraph is the required sentence alone: it
still passes the gate, and the coherence scorer sees the cost.

With ``--decomposition plan`` (the paper's): the first step samples k plans (the vote picks);
the second writes k passages, each paragraph a lead-in after the plan and the paragraphs before
it, and the vote picks among them. With ``paragraphs``: each step samples k lead-ins for the
next paragraph.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from solver.generators import first_thoughts
from solver.lm.base import GenParams
from solver.lm.session import Session
from solver.task import Thought
from solver.task_capabilities import Needs, SamplePrompts, no_model, require
from tasks.writing import prompts

LEAD_TOKENS = 48  # one line: a lead-in of a sentence or two, then (usually) the required sentence
PLAN_TOKENS = 60
MAX_LEAD_SENTENCES = 4
MAX_LEAD_CHARS = 400

_LABEL = re.compile(r'^\s*(?:paragraph\s*\d+\s*(?:\([^)]*\)?)?\s*:|plan\s*:|passage\s*:)\s*', re.IGNORECASE)
_MARKER = re.compile(r"\bParagraph\s*\d|\b(?:Sentences|Plan|Passage)\s*:", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\u2026]*[.!?\u2026]+[\"')\]]*(?=\s|$)")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _flat(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).split())


def _prose(sentence: str) -> bool:
    words = [w for w in sentence.split() if any(c.isalpha() for c in w)]
    chars = [c for c in sentence if not c.isspace()]
    return len(words) >= 2 and sum(c.isalpha() for c in chars) >= 0.6 * len(chars)


def sanitise_lead_in(raw: str, sentences: Sequence[str], index: int) -> str:
    """The usable lead-in in a model's raw text for paragraph ``index`` (0-based); may be ""."""
    line = next((ln for ln in raw.splitlines() if ln.strip()), "")
    text = _flat(_LABEL.sub("", line))
    cut = len(text)
    own = _flat(sentences[index]).rstrip(".!?\u2026")
    patterns = [_flat(s) for s in sentences] + [" ".join(own.split()[:4])]
    for pat in patterns:
        if pat:
            m = re.search(re.escape(pat), text, re.IGNORECASE)
            if m:
                cut = min(cut, m.start())
    m = _MARKER.search(text)
    if m:
        cut = min(cut, m.start())
    text = text[:cut]
    kept: list[str] = []
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0).strip()
        if not _prose(sentence):
            continue
        if len(kept) >= MAX_LEAD_SENTENCES or len(" ".join(kept + [sentence])) > MAX_LEAD_CHARS:
            break
        kept.append(sentence)
    return " ".join(kept)


def close_paragraph(lead_in: str, sentence: str) -> str:
    """The paragraph: the lead-in, then the required sentence exactly as given."""
    return f"{lead_in} {sentence}" if lead_in else sentence


@dataclass(slots=True)
class Constrained:
    """k candidates per step; the model writes plans and lead-ins, never the required endings."""

    k: int = 5
    params: GenParams = field(default_factory=lambda: GenParams(temperature=0.7, max_tokens=LEAD_TOKENS))
    chat: bool = False
    name: str = "constrained"
    needs: ClassVar[Needs] = Needs(model=True)  # and a Writing task
    exhaustive: ClassVar[bool] = False  # sampled plans and lead-ins
    log_likelihoods: ClassVar[bool] = False

    def _params(self, n: int, max_tokens: int, stop: tuple[str, ...], seed_offset: int = 0) -> GenParams:
        seed = None if self.params.seed is None else self.params.seed + seed_offset
        return GenParams(n=n, temperature=self.params.temperature, max_tokens=max_tokens, stop=stop,
                         seed=seed, chat=self.chat)

    def _prompt(self, body: str) -> str:
        return prompts.CHAT_PREFIX + body if self.chat else body

    async def _lead_ins(self, model: Session, sentences: tuple[str, ...], done: Sequence[str],
                        plan: str | None, n: int, seed_offset: int) -> list[str]:
        i = len(done)
        prompt = self._prompt(prompts.paragraph_prompt(sentences, done, plan))
        texts = await model.complete(prompt, self._params(n, LEAD_TOKENS, ("\n",), seed_offset), "lead-in")
        return [close_paragraph(sanitise_lead_in(t, sentences, i), sentences[i]) for t in texts]

    async def _passage(self, model: Session, sentences: tuple[str, ...], plan: str | None, j: int) -> str:
        done: list[str] = []
        for _ in sentences:
            done.append((await self._lead_ins(model, sentences, done, plan, 1, j))[0])
        return "\n\n".join(done)

    async def __call__(self, task: Any, state: Any, model: Session | None) -> list[Thought]:
        if model is None:
            raise no_model(f"generator `{self.name}`")
        if task.decomposition == "paragraphs":
            if len(state.paragraphs) >= len(state.sentences):
                return []
            paras = await self._lead_ins(model, state.sentences, state.paragraphs, None, self.k, 0)
            return [Thought(p) for p in paras]
        if state.plan is None:
            sampler = require(task, SamplePrompts, f"generator `{self.name}`")
            texts = await model.complete(sampler.sample_prompt(state, self.chat),
                                          self._params(self.k, PLAN_TOKENS, prompts.PLAN_STOPS), "plan")
            return first_thoughts(sampler, state, texts)
        passages = await asyncio.gather(*(self._passage(model, state.sentences, state.plan, j)
                                          for j in range(self.k)))
        return [Thought(p) for p in passages]
