"""The capabilities only the baselines and the bench ask for, beside the baselines: the paper's
prompting baselines (``solver.baselines``), a task's own baselines, and ``tot bench``'s extras.
The capabilities a search, generator or evaluator asks for are in ``solver.task_capabilities``; these are
looked up the same way (``find(task, BaselinePrompts)``) and said the same way when missing.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Hashable, Mapping, Protocol, runtime_checkable

from solver.task import Thought
from solver.task_capabilities import register_capabilities

__all__ = ["BASELINE_CAPABILITIES", "AnswerGrammar", "AnswerKey", "AnswerParser", "BaselinePrompts",
           "BaselineStops", "BaselineTokens", "ChainSteps", "OwnBaselines", "RefinePrompt", "SoftScore"]


@runtime_checkable
class AnswerParser(Protocol):
    """Reads an answer out of a whole model output (the baselines, a task's own baselines)."""

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The answer in a model output, unchecked; None when there is none. Never evaluates."""


@runtime_checkable
class AnswerGrammar(Protocol):
    """The grammar (GBNF) of a baseline's whole model output for a puzzle, written from the task's
    answer format and rules: every string it derives is read by the task's ``AnswerParser``, and
    every valid answer, written in the format, is derivable (a superset of the valid answers: the
    exact check still judges each one). ``cot`` True: the chain-of-thought prompt's output (steps,
    then the answer); False: the IO prompt's. The io, cot, cot-sc and best-of-k baselines decode
    under it where the backend can (``--grammar on``)."""

    def answer_grammar(self, puzzle: str, cot: bool) -> str | None:
        """GBNF of one model output; None where none is written for this puzzle."""


@runtime_checkable
class OwnBaselines(Protocol):
    """A task's own baselines by method name (writing's coherence-judged refine, Sudoku's zero-,
    one- and few-shot prompts): each gets the ``solver.baselines.BaselineRun`` of one
    puzzle, asks the model through it and returns the answer it picked (or None); the run reads,
    counts, traces and checks every answer. Needs ``AnswerParser`` too."""

    @property
    def own_baselines(self) -> Mapping[str, Callable[[Any], Awaitable[str | None]]]:
        """Method name -> the baseline (an async function of a BaselineRun)."""


@runtime_checkable
class BaselinePrompts(Protocol):
    """The paper's baselines (``io``, ``cot``, ``cot-sc``, ``io-best``, ``cot-best``):
    few-shot prompts and the parser of an answer. The answer is checked by the core's
    ``solver.expansion.rule_failure``."""

    def io_prompt(self, puzzle: str, chat: bool) -> str:
        """Few-shot prompt asking for the answer directly."""

    def cot_prompt(self, puzzle: str, chat: bool) -> str:
        """Few-shot prompt asking for intermediate steps, then the answer."""

    def parse_answer(self, puzzle: str, text: str) -> str | None:
        """The answer in a model output, unchecked; None when there is none. Never evaluates."""


@runtime_checkable
class RefinePrompt(Protocol):
    """The ``refine`` baseline: a prompt with the previous attempt and the checker's reason."""

    def refine_prompt(self, puzzle: str, attempt: str, feedback: str, chat: bool) -> str:
        """Prompt for a new attempt after ``attempt`` failed with ``feedback``."""


@runtime_checkable
class BaselineStops(Protocol):
    """Stop strings for the baselines' model calls (default: none)."""

    baseline_stop: tuple[str, ...]


@runtime_checkable
class BaselineTokens(Protocol):
    """Token limits per baseline (``{"io": 400, "cot": 500}``) for answers longer than the
    defaults allow (writing: whole passages), used by ``tot bench``."""

    baseline_tokens: dict[str, int]


@runtime_checkable
class AnswerKey(Protocol):
    """What makes two answers the same vote in ``cot-sc`` (default: the text with its spaces
    normalised)."""

    def answer_key(self, answer: str) -> Hashable:
        """The key under which ``answer`` is counted."""


@runtime_checkable
class ChainSteps(Protocol):
    """The steps of a chain-of-thought answer as thoughts, so that failure analysis
    (``chain_lost_at``, with ``HasOracle``) can say at which step a chain lost the solution."""

    def chain_thoughts(self, puzzle: str, text: str) -> list[Thought]:
        """The chain's steps, in order (unchecked)."""


@runtime_checkable
class SoftScore(Protocol):
    """A soft model judgement of a final answer (writing: coherence 1-10), for ``tot bench
    --score-samples``. Never part of the gate."""

    soft_score_name: str

    async def soft_score(self, client: Any, answer: str, n: int, *, seed: int | None = 0,
                         chat: bool = False) -> tuple[int | None, ...]:
        """``n`` sampled scores of ``answer`` (None where a sample gave none)."""


# One line each, for error messages (registered with solver.task_capabilities.CAPABILITIES).
BASELINE_CAPABILITIES: dict[type, str] = {
    AnswerParser: "an answer parser (AnswerParser: parse_answer(puzzle, text))",
    AnswerGrammar: "a grammar of baseline answers (AnswerGrammar: answer_grammar(puzzle, cot) -> GBNF | None)",
    OwnBaselines: "baselines of its own (OwnBaselines: own_baselines)",
    BaselinePrompts: "baseline prompts and an answer parser (BaselinePrompts: io_prompt, cot_prompt, "
                     "parse_answer)",
    RefinePrompt: "a refine prompt (RefinePrompt: refine_prompt(puzzle, attempt, feedback, chat))",
    BaselineStops: "baseline stop strings (BaselineStops: baseline_stop)",
    BaselineTokens: "baseline token limits (BaselineTokens: baseline_tokens)",
    AnswerKey: "an answer key (AnswerKey: answer_key(answer))",
    ChainSteps: "chain steps (ChainSteps: chain_thoughts(puzzle, text))",
    SoftScore: "a soft scorer (SoftScore: soft_score(client, answer, n), soft_score_name)",
}
register_capabilities(BASELINE_CAPABILITIES)
