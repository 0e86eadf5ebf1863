"""The exact checkers as reinforcement-learning rewards, in the form TRL's ``GRPOTrainer`` calls:

    reward(prompts=[...], completions=[...], puzzle=[...], **other_columns) -> list[float]

One function per task (``game24``, ``countdown``, ``sudoku``, ``crosswords``, ``planning``; ``REWARDS`` maps the
task names to them). Each completion gets 1.0 when the project's own exact answer check
(``report_answer``, ``report_solution``, ``report_grid``, ``report_plan``) calls its answer
verified, else 0.0; the list has one float per completion. A reward is a fact about the answer.

Two kinds of bad input, two outcomes:

- **A completion** never raises: missing, empty, not text, malformed, huge or hostile, it is a
  0.0. Only its last ``MAX_COMPLETION_CHARS`` characters are read. ``None`` is never returned.
- **The call's configuration** raises at once, in one line naming what arrived: ``completions``
  that is not a list or tuple, a puzzle column that is missing (the keyword columns that did
  arrive are named), not a list or tuple, of another length than ``completions``, or with an
  entry that is not a puzzle of the task (its row and the reason). A training run whose rewards
  are all silent zeros learns nothing and never says why; this one stops at its first call.

Where the answer is and how it is read: ``verifiers.answers`` (``<answer>`` tags, ``\\boxed{}``,
``Answer:`` lines; ``<think>`` is never read) and each task's own reader in its verifier module
(``arithmetic.read_expression``, ``sudoku.read_board_answer``, ``crossword.read_grid``,
``planning.read_plan``), the same ones ``tot verify`` and the baselines use. The answer is read
whole: anything on it outside the checker's notation makes it no answer. Model text is never
evaluated.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable

from verifiers import countdown as cd
from verifiers.answers import MAX_COMPLETION_CHARS, completion_text
from verifiers.arithmetic import parse_puzzle, read_expression, report_answer
from verifiers.crossword import LAYOUT_5X5, read_grid, report_grid
from verifiers.crossword import parse_board as parse_crossword_board
from verifiers.pddl_model import MAX_PDDL_CHARS, Problem, parse_problem
from verifiers.pddl_text import split_puzzle
from verifiers.planning import read_plan, report_plan
from verifiers.sudoku import Board, read_board_answer, read_givens, report_solution

__all__ = ["MAX_COMPLETION_CHARS", "REWARDS", "RewardConfigError", "countdown", "crosswords", "game24", "planning",
           "sudoku"]

MAX_PUZZLE_CHARS = 100_000  # game24, sudoku, crosswords (planning: PDDL's own limit, twice)

Rewards = list[float]


class RewardConfigError(ValueError):
    """The reward was called with columns it cannot use: a mistake of the set-up, not of a completion."""


# ---- the call's shape ----------------------------------------------------------------------

def _describe(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


def _arrived(kwargs: dict[str, Any]) -> str:
    cols = [f"{k} ({_describe(v)})" for k, v in sorted(kwargs.items()) if isinstance(v, (list, tuple))]
    return ", ".join(cols) if cols else "none"


def _completions(task: str, completions: object) -> list[Any]:
    if isinstance(completions, (list, tuple)):
        return list(completions)
    hint = " (call it by keyword: completions=[...], puzzle=[...])" if isinstance(completions, str) else ""
    raise RewardConfigError(f"verifiers.rewards.{task}: completions must be a list or tuple of completions, "
                            f"got {_describe(completions)}{hint}")


def _column(task: str, kwargs: dict[str, Any], name: str, n: int) -> list[Any]:
    """The keyword column ``name``: a list or tuple of one entry per completion."""
    col = kwargs.get(name)
    if name not in kwargs or col is None:
        raise RewardConfigError(f"verifiers.rewards.{task}: no '{name}' column; keyword columns that arrived: "
                                f"{_arrived(kwargs)}")
    if not isinstance(col, (list, tuple)):
        raise RewardConfigError(f"verifiers.rewards.{task}: column '{name}' must be a list or tuple of one entry per "
                                f"completion, got {_describe(col)}")
    if len(col) != n:
        raise RewardConfigError(f"verifiers.rewards.{task}: column '{name}' has {len(col)} entries for {n} "
                                "completions")
    return list(col)


def _rows(task: str, column: str, entries: list[Any], read: Callable[[Any], Any]) -> list[Any]:
    """Each entry read by ``read`` (ValueError/TypeError: a one-line configuration error naming the row)."""
    out = []
    for i, entry in enumerate(entries):
        try:
            out.append(read(entry))
        except (ValueError, TypeError, RecursionError) as exc:
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise RewardConfigError(f"verifiers.rewards.{task}: {column} row {i} ({_short(entry)}) is not a puzzle "
                                    f"of the task: {reason}") from None
    return out


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _text_entry(entry: object, limit: int = MAX_PUZZLE_CHARS) -> str:
    if not isinstance(entry, str):
        raise TypeError(f"expected text, got {type(entry).__name__}")
    if len(entry) > limit:
        raise ValueError(f"longer than {limit} characters")
    return entry


def _score(completions: list[Any], check: Callable[[int, str], bool]) -> Rewards:
    """1.0 or 0.0 per completion: ``check(index, text)`` must return True; any failure is 0.0."""
    out = []
    for i, completion in enumerate(completions):
        try:
            text = completion_text(completion)
            ok = text is not None and check(i, text) is True
        except Exception:  # a completion never raises: whatever a hostile one trips is a 0.0
            ok = False
        out.append(1.0 if ok else 0.0)
    return out


# ---- Game of 24 ----------------------------------------------------------------------------

def _numbers(entry: object) -> tuple[int, ...]:
    """A Game-of-24 puzzle as users hold it: "4 9 10 13", [4, 9, 10, 13], ("4", "9", "10", "13")."""
    if isinstance(entry, (list, tuple)):
        if len(entry) > 10 or not all((type(x) is int and x >= 0) or isinstance(x, str) for x in entry):
            raise TypeError("a list puzzle is four whole numbers")
        entry = " ".join(str(x) for x in entry)
    return parse_puzzle(_text_entry(entry, 200))


def game24(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Game of 24: 1.0 when the answer is an arithmetic expression that uses each of the
    puzzle's four numbers exactly once, with + - * / and brackets only, and equals 24 exactly
    (``verifiers.arithmetic.report_answer`` verified it), else 0.0.

    Column ``puzzle``: four whole numbers 0..1000, as text ("4 9 10 13", spaces or commas) or a
    list or tuple of four. Answer: ``verifiers.arithmetic.read_expression``: the marked answer
    (``<answer>`` tags, ``\\boxed{}``, the ``Answer:`` line), else the last line holding
    arithmetic that is not a step; read whole, in the checker's notation (``× ÷ − : x`` and
    ``\\times \\div \\cdot`` spell the operators, ``= 24``, ``== 24``, ``= 24.0`` may follow).
    """
    items = _completions("game24", completions)
    puzzles = _rows("game24", "puzzle", _column("game24", kwargs, "puzzle", len(items)), _numbers)

    def check(i: int, text: str) -> bool:
        expr = read_expression(text)
        return expr is not None and report_answer(puzzles[i], expr).verified

    return _score(items, check)


# ---- Countdown -----------------------------------------------------------------------------

def _countdown_numbers(entry: object) -> tuple[int, ...]:
    """Countdown numbers as users hold them: "25 50 75 100 3 6" or a list of whole numbers."""
    if isinstance(entry, (list, tuple)):
        if len(entry) > cd.MAX_NUMBERS or not all(type(x) is int for x in entry):
            raise TypeError(f"a list of numbers is 1 to {cd.MAX_NUMBERS} whole numbers")
        entry = " ".join(str(x) for x in entry)
    return cd.parse_numbers(_text_entry(entry, 200))


def _countdown_puzzle(entry: object) -> tuple[tuple[int, ...], int]:
    """A puzzle as ``tot solve countdown`` takes it: "25 50 75 100 3 6 -> 952"."""
    numbers, arrow, target = _text_entry(entry, 200).partition("->")
    if not arrow:
        raise ValueError('a Countdown puzzle is its numbers and its target, e.g. "25 50 75 100 3 6 -> 952"')
    return _countdown_numbers(numbers), cd.parse_target(target)


def _countdown_target(entry: object) -> int:
    if type(entry) is not int and not isinstance(entry, str):
        raise TypeError(f"a target is a whole number, got {type(entry).__name__}")
    return cd.parse_target(entry)


def _countdown_rules(entry: object) -> cd.Rules:
    if entry not in cd.RULES:
        raise ValueError(f"rules are {' or '.join(cd.RULES)}, got {_short(entry)}")
    return entry  # type: ignore[return-value]


def countdown(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Countdown: 1.0 when the answer is an arithmetic expression, with + - * / and brackets only,
    that equals the target exactly and uses each of the numbers exactly once (under television
    rules: each at most once, every intermediate result a positive whole number)
    (``verifiers.countdown.report_answer`` verified it), else 0.0.

    Columns: ``puzzle`` ("25 50 75 100 3 6 -> 952", as ``tot solve countdown`` takes it), or
    ``numbers`` (TinyZero's ``nums``: a list of whole numbers or their text) with ``target``, read
    where there is no ``puzzle`` column;
    optional ``rules`` (``once``, the default, or ``television``), one per completion. Answer: as
    ``game24`` reads it (``verifiers.arithmetic.read_expression``); a stated result (``= 952``)
    must be the target.
    """
    items = _completions("countdown", completions)
    n = len(items)
    if "puzzle" in kwargs or "target" not in kwargs or not ({"numbers", "nums"} & set(kwargs)):
        puzzles = _rows("countdown", "puzzle", _column("countdown", kwargs, "puzzle", n), _countdown_puzzle)
    else:
        name = "numbers" if "numbers" in kwargs else "nums"
        numbers = _rows("countdown", name, _column("countdown", kwargs, name, n), _countdown_numbers)
        targets = _rows("countdown", "target", _column("countdown", kwargs, "target", n), _countdown_target)
        puzzles = list(zip(numbers, targets, strict=True))
    rules: list[cd.Rules] = _rows("countdown", "rules", _column("countdown", kwargs, "rules", n), _countdown_rules) \
        if "rules" in kwargs else ["once"] * n

    def check(i: int, text: str) -> bool:
        expr = read_expression(text)
        nums, target = puzzles[i]
        return expr is not None and cd.report_answer(nums, expr, target, rules[i]).verified

    return _score(items, check)


# ---- Sudoku --------------------------------------------------------------------------------

def _board_text(entry: object) -> str:
    """A Sudoku puzzle as users hold it: "*2*|*32|*13", or a list of rows ("*2*" or [0, 2, 0])."""
    if isinstance(entry, (list, tuple)):
        rows = []
        for row in entry:
            if isinstance(row, str):
                rows.append(row)
            elif isinstance(row, (list, tuple)) and all(type(x) is int and 0 <= x <= 9 for x in row):
                rows.append("".join(str(x) if x else "*" for x in row))
            else:
                raise TypeError("a list puzzle is rows, each text or a list of digits 0..9 (0 blank)")
        entry = "|".join(rows)
    return _text_entry(entry)


@lru_cache(maxsize=64)
def _givens(puzzle: str, boxes: bool) -> Board:
    return read_givens(puzzle, boxes)


def _latin(entry: object) -> bool:
    if type(entry) is not bool:
        raise TypeError(f"latin is True or False, got {type(entry).__name__}")
    return entry


def sudoku(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Sudoku: 1.0 when the answer is a complete n x n board that keeps every given of the
    puzzle and holds each digit 1..n once in every row, column and (standard rules, sizes 4, 6,
    8, 9) box (``verifiers.sudoku.report_solution`` verified it), else 0.0.

    Column ``puzzle``: the board syntax of ``tot solve sudoku`` (rows separated by ``|``, blanks
    ``*`` ``.`` ``_`` or ``0``, e.g. "*2*|*32|*13") or a list of rows; a puzzle whose givens
    break a rule is a configuration error. Optional column ``latin``: True for Long (2023)'s
    Latin-square rules (rows and columns only), as ``--latin``. Answer: a board in that syntax,
    on one line ("123|231|312") or on n lines, one row each ("1 2 3" or "123"): inside the
    ``<answer>`` tags or ``\\boxed{}`` (all of it), on the ``Answer:`` line (or the n lines
    starting there), else the last board in the text (scanning from the end, a line alone first).
    """
    items = _completions("sudoku", completions)
    n = len(items)
    latin = _rows("sudoku", "latin", _column("sudoku", kwargs, "latin", n), _latin) if "latin" in kwargs \
        else [False] * n
    texts = _rows("sudoku", "puzzle", _column("sudoku", kwargs, "puzzle", n), _board_text)
    givens = _rows("sudoku", "puzzle", [(t, not latin[i]) for i, t in enumerate(texts)], lambda e: _givens(*e))

    def check(i: int, text: str) -> bool:
        board = read_board_answer(text, len(givens[i]))
        return board is not None and report_solution(givens[i], board, not latin[i]).verified

    return _score(items, check)


# ---- Mini crosswords -----------------------------------------------------------------------

def _key(value: object) -> str:
    """An answer key: 25 letters (a string, or a list of one-letter strings), no empty cell."""
    if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        value = "".join(value)
    if not isinstance(value, str):
        raise TypeError(f"an answer key is 25 letters, got {type(value).__name__}")
    if len(value) > 1000:
        raise ValueError("an answer key is 25 letters; this one is longer than 1000 characters")
    return parse_crossword_board(value, LAYOUT_5X5.n, allow_empty=False)


def _puzzle_key(entry: object) -> str:
    """The key (``board``) of a puzzle as ``tot solve crosswords`` takes it: JSON text (or the
    object) ``{"clues": [...], "board": ...}`` or ``[clues, board]``."""
    obj: object = entry
    if isinstance(entry, str):
        try:
            obj = json.loads(_text_entry(entry))
        except json.JSONDecodeError:
            raise ValueError("not JSON") from None
    if isinstance(obj, dict) and "clues" in obj:
        if obj.get("board") is None:
            raise ValueError("no answer key: the puzzle has no 'board' (give an answer_key column); a grid is "
                             "never verified without one")
        return _key(obj.get("board"))
    if isinstance(obj, (list, tuple)) and len(obj) == 2:
        return _key(obj[1])
    raise ValueError('expected {"clues": [...], "board": "..."} or [clues, board]')


def crosswords(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Mini crosswords (5x5): 1.0 when the answer is a complete grid of letters A-Z whose across
    and down words agree at every crossing and whose ten words (h1-h5, v1-v5) all equal the answer
    key's (``verifiers.crossword.report_grid`` verified it), else 0.0.

    The key comes from column ``answer_key`` when given (25 letters, a string or a list), else
    from column ``puzzle``: the JSON text ``tot solve crosswords`` works on (or its object),
    ``{"clues": [...], "board": "AGEND..."}`` or the paper's ``[clues, board]``. A puzzle without
    a key is a configuration error: the project's checker never verifies a grid without one.

    Answer: a grid as ``tot verify crosswords`` reads it, 25 letters (spaces, ``|`` and commas
    ignored; ``_`` is an empty cell, which fails) or the ten words h1-h5 v1-v5 in order on one
    line: inside the ``<answer>`` tags (all of it), on the ``Answer:`` line (or the 5 lines
    starting there, one row each), else the last line, or 5 consecutive lines, that read as a
    grid (scanning from the end, a line alone first).
    """
    items = _completions("crosswords", completions)
    n = len(items)
    if "answer_key" in kwargs:
        keys = _rows("crosswords", "answer_key", _column("crosswords", kwargs, "answer_key", n), _key)
    else:
        keys = _rows("crosswords", "puzzle", _column("crosswords", kwargs, "puzzle", n), _puzzle_key)

    def check(i: int, text: str) -> bool:
        grid = read_grid(text)
        return grid is not None and report_grid(grid, keys[i], None).verified

    return _score(items, check)


# ---- Planning ------------------------------------------------------------------------------

@lru_cache(maxsize=16)
def _problem(domain: str, problem: str) -> Problem:
    return parse_problem(domain, problem)


def _puzzle_problem(entry: object) -> Problem:
    """The problem of a puzzle text made as ``tot solve planning`` makes it (``join_puzzle``)."""
    domain, problem = split_puzzle(_text_entry(entry, 2 * MAX_PDDL_CHARS))
    return _problem(domain, problem)


def planning(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Planning (PDDL): 1.0 when the answer is a plan whose every step is applicable in turn
    from the initial state (STRIPS with typing, negative preconditions, equality) and after
    which the goal holds (``verifiers.planning.report_plan`` verified it), else 0.0. Optimality
    is not required (the report checks it only against a known optimum, and only reports it).

    Column ``puzzle``: the domain PDDL then the problem PDDL in one text, as ``tot solve planning``
    joins them (``verifiers.pddl_text.join_puzzle``: the two ``(define ...)`` forms, in that
    order, ``;`` comments allowed). Without ``puzzle``, columns ``domain`` and ``problem`` (the two
    texts apart) are read instead. A puzzle outside the checker's PDDL fragment is a configuration
    error.

    Answer: a plan as the planning verifier parses it, one action per line, ``(unstack b2 b3)``
    or ``unstack b2 b3``, a leading ``1.`` or bullet and ``;`` comments allowed. An action line
    is one whose action name is an action of the domain; blank and comment lines inside a run of
    action lines do not end it. Inside ``<answer>`` tags every line must be an action; after an
    ``Answer:`` line the plan is the first run of action lines; else the last run in the text.
    No action line: 0.0 (even where the goal holds at the start).
    """
    items = _completions("planning", completions)
    n = len(items)
    limit = 2 * MAX_PDDL_CHARS
    if "puzzle" in kwargs or "domain" not in kwargs:
        problems = _rows("planning", "puzzle", _column("planning", kwargs, "puzzle", n), _puzzle_problem)
    else:
        doms = _column("planning", kwargs, "domain", n)
        probs = _column("planning", kwargs, "problem", n)
        problems = _rows("planning", "domain and problem", list(zip(doms, probs, strict=True)),
                         lambda e: _problem(_text_entry(e[0], limit), _text_entry(e[1], limit)))

    def check(i: int, text: str) -> bool:
        plan = read_plan(text, problems[i])
        return plan is not None and report_plan(problems[i], plan).verified

    return _score(items, check)


REWARDS: dict[str, Callable[..., Rewards]] = {"game24": game24, "countdown": countdown, "sudoku": sudoku,
                                              "crosswords": crosswords, "planning": planning}
