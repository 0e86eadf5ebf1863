"""The exact checkers as reinforcement-learning rewards, in the form TRL's ``GRPOTrainer`` calls:

    reward(prompts=[...], completions=[...], puzzle=[...], **other_columns) -> list[float]

One function per task (``game24``, ``sudoku``, ``crosswords``, ``planning``; ``REWARDS`` maps the
task names to them). The puzzle comes from the dataset as a keyword column, one entry per
completion, in the text form ``tot solve TASK`` works on. Each completion gets 1.0 when the
project's own exact answer check (``report_answer``, ``report_solution``, ``report_grid``,
``report_plan``) calls its answer verified, else 0.0; the list has one float per completion.

Nothing here raises on bad input: a completion or puzzle that is missing, empty, not text,
malformed, huge or hostile gives 0.0 (``completions`` that is not a list or tuple gives ``[]``,
as there is nothing to count). ``None``, which TRL reads as "this reward does not apply to this
sample", is never returned: a sample the check cannot apply to (no puzzle, no answer key) is a
0.0 like any other unverified answer. Model text is never evaluated: each answer goes through the same
whitelisted parsers the checkers use. Only the last ``MAX_COMPLETION_CHARS`` characters of a
completion are read, so the work per completion is bounded.

A completion is a string, or TRL's conversational form, a list of messages
(``[{"role": "assistant", "content": "..."}]``): the content of the last assistant message is
read (the last message when none says ``assistant``; text parts of a list content are joined).

Its answer: the text after its last ``Answer:`` line when there is one (``Final answer:`` and
markdown such as ``**Answer:**`` also count), else the task's rule below for the whole text.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Callable, Iterable, TypeVar

from verifiers.arithmetic import report_answer
from verifiers.crossword import LAYOUT_5X5, report_grid
from verifiers.crossword import parse_board as parse_crossword_board
from verifiers.pddl_model import MAX_PDDL_CHARS, Problem, parse_problem
from verifiers.planning import parse_action, report_plan
from verifiers.sudoku import Board, parse_board, report_solution, rule_break

__all__ = ["MAX_COMPLETION_CHARS", "REWARDS", "crosswords", "game24", "planning", "sudoku"]

MAX_COMPLETION_CHARS = 20_000
MAX_PUZZLE_CHARS = 100_000  # game24, sudoku, crosswords (planning: PDDL's own limit, twice)
_MAX_INPUT_24 = 1000  # as ``tot solve game24`` reads puzzles

Rewards = list[float]

# "Answer:", "Final answer:", "**Answer:**", "> Answer:" at the start of a line.
_ANSWER = re.compile(r"^[ \t>#*_`]*(?:final[ \t]+)?answer[ \t*_`]*:", re.IGNORECASE | re.MULTILINE)
_WRAP = " \t*_`"  # markdown around an answer line: emphasis, code spans and fences


# ---- completions and columns ---------------------------------------------------------------

def _text(completion: object) -> str | None:
    """A completion's text (its last ``MAX_COMPLETION_CHARS`` characters), or None."""
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        messages = [m for m in completion if isinstance(m, dict)]
        said = [m for m in messages if m.get("role") == "assistant"] or messages
        if not said:
            return None
        content = said[-1].get("content")
        if isinstance(content, (list, tuple)):  # content parts: [{"type": "text", "text": "..."}]
            parts = [p.get("text") if isinstance(p, dict) else p for p in content]
            content = "\n".join(p for p in parts if isinstance(p, str))
        completion = content
    if not isinstance(completion, str):
        return None
    return completion[-MAX_COMPLETION_CHARS:]


def _lines(text: str) -> tuple[list[str], bool]:
    """(the answer's lines, whether an ``Answer:`` line gave them): after the last ``Answer:``
    line (its rest first), else the whole text; markdown around each line stripped."""
    ends = [m.end() for m in _ANSWER.finditer(text)]
    region = text[ends[-1]:] if ends else text
    return [line.strip(_WRAP) for line in region.splitlines()], bool(ends)


_T = TypeVar("_T")


def _block(text: str, height: int, read: Callable[[str], _T | None]) -> _T | None:
    """What ``read`` makes of the answer's block of lines (blank lines dropped): after an
    ``Answer:`` line, its first non-blank line alone, else the ``height`` lines starting there;
    without one, scanning from the end, each line alone, then the ``height`` lines ending there.
    The first block that reads (``read`` gives not None) is the answer."""
    lines, marked = _lines(text)
    lines = [line for line in lines if line]
    if marked:
        spans: Iterable[tuple[int, int]] = ((0, 1), (0, height))
    else:
        spans = (span for end in range(len(lines), 0, -1) for span in ((end - 1, end), (end - height, end)))
    for a, b in spans:
        if 0 <= a < b <= len(lines):
            got = read("\n".join(lines[a:b]))
            if got is not None:
                return got
    return None


def _len(completions: object) -> int:
    return len(completions) if isinstance(completions, (list, tuple)) else -1


def _column(kwargs: dict[str, Any], name: str, n: int) -> list[Any] | None:
    """A dataset column passed by keyword: a list or tuple of one entry per completion, else None."""
    col = kwargs.get(name)
    return list(col) if isinstance(col, (list, tuple)) and len(col) == n else None


def _batch(completions: object, check: Callable[[int, str], bool]) -> Rewards:
    """1.0 or 0.0 per completion: ``check(index, text)`` must return True; any failure is 0.0."""
    if not isinstance(completions, (list, tuple)):
        return []
    out = []
    for i, completion in enumerate(completions):
        try:
            text = _text(completion)
            ok = text is not None and check(i, text) is True
        except Exception:  # a reward never raises: whatever a hostile input trips is a 0.0
            ok = False
        out.append(1.0 if ok else 0.0)
    return out


def _puzzle_text(puzzles: list[Any] | None, i: int, limit: int = MAX_PUZZLE_CHARS) -> str | None:
    if puzzles is None or not isinstance(puzzles[i], str) or len(puzzles[i]) > limit:
        return None
    return puzzles[i]


# ---- Game of 24 ----------------------------------------------------------------------------

_OP_CHARS = "+\\-*/\u2212\u2013\u2012\ufe63\uff0d\u00d7xX\u22c5\u00b7\u2217\u00f7\u2215"
_EXPR_RUN = re.compile(rf"[0-9 \t()\[\]{{}}=.{_OP_CHARS}]+")
_HAS_OP = re.compile(rf"[0-9][ \t)\]}}]*[{_OP_CHARS}][ \t(\[{{\-]*[0-9]")
_LIST_MARK = re.compile(r"^(?:[*\u2022]|[0-9]{1,3}[.)])[ \t]+")  # "* ", "• ", "1. ", "1) ": never arithmetic


def _puzzle24(text: str) -> tuple[int, ...] | None:
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if len(parts) != 4 or not all(re.fullmatch(r"[0-9]{1,4}", p, re.ASCII) for p in parts):
        return None
    nums = tuple(int(p) for p in parts)
    return nums if max(nums) <= _MAX_INPUT_24 else None


def _expression(line: str) -> str | None:
    """The last run of expression characters on a line that joins two numbers by an operator."""
    runs = [m.group().strip() for m in _EXPR_RUN.finditer(_LIST_MARK.sub("", line))]
    found = [r for r in runs if _HAS_OP.search(r)]
    return found[-1].lstrip("xX \t") if found else None


def _answer24(text: str) -> str | None:
    lines, marked = _lines(text)
    if marked:  # the Answer: line, or the first non-blank line after it
        first = next((line for line in lines if line), "")
        return _expression(first)
    for line in reversed(lines):
        expr = _expression(line)
        if expr is not None:
            return expr
    return None


def game24(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Game of 24: 1.0 when the answer is an arithmetic expression that uses each of the
    puzzle's four numbers exactly once, with + - * / and brackets only, and equals 24 exactly
    (``verifiers.arithmetic.report_answer`` verified it), else 0.0.

    Column ``puzzle``: four whole numbers 0..1000 separated by spaces or commas ("4 9 10 13").
    Answer: the expression on the ``Answer:`` line (or on the first non-blank line after it),
    else on the last line that holds one; on that line, the last run of expression characters
    (ASCII digits, brackets, the operators and their spellings × ÷ − x) that joins two numbers
    by an operator, with ``= 24`` after it allowed. A leading list mark (``* ``, ``1. ``) is dropped.
    """
    puzzles = _column(kwargs, "puzzle", _len(completions))

    def check(i: int, text: str) -> bool:
        puzzle = _puzzle_text(puzzles, i)
        nums = _puzzle24(puzzle) if puzzle is not None else None
        expr = _answer24(text) if nums is not None else None
        return nums is not None and expr is not None and report_answer(nums, expr).verified

    return _batch(completions, check)


# ---- Sudoku --------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _givens(puzzle: str, boxes: bool) -> Board | None:
    """The puzzle's board, None when it does not read or its givens already break a rule."""
    try:
        board = parse_board(puzzle)
    except ValueError:
        return None
    return board if rule_break(board, boxes) is None else None


def _sudoku_board(text: str, n: int) -> Board | None:
    def read(block: str) -> Board | None:
        try:
            return parse_board(block, n)
        except ValueError:
            return None

    return _block(text, n, read)


def sudoku(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Sudoku: 1.0 when the answer is a complete n x n board that keeps every given of the
    puzzle and holds each digit 1..n once in every row, column and (standard rules, sizes 4, 6,
    8, 9) box (``verifiers.sudoku.report_solution`` verified it), else 0.0.

    Column ``puzzle``: the board syntax of ``tot solve sudoku`` (rows separated by ``|``, blanks
    ``*`` ``.`` ``_`` or ``0``, e.g. "*2*|*32|*13"); a puzzle whose givens already break a rule
    gives 0.0. Optional column ``latin``: True for Long (2023)'s Latin-square rules (rows and
    columns only), as ``--latin``. Answer: a board in that syntax, either on one line
    ("123|231|312") or on n consecutive non-blank lines, one row each ("1 2 3" or "123"; a row
    with ``|`` bars between boxes does not read): on the ``Answer:`` line (or the first non-blank
    line after it) or in the n non-blank lines starting there; without an ``Answer:`` line, the
    last board in the text (scanning from the end, a line alone first).
    """
    n = _len(completions)
    puzzles, latin = _column(kwargs, "puzzle", n), _column(kwargs, "latin", n)

    def check(i: int, text: str) -> bool:
        puzzle = _puzzle_text(puzzles, i)
        boxes = not (latin is not None and latin[i] is True)
        givens = _givens(puzzle, boxes) if puzzle is not None else None
        board = _sudoku_board(text, len(givens)) if givens is not None else None
        return givens is not None and board is not None and report_solution(givens, board, boxes).verified

    return _batch(completions, check)


# ---- Mini crosswords -----------------------------------------------------------------------

def _key(value: object) -> str | None:
    """An answer key: 25 letters (a string, or a list of one-letter strings), no empty cell."""
    if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        value = "".join(value)
    if not isinstance(value, str) or len(value) > 1000:
        return None
    try:
        return parse_crossword_board(value, LAYOUT_5X5.n, allow_empty=False)
    except ValueError:
        return None


def _puzzle_key(puzzle: str) -> str | None:
    """The key (``board``) of a puzzle text as ``tot solve crosswords`` takes it: JSON
    ``{"clues": [...], "board": ...}`` or ``[clues, board]``."""
    try:
        obj = json.loads(puzzle)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and "clues" in obj:
        return _key(obj.get("board"))
    if isinstance(obj, list) and len(obj) == 2:
        return _key(obj[1])
    return None


def _grid_verified(text: str, key: str) -> bool:
    """Whether the answer's grid (the first block that reads as one) matches ``key``."""
    def read(block: str) -> bool | None:
        report = report_grid(block, key, None)
        return report.verified if report.checks[0].passed else None  # checks[0]: it reads as a grid

    return _block(text, LAYOUT_5X5.n, read) is True


def crosswords(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Mini crosswords (5x5): 1.0 when the answer is a complete grid of letters A-Z whose across
    and down words agree at every crossing and whose ten words (h1-h5, v1-v5) all equal the answer
    key's (``verifiers.crossword.report_grid`` verified it), else 0.0.

    The key comes from column ``answer_key`` when given (25 letters, a string or a list), else
    from column ``puzzle``: the JSON text ``tot solve crosswords`` works on, ``{"clues": [...],
    "board": "AGEND..."}`` or the paper's ``[clues, board]``. Without a key the reward is 0.0 for
    every answer: the project's checker never verifies a grid without one (complete, crossings
    agree and every word in the lexicon is still not a solution of the clues), so a grid of
    lexicon words earns nothing here.

    Answer: a grid as ``tot verify crosswords`` reads it, 25 letters (spaces, ``|`` and commas
    ignored; ``_`` is an empty cell, which fails) or the ten words h1-h5 v1-v5 in order on one
    line: on the ``Answer:`` line (or the first non-blank line after it), or in the 5 non-blank
    lines starting there, one row each; without an ``Answer:`` line, the last line, or 5
    consecutive non-blank lines, that read as a grid (scanning from the end, a line alone first).
    """
    n = _len(completions)
    puzzles, keys = _column(kwargs, "puzzle", n), _column(kwargs, "answer_key", n)

    def check(i: int, text: str) -> bool:
        if keys is not None:
            key = _key(keys[i])
        else:
            puzzle = _puzzle_text(puzzles, i)
            key = _puzzle_key(puzzle) if puzzle is not None else None
        return key is not None and _grid_verified(text, key)

    return _batch(completions, check)


# ---- Planning ------------------------------------------------------------------------------

def _forms(text: str) -> list[str]:
    """The top-level parenthesised forms of a PDDL text (``;`` comments skipped); ValueError
    when a bracket is unbalanced."""
    forms, depth, start = [], 0, 0
    code = "\n".join(line.split(";", 1)[0] for line in text.splitlines())
    for k, ch in enumerate(code):
        if ch == "(":
            start = k if depth == 0 else start
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced ')'")
            if depth == 0:
                forms.append(code[start:k + 1])
    if depth:
        raise ValueError("unbalanced '('")
    return forms


@lru_cache(maxsize=16)
def _problem(domain: str, problem: str) -> Problem | None:
    try:
        return parse_problem(domain, problem)
    except (ValueError, RecursionError):
        return None


@lru_cache(maxsize=16)
def _puzzle_problem(puzzle: str) -> Problem | None:
    """The problem of a puzzle text made as ``tot solve planning`` makes it: the domain's
    ``(define (domain ...))`` form, then the problem's."""
    try:
        forms = _forms(puzzle)
    except ValueError:
        return None
    return _problem(forms[0], forms[1]) if len(forms) == 2 else None


_BULLET = re.compile(r"^[-*\u2022][ \t]+")


def _action_line(line: str, actions: frozenset[str]) -> str | None:
    """The line without bullet and comment when it is one action of the domain, else None."""
    body = _BULLET.sub("", line.split(";", 1)[0].strip(_WRAP)).strip()
    try:
        return body if body and parse_action(body).name in actions else None
    except ValueError:
        return None


def _plan(text: str, problem: Problem) -> str | None:
    """The answer's plan: the first run of action lines after ``Answer:``, else the last run."""
    actions = frozenset(s.name for s in problem.schemas)
    lines, marked = _lines(text)
    runs: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        if not line.split(";", 1)[0].strip(_WRAP):  # blank and comment lines do not end a run
            continue
        action = _action_line(line, actions)
        if action is None:
            current = None
            continue
        if current is None:
            current = []
            runs.append(current)
            if marked and len(runs) > 1:
                break
        current.append(action)
    if not runs:
        return None
    return "\n".join(runs[0] if marked else runs[-1])


def planning(prompts: object = None, completions: object = None, **kwargs: Any) -> Rewards:
    """Planning (PDDL): 1.0 when the answer is a plan whose every step is applicable in turn
    from the initial state (STRIPS with typing, negative preconditions, equality) and after
    which the goal holds (``verifiers.planning.report_plan`` verified it), else 0.0. Optimality
    is not required (the report checks it only against a known optimum, and only reports it).

    Column ``puzzle``: the domain PDDL then the problem PDDL in one text, as ``tot solve planning``
    joins them (``tasks.planning.files.join_puzzle``: the two ``(define ...)`` forms, in that order,
    ``;`` comments allowed). Without ``puzzle``, columns ``domain`` and ``problem`` (the two
    texts apart) are read instead. A puzzle outside the checker's PDDL fragment gives 0.0.

    Answer: a plan as the planning verifier parses it, one action per line, ``(unstack b2 b3)``
    or ``unstack b2 b3``, a leading ``1.`` or bullet and ``;`` comments allowed. An action line
    is one whose action name is an action of the domain; blank and comment lines inside a run of
    action lines do not end it. The plan is the first run of action lines after the ``Answer:``
    line, else the last run in the text. No action line: 0.0 (even where the goal holds at the start).
    """
    n = _len(completions)
    puzzles = _column(kwargs, "puzzle", n)
    domains, problems = _column(kwargs, "domain", n), _column(kwargs, "problem", n)
    limit = 2 * MAX_PDDL_CHARS

    def check(i: int, text: str) -> bool:
        if puzzles is not None:
            puzzle = _puzzle_text(puzzles, i, limit)
            problem = _puzzle_problem(puzzle) if puzzle is not None else None
        elif domains is not None and problems is not None:
            dom, prob = _puzzle_text(domains, i, limit), _puzzle_text(problems, i, limit)
            problem = _problem(dom, prob) if dom is not None and prob is not None else None
        else:
            problem = None
        plan = _plan(text, problem) if problem is not None else None
        return problem is not None and plan is not None and report_plan(problem, plan).verified

    return _batch(completions, check)


REWARDS: dict[str, Callable[..., Rewards]] = {"game24": game24, "sudoku": sudoku, "crosswords": crosswords,
                                              "planning": planning}
