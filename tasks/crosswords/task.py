"""5x5 mini crosswords as a Task: a state is the board, a thought is ``h1. MOTOR`` (slot, word).

The gate (``verifiers.crossword.check_word``) enforces facts only: the slot exists, the word has
the slot's length, letters only, and agrees with every letter in the grid. Lexicon membership and
fillability are not facts (the true answer may be missing from any lexicon), so they are a
configurable extra gate (``lexicon_gate``) or an evaluator (``fillable``), never silently on.

The class holds the five methods search and verification need; its optional parts (candidate
words, prompts, the oracle, restore, options, its own evaluators and ranking, the key-free answer
rules) are the objects in ``parts``, from ``parts.py``, ``evaluators.py`` and ``generators.py``.
"""

from __future__ import annotations

from lexicon import Lexicon
from solver.task import Thought
from tasks.crosswords.data import parse_puzzle_text
from tasks.crosswords.evaluators import ClueEvaluators
from tasks.crosswords.generators import ClueRanking
from tasks.crosswords.grammar import CrosswordsGrammar
from tasks.crosswords.parts import (
    CONFIDENCE,
    CandidateWords,
    CluePrompts,
    GateOptions,
    GridRules,
    KeyOracle,
    RestoreBoard,
)
from tasks.crosswords.state import CrosswordState, Words, letters_of, parse_thought
from verifiers.crossword import LAYOUT_5X5, FillLevel, Grid, check_word, fillability, report_grid, report_rules
from verifiers.report import AnswerReport, Check
from verifiers.verdict import Invalid, Solved, Valid, Verdict

__all__ = ["CONFIDENCE", "CrosswordState", "Crosswords", "letters_of", "parse_thought"]


class Crosswords:
    """The mini-crossword task. ``lexicon_gate``: extra, non-factual gate on each new state
    (none, slots, arc, full); ``require_word``: a placed word must be in the lexicon;
    ``candidates``: lexicon words per open slot offered by its legal moves (None: every word
    of the most constrained slot that fits it and its crossings; a cut is always reported); ``stop_when_full``:
    a complete grid ends the search (else it is judged like any other state)."""

    name = "crosswords"
    max_depth = 10

    def __init__(self, lexicon: Lexicon | None = None, *, lexicon_gate: FillLevel = "none",
                 require_word: bool = False, candidates: int | None = 10, fill_level: FillLevel = "arc",
                 stop_when_full: bool = True) -> None:
        self.words = Words(lexicon)
        self.lexicon_gate: FillLevel = lexicon_gate
        self.require_word = require_word
        self.candidates = candidates
        self.fill_level: FillLevel = fill_level
        self.stop_when_full = stop_when_full
        options = {"lexicon_gate": lexicon_gate, "require_word": require_word, "candidates": candidates,
                   "fill_level": fill_level, "stop_when_full": stop_when_full}
        if candidates is not None and candidates < 1:
            raise ValueError("candidates must be at least 1 (or None: every word)")
        self.parts = (CandidateWords(self.words, candidates, lexicon_gate), CluePrompts(), KeyOracle(), RestoreBoard(),
                      GateOptions(options), ClueEvaluators(fill_level), ClueRanking(), GridRules(),
                      CrosswordsGrammar(self.words))

    def root(self, puzzle: str) -> CrosswordState:
        p = parse_puzzle_text(puzzle)
        return CrosswordState(Grid.empty(LAYOUT_5X5).cells, p.clues, p.answer)

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
        if self.require_word and word not in self.words.lexicon:
            return Invalid(f"{slot_name} {word}: not in the lexicon (a configured gate, not a fact)")
        if self.lexicon_gate != "none":
            fill = fillability(new, self.words.lexicon, self.lexicon_gate)
            if fill.ok is False:
                return Invalid(f"{slot_name} {word}: {fill.reason} (lexicon gate {self.lexicon_gate}, not a fact)")
        nxt = CrosswordState(new.cells, state.clues, state.truth, state.steps + (f"{slot_name}. {word}",))
        if new.is_full() and self.stop_when_full:
            # Search stops at the first complete grid. With stop_when_full=False a complete grid
            # is an ordinary state: the evaluator judges it and search goes on (oracle runs).
            return Solved(nxt, "grid complete and consistent; not checked against the clues")
        return Valid(nxt)

    def answer(self, state: CrosswordState) -> str:
        return state.board

    def report_answer(self, puzzle: str, answer: str) -> AnswerReport:
        """Every check of ``answer`` (a board of 25 letters, or the ten words h1-h5 v1-v5) from the
        puzzle text alone: complete grid, crossings agree, entries in the lexicon (reported
        only), and the answer key when the puzzle has one. Without a key it is never verified."""
        try:
            p = parse_puzzle_text(puzzle)
        except ValueError as exc:
            return AnswerReport(report_rules(False), (Check("the puzzle is readable", False, str(exc)),))
        return report_grid(answer, p.answer, self.words.lexicon)

    def describe(self, state: CrosswordState) -> str:
        return state.board
