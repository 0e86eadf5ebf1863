"""The optional parts of a Task, each a named protocol, and the one check that a run has them.

A task is the core ``solver.task.Task`` (root, check, answer, report_answer, describe) plus any
of the capabilities below, given by the task itself or by one of the part objects in its ``parts``
tuple. Search, generators, evaluators, baselines and the ``tot`` commands ask for a capability with
``find(task, Capability)`` / ``require(...)`` (never by probing attribute names), and a run
that needs one the task lacks stops before it starts with ``MissingCapability``: one line naming
who needs what, e.g. "evaluator `oracle` needs a task with an exact oracle (HasOracle:
oracle(state) -> bool); MyTask has none". docs/task-protocol.md lists who needs which.

States are typed ``Any`` here: a task's own state type fits every capability.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, TypeVar, cast, runtime_checkable

from solver.task import Restorable, Task, Thought
from verifiers.verdict import Invalid, Verdict

__all__ = [
    "CAPABILITIES", "CORE", "AnswerRules", "ChoicePrompt", "DeclaresNeeds", "HasDistance", "HasOptions", "HasOracle",
    "LegalMoves", "LimitedMoves", "MissingCapability", "Needs", "OwnEvaluators", "OwnGenerators", "ProposePrompts",
    "Restorable", "SamplePrompts", "ThoughtGrammar", "TrainingPrompts", "TunesParts", "Unchecked", "ValuePrompts",
    "VotePrompt", "missing", "missing_message", "register_capabilities", "find", "has", "needs_of", "no_model",
    "require", "require_core", "require_model", "require_parts", "task_options",
]


class MissingCapability(ValueError):
    """A generator, evaluator, search or command needs a part the task (or the run) lacks. The
    message is one line naming both; the CLI prints it as ``tot: error: ...`` and exits with 2."""


# ---- the capabilities ------------------------------------------------------------------------

@runtime_checkable
class LegalMoves(Protocol):
    """Every legal next thought of a state, exactly (the checker's own enumeration). Used by the
    ``enumerate``, ``enumerate-rank`` and ``enumerate-choice`` generators; with them the complete
    search (``tot-complete``) is a proof when it finds nothing. Also tells the complete search
    whether a state at the depth limit could have gone on."""

    def legal_thoughts(self, state: Any) -> Sequence[Thought]:
        """Every legal next thought, each of which ``check`` accepts."""


@runtime_checkable
class LimitedMoves(Protocol):
    """A legal-move enumeration that a limit may cut (crosswords: ``--candidates`` words per
    slot). The gated step asks after every enumerating expansion, so that a run cut by the limit
    says so (trace, result, output) and never claims that no solution exists."""

    def enumeration_cut(self, state: Any) -> tuple[int, str] | None:
        """None when ``legal_thoughts(state)`` is every legal thought the enumeration knows; else
        (how many it left out, the limit that cut them, e.g. ``--candidates 10 per slot``)."""


@runtime_checkable
class ProposePrompts(Protocol):
    """The ``propose`` generator's prompt (several next thoughts, one per line) and the parser of
    its answer. ``enumerate-rank`` scores each legal thought after this prompt."""

    def propose_prompt(self, state: Any, chat: bool) -> str:
        """Prompt asking for several next thoughts, one per line."""

    def parse_proposals(self, state: Any, text: str) -> list[Thought]:
        """Split model text into candidate thoughts (unchecked). Never evaluates text."""


@runtime_checkable
class SamplePrompts(Protocol):
    """The ``sample`` generator's prompt (exactly one next thought) and the parser of its answer
    (the first thought it finds is taken)."""

    def sample_prompt(self, state: Any, chat: bool) -> str:
        """Prompt asking for exactly one next thought."""

    def parse_proposals(self, state: Any, text: str) -> list[Thought]:
        """Split model text into candidate thoughts (unchecked). Never evaluates text."""


@runtime_checkable
class ValuePrompts(Protocol):
    """The ``value`` evaluator's prompt (can this state still be solved: sure/likely/impossible)
    and the parser of the label. ``likelihood`` scores the labels after the same prompt."""

    def value_prompt(self, state: Any, chat: bool) -> str:
        """Prompt asking whether the state can still be solved (sure/likely/impossible)."""

    def parse_value(self, text: str) -> str | None:
        """The value label in a model answer, or None."""


@runtime_checkable
class VotePrompt(Protocol):
    """The ``vote`` evaluator's prompt: which of the numbered states is most promising."""

    def vote_prompt(self, states: Sequence[Any], chat: bool) -> str:
        """Prompt asking which of the numbered states is most promising."""


@runtime_checkable
class ChoicePrompt(Protocol):
    """The ``enumerate-choice`` generator's prompt: the legal thoughts listed, numbered; the
    model answers with a number."""

    def choice_prompt(self, state: Any, thoughts: Sequence[Thought], chat: bool) -> str:
        """Prompt listing ``thoughts`` numbered from 1 and asking for the number of the best."""


@runtime_checkable
class HasOracle(Protocol):
    """Exact ground truth for a state. Used by the ``oracle`` evaluator (ablations, upper
    bounds), ``tot audit`` (false-prune rates), ``tot solve`` (the verdict beside a proof of no
    solution) and failure analysis of baselines."""

    def oracle(self, state: Any) -> bool:
        """Can this state still be completed to a solution? Never calls a model."""


@runtime_checkable
class HasDistance(Protocol):
    """Exact distance to a solution, where the task can prove it (planning: the length of an
    optimal plan). Used by the label export (``solver.tools.labels``): a step is good when it keeps a
    solution reachable and shortens the distance by one."""

    def distance(self, state: Any) -> int | None:
        """Steps of the shortest way from ``state`` to a solution; -1 when none exists (proved);
        None when it could not be decided (e.g. a time limit ran out). Never calls a model."""


@runtime_checkable
class TrainingPrompts(Protocol):
    """Short zero-shot prompts for exported training data and for the adapters trained on it
    (``tot export``, ``tot train``): a trained model needs no few-shot block. A model run with an
    adapter trained on them gets these prompts in place of the few-shot ones (the ``value`` and
    ``likelihood`` evaluators; ``propose``, ``sample`` and ``enumerate-rank``)."""

    def train_value_prompt(self, state: Any) -> str:
        """Prompt after which the value label follows (`` sure`` or `` impossible``)."""

    def train_step_prompt(self, state: Any) -> str:
        """Prompt, ending in a newline, after which one next thought follows on its own line."""


@runtime_checkable
class Unchecked(Protocol):
    """The paper's unchecked behaviour, for the no-gate ablation (``gate=False``, bench's
    ``-nogate`` methods, ``tot verify --trace`` of such runs): the next state as the model's
    thought claims it, for a thought the gate refused."""

    def apply_unchecked(self, state: Any, thought: Thought) -> Verdict[Any]:
        """The state the thought claims (Valid/Solved), or Invalid when it cannot even be read."""


@runtime_checkable
class AnswerRules(Protocol):
    """The puzzle's rules without any answer key, for tasks such as crosswords whose answer
    report includes an answer key: what search, the baselines and ``tot verify --trace`` use to
    refuse an answer that breaks a rule (``solver.expansion.rule_failure``). A task without it is
    judged by its answer report."""

    def verify_answer(self, puzzle: str, answer: str) -> Invalid | None:
        """Invalid(first failed rule) or None, from the puzzle text alone."""


@runtime_checkable
class HasOptions(Protocol):
    """What rebuilds the task (e.g. Sudoku's rule set), recorded in each trace's ``start`` event;
    the plugin's ``task_from_options`` reads it back (``tot audit``, ``tot verify --trace``)."""

    def options(self) -> dict[str, Any]:
        """JSON-able settings of this task instance."""


@runtime_checkable
class OwnGenerators(Protocol):
    """Generator names of the task's own (writing: ``constrained``), used by ``solver.run``."""

    def make_generator(self, name: str, settings: Any) -> Any:
        """The generator called ``name`` for these ``Settings``, or None for the core's."""


@runtime_checkable
class OwnEvaluators(Protocol):
    """Evaluator names of the task's own (crosswords: ``clues``, ``fillable``; planning: its
    ``oracle``), used by ``solver.run``."""

    def make_evaluator(self, name: str, settings: Any) -> Any:
        """The evaluator called ``name`` for these ``Settings``, or None for the core's."""


@runtime_checkable
class TunesParts(Protocol):
    """Adjusts the chosen generator and evaluator to the task (lengths and stops of long
    thoughts, a task's own ranking), used by ``solver.run`` after both are made."""

    def tune(self, generator: Any, evaluator: Any) -> tuple[Any, Any]:
        """The (generator, evaluator) to use instead; return them unchanged when nothing applies."""


@runtime_checkable
class ThoughtGrammar(Protocol):
    """The grammar (GBNF, llama.cpp's format; ``solver.grammar`` writes it) of the thoughts the
    gate can accept from a state, written from the exact rules: exactly that set, or a superset
    where the exact set is too large to write. Its ``root`` derives one thought, as
    ``parse_proposals`` reads it. The ``propose`` and ``sample`` generators decode under it where
    the backend can constrain decoding; the gate still checks every thought."""

    def thought_grammar(self, state: Any) -> str | None:
        """GBNF of one next thought; None when no grammar can be written for this state."""


# One line each: what the capability gives, with the protocol and its method, for error messages.
CAPABILITIES: dict[type, str] = {
    LegalMoves: "legal-move enumeration (LegalMoves: legal_thoughts(state) -> thoughts)",
    LimitedMoves: "an enumeration limit it reports (LimitedMoves: enumeration_cut(state) -> (count, limit) | None)",
    ProposePrompts: "a propose prompt and parser (ProposePrompts: propose_prompt, parse_proposals)",
    SamplePrompts: "a sample prompt and parser (SamplePrompts: sample_prompt, parse_proposals)",
    ValuePrompts: "a value prompt and parser (ValuePrompts: value_prompt, parse_value)",
    VotePrompt: "a vote prompt (VotePrompt: vote_prompt(states, chat))",
    ChoicePrompt: "a choice prompt (ChoicePrompt: choice_prompt(state, thoughts, chat))",
    HasOracle: "an exact oracle (HasOracle: oracle(state) -> bool)",
    HasDistance: "an exact distance to a solution (HasDistance: distance(state) -> int | None)",
    TrainingPrompts: "short prompts for training data (TrainingPrompts: train_value_prompt, train_step_prompt)",
    Restorable: "states restorable from a trace (Restorable: restore(puzzle, description))",
    Unchecked: "an unchecked mode (Unchecked: apply_unchecked(state, thought))",
    HasOptions: "options that rebuild it (HasOptions: options() -> dict)",
    OwnGenerators: "generators of its own (OwnGenerators: make_generator(name, settings))",
    OwnEvaluators: "evaluators of its own (OwnEvaluators: make_evaluator(name, settings))",
    TunesParts: "tuning of its generator and evaluator (TunesParts: tune(generator, evaluator))",
    AnswerRules: "key-free answer rules (AnswerRules: verify_answer(puzzle, answer))",
    ThoughtGrammar: "a grammar of legal thoughts (ThoughtGrammar: thought_grammar(state) -> GBNF | None)",
}


# ---- what generators and evaluators need, and the check ---------------------------------------

@dataclass(frozen=True, slots=True)
class Needs:
    """What a generator or evaluator calls: task capabilities, and whether it needs a model."""

    parts: tuple[type, ...] = ()
    model: bool = False
    scores: bool = False  # the model's log-probabilities (Session.score), not only its text


@runtime_checkable
class DeclaresNeeds(Protocol):
    """A generator or evaluator that says what it needs (all built-in ones do). A user's own
    generator or evaluator without ``needs`` is trusted to know its task."""

    @property
    def needs(self) -> Needs:
        """The capabilities it calls and whether it calls a model."""


def register_capabilities(described: dict[type, str]) -> None:
    """Add capabilities defined elsewhere (``solver.baseline_capabilities``) to ``CAPABILITIES``,
    each with its one line for error messages."""
    CAPABILITIES.update(described)


def missing_message(task: object, part: type, user: str) -> str:
    """The one line: "<user> needs a task with <capability>; <TaskClass> has none"."""
    what = CAPABILITIES.get(part, part.__name__)
    return f"{user} needs a task with {what}; {type(task).__name__} has none"


def missing(task: object, part: type, user: str) -> MissingCapability:
    """The error for ``user`` run on a ``task`` without the capability ``part`` (``require``
    raises it; use it directly where ``find`` returned None)."""
    return MissingCapability(missing_message(task, part, user))


P = TypeVar("P")


# ``part`` is typed as a callable returning P, not ``type[P]``: mypy refuses a protocol class where
# ``type[P]`` is expected (python/mypy#4717), and every capability here is a protocol.
def find(task: object, part: Callable[..., P]) -> P | None:
    """The object that gives ``task`` the capability ``part``: the task itself when it has it,
    else the first of its optional ``parts`` (a sequence of part objects the task composes) that
    has it; None when neither does. Every capability lookup of the core goes through here."""
    cls = cast(type, part)
    if isinstance(task, cls):
        return cast(P, task)
    for p in getattr(task, "parts", None) or ():
        if isinstance(p, cls):
            return cast(P, p)
    return None


def has(task: object, part: type) -> bool:
    """Whether ``task`` (itself or one of its ``parts``) has the capability ``part``."""
    return find(task, part) is not None


def require(task: object, part: Callable[..., P], user: str, *, model: object = True) -> P:
    """The part of ``task`` with the capability ``part`` (see ``find``); MissingCapability naming
    ``user`` when it has none, then when ``model`` (the session of a ``user`` that needs one) is
    None."""
    found = find(task, part)
    if found is None:
        raise missing(task, cast(type, part), user)
    require_model(user, model)
    return found


def no_model(user: str) -> MissingCapability:
    """The error for ``user`` (e.g. "generator `propose`") run without a model."""
    return MissingCapability(f"{user} needs a model; pass an LMClient")


def require_model(user: str, model: object) -> None:
    """MissingCapability when ``model`` (the client, or whether one will be made) is absent."""
    if model is None or model is False:
        raise no_model(user)


def needs_of(part: object) -> Needs:
    """What a generator or evaluator declares it needs (nothing when it declares nothing)."""
    return part.needs if isinstance(part, DeclaresNeeds) else Needs()


# The members of the core ``Task`` protocol, in its order (for the message naming what is missing).
CORE: tuple[str, ...] = ("name", "max_depth", "root", "check", "answer", "report_answer", "describe")


def require_core(task: object, user: str = "a search") -> None:
    """MissingCapability unless ``task`` has every member of the core ``Task`` protocol."""
    if not isinstance(task, Task):
        lacks = [m for m in CORE if not hasattr(task, m)]  # only to name them in the message
        raise MissingCapability(f"{user} needs a task with the core Task protocol; {type(task).__name__} "
                                f"lacks {', '.join(lacks)}")


def require_parts(task: object, generator: object | None, evaluator: object | None, *,
                  model: object) -> None:
    """Check at the start of a run that ``task`` has the core protocol and every capability
    ``generator`` and ``evaluator`` declare, and that a model is there (``model``: the client, or
    True/False) for those that need one. Raises MissingCapability for the first gap found: the
    core, then the generator's before the evaluator's, task capabilities before the model."""
    require_core(task)
    parts = [(f"{kind} `{_user_name(p)}`", needs_of(p))
             for kind, p in (("generator", generator), ("evaluator", evaluator)) if p is not None]
    for user, needs in parts:
        for part in needs.parts:
            require(task, part, user)
    for user, needs in parts:
        if needs.model:
            require_model(user, model)


def _user_name(part: object) -> str:
    """A generator's or evaluator's ``name`` (the Generator and Evaluator protocols have one)."""
    name = getattr(part, "name", None)
    return name if isinstance(name, str) else type(part).__name__


def task_options(task: object) -> dict[str, Any]:
    """What rebuilds ``task`` (its ``options()``, e.g. Sudoku's rule set), for trace headers;
    {} for a task without ``HasOptions``."""
    part = find(task, HasOptions)
    return dict(part.options()) if part is not None else {}
