"""The grammar of crossword candidates a state allows: ``h2. WORD`` lines (with the optional
confidence the prompts ask for) for the open slots only, each word of the slot's length and
agreeing with every letter already in the grid.

Per slot, the words are the lexicon's words that fit the slot's pattern when there are at most
``cap`` of them; a slot with more (an empty slot: tens of thousands of five-letter words) gets the
pattern itself, any A-Z letter in its open cells, which is exactly what the gate's letter check
accepts there: a superset of the lexicon words, so no candidate the enumeration offers is lost.
With the lexicon gates on (``lexicon_gate``, ``require_word``) a derived word may still be refused
(a fill that leaves another slot without a word): the grammar is then a superset, and the gate
decides, as it always does."""

from __future__ import annotations

from typing import Any

from solver.grammar import alternation, grammar, literal, optional
from verifiers.crossword import EMPTY

__all__ = ["CONFIDENCES", "CrosswordsGrammar"]

CONFIDENCES = ("certain", "high", "medium", "low")  # the labels of the propose prompt


class CrosswordsGrammar:
    """``ThoughtGrammar`` of the mini crosswords (a part the task composes). ``words`` gives the
    lexicon (the task's ``Words``: loaded on first use, as the task loads it)."""

    def __init__(self, words: Any, cap: int = 300) -> None:
        self.words_of = words
        self.cap = cap

    def words(self, state: Any, slot: Any) -> list[str] | None:
        """The lexicon's words that fit ``slot`` now (upper case), or None when more than ``cap``."""
        pattern = state.grid.pattern(slot).replace(EMPTY, "?").lower()
        idx = self.words_of.lexicon.index(slot.length)
        hits = idx.indices(pattern)
        if hits.size > self.cap:
            return None
        return [idx.words[i].upper() for i in hits]

    def thought_grammar(self, state: Any) -> str | None:
        """GBNF of one candidate line; None when every slot is filled."""
        grid = state.grid
        slots = grid.open_slots()
        if not slots:
            return None
        rules: dict[str, str] = {}
        options = []
        for slot in slots:
            words = self.words(state, slot)
            if words:
                body = alternation(literal(w) for w in words)
            else:  # too many words to list, or none in the lexicon: the letters the gate accepts
                body = " ".join(literal(ch) if ch != EMPTY else "[A-Z]" for ch in grid.pattern(slot))
            rules[f"w-{slot.name}"] = body
            options.append(f"{literal(slot.name + '. ')} w-{slot.name}")
        conf = optional(literal(" (") + " " + alternation(literal(c) for c in CONFIDENCES) + " " + literal(")"))
        return grammar({"root": f"{alternation('(' + o + ')' for o in options)} {conf}", **rules})
