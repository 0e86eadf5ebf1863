"""The optional parts of the mini-crossword task, each a small object the task composes: candidate
words from the lexicon, the prompts and their parsers, the exact oracle, restore from a trace, the
options, its own evaluators and ranking, and the answer rules without the key."""

from __future__ import annotations

import functools
import re
from typing import Any, Sequence

from solver.task import Thought
from tasks.crosswords import prompts
from tasks.crosswords.data import parse_puzzle_text
from tasks.crosswords.state import CrosswordState, Words, letters_of, parse_thought
from verifiers.crossword import EMPTY, LAYOUT_5X5, Grid, Slot, arc_domains, consistent, parse_board, report_grid
from verifiers.verdict import Invalid

__all__ = ["CONFIDENCE", "CandidateWords", "CluePrompts", "GateOptions", "GridRules", "KeyOracle", "RestoreBoard",
           "clue_lines", "clue_value_prompt", "rank_prompt"]

CONFIDENCE = {"certain": 1.0, "high": 0.75, "medium": 0.5, "low": 0.25}


class CandidateWords:
    """LegalMoves and LimitedMoves: the lexicon words a search may place, and what a limit cut.

    ``candidates`` None (every word): the open slot with the fewest words that fit its letters
    and its crossings (arc consistency over the open slots) and *all* of those words, most
    frequent first. Branching on one slot over its whole domain is complete for fills whose ten
    entries are all lexicon words: such a fill survives arc consistency, so its word for the slot
    is among the thoughts at every state on its way. ``candidates`` N: the N most frequent words
    fitting each open slot's letters, most constrained slot first (the paper's setting for a
    model to choose from); what that cut is reported (``enumeration_cut``), never silent.
    Also the lexicon of the task's own ranking and fillability evaluator."""

    def __init__(self, words: Words, candidates: int | None, lexicon_gate: str = "none") -> None:
        self.words, self.candidates, self.lexicon_gate = words, candidates, lexicon_gate

    @property
    def lexicon(self) -> Any:
        return self.words.lexicon

    def slot_words(self, state: CrosswordState) -> tuple[list[tuple[Slot, list[str]]], int]:
        """Per slot offered, most constrained first, its words (upper case, most frequent first);
        and how many fitting words the ``candidates`` limit left out (0 when none)."""
        return _slot_words(self.lexicon, state.board, self.candidates)

    def legal_thoughts(self, state: CrosswordState) -> Sequence[Thought]:
        per_slot, _cut = self.slot_words(state)
        return [Thought(f"{s.name}. {w}") for s, words in per_slot for w in words]

    def enumeration_cut(self, state: CrosswordState) -> tuple[int, str] | None:
        if self.candidates is not None:
            _per_slot, cut = self.slot_words(state)
            return (cut, f"--candidates {self.candidates} per slot") if cut else None
        if self.lexicon_gate == "none":
            # Complete for fills of lexicon words only; the gate (facts only) also accepts fills
            # whose crossing entries are not words, which this enumeration never offers.
            return 0, "only fills whose ten entries are all lexicon words are enumerated"
        return None


@functools.lru_cache(maxsize=4)
def _slot_words(lexicon: Any, board: str, candidates: int | None) -> tuple[list[tuple[Slot, list[str]]], int]:
    """The enumeration of ``CandidateWords`` (a pure function of its arguments, memoised: the
    gated step asks for the cut of the state it has just enumerated)."""
    grid = Grid(LAYOUT_5X5, board)
    if candidates is None:
        doms, reason = arc_domains(grid, lexicon)
        if reason or not doms:
            return [], 0  # some open slot has no lexicon word left: no fill of lexicon words exists
        name = min(doms, key=lambda n: (doms[n].size, LAYOUT_5X5.names.index(n)))
        slot = LAYOUT_5X5.slot(name)
        words = lexicon.index(slot.length).words
        return [(slot, [words[i].upper() for i in doms[name]])], 0
    per_slot = []
    cut = 0
    for s in grid.open_slots():
        idx = lexicon.index(s.length)
        hits = idx.indices(grid.pattern(s).replace(EMPTY, "?").lower())
        cut += max(0, int(hits.size) - candidates)
        per_slot.append((hits.size, s, [idx.words[i].upper() for i in hits[:candidates]]))
    per_slot.sort(key=lambda t: t[0])
    return [(s, words) for _, s, words in per_slot], cut


def clue_lines(state: CrosswordState, only_open: bool = False) -> str:
    grid = state.grid
    return "\n".join(f"{s.name}. {state.clue(s)}: {letters_of(state, s)}" for s in LAYOUT_5X5.slots
                     if not only_open or grid.is_open(s))


def clue_value_prompt(state: CrosswordState, slot: Slot) -> str:
    """The ``clues`` evaluator's prompt: can this slot's clue still be answered with its letters."""
    return prompts.CLUE_VALUE_FEWSHOT.format(clue=state.clue(slot), letters=letters_of(state, slot))


def rank_prompt(state: CrosswordState, slot: Slot) -> str:
    """The clue-ranking generator's prompt: candidate words follow it, each scored."""
    return prompts.RANK_FEWSHOT.format(clue=state.clue(slot), letters=letters_of(state, slot))


class CluePrompts:
    """ProposePrompts, SamplePrompts, ValuePrompts and VotePrompt: the paper's prompts."""

    def propose_prompt(self, state: CrosswordState, chat: bool) -> str:
        return prompts.PROPOSE_FEWSHOT.format(clues=clue_lines(state))

    def sample_prompt(self, state: CrosswordState, chat: bool) -> str:
        return prompts.SAMPLE_FEWSHOT.format(clues=clue_lines(state))

    def parse_proposals(self, state: CrosswordState, text: str) -> list[Thought]:
        """Candidate lines until the model starts a new example; higher confidence first (stable),
        the confidence becoming the thought's prior."""
        out: list[tuple[float, Thought]] = []
        for line in text.splitlines()[:40]:
            low = line.strip().lower()
            if low.startswith(("clues", "candidates")):
                break
            if not low:
                continue
            parsed = parse_thought(line.lstrip(" -*\u2022"))
            if isinstance(parsed, Invalid):
                continue
            m = re.search(r"\(\s*([a-z]+)\s*\)", low)
            conf = CONFIDENCE.get(m.group(1), 0.1) if m else 0.1
            out.append((conf, Thought(f"{parsed[0]}. {parsed[1]}", conf)))
        out.sort(key=lambda p: -p[0])
        return [t for _, t in out]

    def value_prompt(self, state: CrosswordState, chat: bool) -> str:
        return prompts.STATE_VALUE_FEWSHOT.format(clues=clue_lines(state, only_open=True))

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|maybe|impossible)\b", text.lower())
        if not m:
            return None
        return "likely" if m.group(1) == "maybe" else m.group(1)

    def vote_prompt(self, states: Sequence[CrosswordState], chat: bool) -> str:
        choices = "\n\n".join(f"Choice {k}:\n{s.grid.render()}" for k, s in enumerate(states, 1))
        return prompts.VOTE_FEWSHOT.format(choices=choices)


class KeyOracle:
    """HasOracle: exact, every filled letter agrees with the answer board (needs the board)."""

    def oracle(self, state: CrosswordState) -> bool:
        if state.truth is None:
            raise ValueError("the oracle evaluator needs the puzzle's answer board")
        return consistent(state.board, state.truth)


class RestoreBoard:
    """Restorable: the state whose ``describe`` text is ``description`` (for audits of old traces)."""

    def restore(self, puzzle: str, description: str) -> CrosswordState:
        p = parse_puzzle_text(puzzle)
        return CrosswordState(parse_board(description), p.clues, p.answer)


class GateOptions:
    """HasOptions: what rebuilds the task's gate (recorded in traces)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self._options = dict(options)

    def options(self) -> dict[str, Any]:
        return dict(self._options)


class GridRules:
    """AnswerRules: the rules of the puzzle without its answer key (what a search may know): a
    complete grid whose crossings agree. The key decides ``verified`` in ``report_answer`` only;
    were it used here, search would go on past wrong grids until the key's grid, using the key."""

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        try:
            parse_puzzle_text(puzzle)
        except ValueError as exc:
            return Invalid(str(exc))
        report = report_grid(answer, None, None)
        failed = next((c for c in report.checks if c.required and c.passed is False), None)
        return None if failed is None else Invalid(f"{failed.name}: {failed.detail}" if failed.detail else failed.name)
