"""5x5 mini crosswords as a Task: a state is the board, a thought is ``h1. MOTOR`` (slot, word).

The gate (``verifiers.crossword.check_word``) enforces facts only: the slot exists, the word has
the slot's length, letters only, and agrees with every letter in the grid. Lexicon membership and
fillability are not facts (the true answer may be missing from any lexicon), so they are a
configurable extra gate (``lexicon_gate``) or an evaluator (``fillable``), never silently on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from lexicon import Lexicon, default_lexicon
from solver.task import Thought
from tasks.crosswords import prompts
from tasks.crosswords.data import parse_puzzle_text
from tasks.crosswords.grammar import CrosswordsGrammar
from verifiers.crossword import (
    EMPTY,
    LAYOUT_5X5,
    FillLevel,
    Grid,
    Slot,
    check_word,
    consistent,
    fillability,
    parse_board,
    report_grid,
    report_rules,
)
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Solved, Valid, Verdict

CONFIDENCE = {"certain": 1.0, "high": 0.75, "medium": 0.5, "low": 0.25}
# re.ASCII: with IGNORECASE alone, [A-Za-z] also matches look-alikes such as the long s, the dotless
# i and the Kelvin sign, which upper() then turns into A-Z letters.
_THOUGHT_RE = re.compile(r"^\s*([hv])\s*([1-9])\s*[.:)\-]?\s*([A-Za-z][A-Za-z ]*?)\s*(?:\(\s*([a-z]+)\s*\))?\s*$",
                         re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, slots=True)
class CrosswordState:
    """The board (25 cells, ``_`` empty). Equal boards are the same state; the clues, the answer
    key (used only by the exact oracle) and the steps taken are carried along, not compared."""

    board: str
    clues: tuple[str, ...] = field(compare=False)
    truth: str | None = field(default=None, compare=False, repr=False)
    steps: tuple[str, ...] = field(default=(), compare=False)

    @property
    def grid(self) -> Grid:
        return Grid(LAYOUT_5X5, self.board)

    def clue(self, slot: Slot) -> str:
        return self.clues[LAYOUT_5X5.names.index(slot.name)]


def parse_thought(text: str) -> tuple[str, str] | Invalid:
    """``h1. MOTOR``, ``v3: tarot (high)``, ``H2 motor`` -> ("h1", "MOTOR")."""
    m = _THOUGHT_RE.match(text[:120])
    if not m:
        return Invalid(f"{text[:40]!r} is not of the form 'h1. WORD'")
    word = m.group(3).replace(" ", "")
    return f"{m.group(1).lower()}{m.group(2)}", word.upper()


def letters_of(state: CrosswordState, slot: Slot) -> str:
    return " ".join(state.grid.pattern(slot))


class Crosswords:
    """The mini-crossword task. ``lexicon_gate``: extra, non-factual gate on each new state
    (none, slots, arc, full); ``require_word``: a placed word must be in the lexicon;
    ``candidates``: lexicon words per open slot offered by ``legal_thoughts``; ``stop_when_full``:
    a complete grid ends the search (else it is judged like any other state)."""

    name = "crosswords"
    max_depth = 10

    def __init__(self, lexicon: Lexicon | None = None, *, lexicon_gate: FillLevel = "none",
                 require_word: bool = False, candidates: int = 10, fill_level: FillLevel = "arc",
                 stop_when_full: bool = True) -> None:
        self._lexicon = lexicon
        self.lexicon_gate: FillLevel = lexicon_gate
        self.require_word = require_word
        self.candidates = candidates
        self.fill_level: FillLevel = fill_level
        self.stop_when_full = stop_when_full
        self.parts = (*getattr(self, "parts", ()), CrosswordsGrammar(self))

    @property
    def lexicon(self) -> Lexicon:
        if self._lexicon is None:
            self._lexicon = default_lexicon()
        return self._lexicon

    # ---- states and the gate ----------------------------------------------------------------

    def root(self, puzzle: str) -> CrosswordState:
        p = parse_puzzle_text(puzzle)
        return CrosswordState(Grid.empty(LAYOUT_5X5).cells, p.clues, p.answer)

    def depth(self, state: CrosswordState) -> int:
        return len(state.steps)

    def check(self, state: CrosswordState, thought: Thought) -> Verdict[CrosswordState]:
        parsed = parse_thought(thought.text)
        if isinstance(parsed, Invalid):
            return parsed
        slot_name, word = parsed
        grid = state.grid
        if slot_name in LAYOUT_5X5.names and not grid.is_open(LAYOUT_5X5.slot(slot_name)):
            return Invalid(f"{slot_name} is already filled ({grid.pattern(LAYOUT_5X5.slot(slot_name))})")
        new = check_word(grid, slot_name, word)
        if isinstance(new, Invalid):
            return new
        if self.require_word and word not in self.lexicon:
            return Invalid(f"{slot_name} {word}: not in the lexicon (a configured gate, not a fact)")
        if self.lexicon_gate != "none":
            fill = fillability(new, self.lexicon, self.lexicon_gate)
            if fill.ok is False:
                return Invalid(f"{slot_name} {word}: {fill.reason} (lexicon gate {self.lexicon_gate}, not a fact)")
        nxt = CrosswordState(new.cells, state.clues, state.truth, state.steps + (f"{slot_name}. {word}",))
        if new.is_full() and self.stop_when_full:
            # Search stops at the first complete grid. With stop_when_full=False a complete grid
            # is an ordinary state: the evaluator judges it and search goes on (oracle runs).
            return Solved(nxt, "grid complete and consistent; not checked against the clues")
        return Valid(nxt)

    def open_slots(self, state: CrosswordState) -> list[Slot]:
        return state.grid.open_slots()

    def legal_thoughts(self, state: CrosswordState) -> Sequence[Thought]:
        """The ``candidates`` most frequent lexicon words of each open slot, most constrained slot
        first (fewest matching words), so unranked enumeration tries the tightest slot first."""
        grid = state.grid
        per_slot = []
        for s in grid.open_slots():
            pat = grid.pattern(s).replace(EMPTY, "?")
            idx = self.lexicon.index(s.length)
            hits = idx.indices(pat.lower())
            per_slot.append((hits.size, s, [idx.words[i] for i in hits[: self.candidates]]))
        per_slot.sort(key=lambda t: t[0])
        return [Thought(f"{s.name}. {w.upper()}") for _, s, words in per_slot for w in words]

    # ---- prompts and parsers ----------------------------------------------------------------

    def clue_lines(self, state: CrosswordState, only_open: bool = False) -> str:
        grid = state.grid
        return "\n".join(f"{s.name}. {state.clue(s)}: {letters_of(state, s)}" for s in LAYOUT_5X5.slots
                         if not only_open or grid.is_open(s))

    def propose_prompt(self, state: CrosswordState, chat: bool) -> str:
        return prompts.PROPOSE_FEWSHOT.format(clues=self.clue_lines(state))

    def sample_prompt(self, state: CrosswordState, chat: bool) -> str:
        return prompts.SAMPLE_FEWSHOT.format(clues=self.clue_lines(state))

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

    def clue_value_prompt(self, state: CrosswordState, slot: Slot) -> str:
        return prompts.CLUE_VALUE_FEWSHOT.format(clue=state.clue(slot), letters=letters_of(state, slot))

    def rank_prompt(self, state: CrosswordState, slot: Slot) -> str:
        return prompts.RANK_FEWSHOT.format(clue=state.clue(slot), letters=letters_of(state, slot))

    def value_prompt(self, state: CrosswordState, chat: bool) -> str:
        return prompts.STATE_VALUE_FEWSHOT.format(clues=self.clue_lines(state, only_open=True))

    def parse_value(self, text: str) -> str | None:
        m = re.search(r"\b(sure|likely|maybe|impossible)\b", text.lower())
        if not m:
            return None
        return "likely" if m.group(1) == "maybe" else m.group(1)

    def vote_prompt(self, states: Sequence[CrosswordState], chat: bool) -> str:
        choices = "\n\n".join(f"Choice {k}:\n{s.grid.render()}" for k, s in enumerate(states, 1))
        return prompts.VOTE_FEWSHOT.format(choices=choices)

    # ---- oracle and answers -----------------------------------------------------------------

    def oracle(self, state: CrosswordState) -> bool:
        """Exact: every filled letter agrees with the answer board (needs the board)."""
        if state.truth is None:
            raise ValueError("the oracle evaluator needs the puzzle's answer board")
        return consistent(state.board, state.truth)

    def answer(self, state: CrosswordState) -> str:
        return state.board

    def options(self) -> dict[str, Any]:
        """What rebuilds this task's gate (recorded in traces)."""
        return {"lexicon_gate": self.lexicon_gate, "require_word": self.require_word,
                "candidates": self.candidates, "fill_level": self.fill_level, "stop_when_full": self.stop_when_full}

    def rules(self, puzzle: str) -> str:
        return report_rules(parse_puzzle_text(puzzle).answer is not None)

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every check of ``answer`` (a board of 25 letters, or the ten words h1-h5 v1-v5) from the
        puzzle text alone: complete grid, crossings agree, entries in the lexicon (reported
        only), and the answer key when the puzzle has one. Without a key it is never verified."""
        try:
            p = parse_puzzle_text(puzzle)
        except ValueError as exc:
            return AnswerReport(report_rules(False), (Check("the puzzle is readable", False, str(exc)),))
        return report_grid(answer, p.answer, self.lexicon)

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        """The rules of the puzzle without its answer key (what a search may know): a complete
        grid whose crossings agree. The key decides ``verified`` in ``report_answer`` only; were it
        used here, search would go on past wrong grids until the key's grid, using the key."""
        try:
            parse_puzzle_text(puzzle)
        except ValueError as exc:
            return Invalid(str(exc))
        report = report_grid(answer, None, None)
        failed = next((c for c in report.checks if c.required and c.passed is False), None)
        return None if failed is None else Invalid(f"{failed.name}: {failed.detail}" if failed.detail else failed.name)

    def describe(self, state: CrosswordState) -> str:
        return state.board

    # ---- task-specific generators and evaluators (picked by name, see solver/run.py) --------

    def tune(self, generator: Any, evaluator: Any) -> tuple[Any, Any]:
        """``enumerate-rank`` here ranks lexicon candidates by the likelihood of the word after its
        own clue (the generic one would score every thought after one shared prompt)."""
        from tasks.crosswords.generators import ClueRank

        if generator.name == "enumerate-rank":
            return ClueRank(), evaluator
        return generator, evaluator

    def restore(self, puzzle: str, description: str) -> CrosswordState:
        """The state whose ``describe`` text is ``description`` (for audits of old traces)."""
        p = parse_puzzle_text(puzzle)
        return CrosswordState(parse_board(description), p.clues, p.answer)

    def make_evaluator(self, name: str, settings: Any) -> Any:
        from tasks.crosswords.evaluators import ClueJudge, Fillable

        if name == "clues":
            return ClueJudge()
        if name == "fillable":
            return Fillable(self.fill_level)
        return None
