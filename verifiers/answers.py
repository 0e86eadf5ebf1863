"""Where the answer is in a model's text, one rule for every task and every reader (the rewards,
``tot verify``, the baselines): the answer is found once, then read whole by the task's own
reader, and anything on it outside the checker's notation makes it not an answer.

Found, in this order (the first kind present decides; of several answers of that kind, the last):

1. ``<answer>...</answer>``: the text between the last closed pair of tags, inline, on lines of
   its own, or sharing lines with the answer's first and last rows. A completion that opens an
   ``<answer>`` tag and never closes one has no answer.
2. ``\\boxed{...}``: the last one, its braces balanced on one line.
3. An ``Answer:`` line (also ``Final answer:``, and markdown such as ``**Answer:**`` or ``> Answer:``
   at the start of a line): what follows the last one, the rest of its line first.
4. None of these: the whole text, and the task's reader takes the last answer-shaped line or block.

``<think>...</think>`` is never read as the answer: thinking is removed first (a text with a
``</think>`` and no opening tag, as chat templates that open the tag in the prompt produce, is
read after its last ``</think>``; a ``<think>`` never closed leaves nothing to read).

Nothing here evaluates text; every function is bounded by the text's length and never raises on
a string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Literal, TypeVar

__all__ = ["MAX_COMPLETION_CHARS", "Found", "completion_text", "find_answer", "read_block", "strip_thinking",
           "unwrap"]

MAX_COMPLETION_CHARS = 20_000

Marker = Literal["tag", "boxed", "line", "none"]

# "Answer:", "Final answer:", "**Answer:**", "> Answer:" at the start of a line.
_ANSWER_LINE = re.compile(r"^[ \t>#]*(?P<open>[*_`]*)[ \t]*(?:final[ \t]+)?answer[ \t*_`]*:[*_`]*",
                          re.IGNORECASE | re.MULTILINE)
_TAG_OPEN, _TAG_CLOSE = re.compile(r"<answer>", re.IGNORECASE), re.compile(r"</answer>", re.IGNORECASE)
_THINK_OPEN, _THINK_CLOSE = re.compile(r"<think>", re.IGNORECASE), re.compile(r"</think>", re.IGNORECASE)
_BOXED = "\\boxed{"
# Around an answer's line: markdown's emphasis and code spans, TeX's inline math, each in pairs
# (an unpaired "*" at an end is an operator, kept for the check to refuse), and a quote's "> ".
_PAIRS = ("**", "__", "``", "$$", "*", "_", "`", "$")
_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[A-Za-z0-9_+-]*[ \t]*$")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]*)+")


@dataclass(frozen=True, slots=True)
class Found:
    """The answer's region: its lines (markdown around each stripped; blank lines kept) and how it
    was marked. ``lines`` is empty when a marker was there but held no answer."""

    lines: tuple[str, ...]
    marker: Marker

    @property
    def marked(self) -> bool:
        return self.marker != "none"

    def nonblank(self) -> list[str]:
        return [line for line in self.lines if line]


def completion_text(completion: object, limit: int = MAX_COMPLETION_CHARS) -> str | None:
    """A completion's text (its last ``limit`` characters), or None: a string, or a chat in
    TRL's conversational form (the last ``assistant`` message's content, else the last
    message's; the text parts of a list content joined by newlines)."""
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
    return completion[-limit:]


def strip_thinking(text: str) -> str:
    """``text`` without its thinking (see the module's docstring)."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    elif _THINK_OPEN.search(text):
        return ""  # thinking that never ended: no answer after it
    # whatever "<think>" is left opened after the last close is unfinished thinking too
    opened = _THINK_OPEN.search(text)
    return text[:opened.start()] if opened else text


def unwrap(line: str) -> str:
    """A line without the markdown around it: a code fence line is blank; a quote's ``>`` goes;
    emphasis, code spans and ``$`` math go in pairs, one pair at a time from outside in."""
    if _FENCE.match(line):
        return ""
    line = _QUOTE.sub("", line).strip()
    changed = True
    while changed:
        changed = False
        for pair in _PAIRS:
            if len(line) > 2 * len(pair) and line.startswith(pair) and line.endswith(pair):
                line, changed = line[len(pair):-len(pair)].strip(), True
                break
    return line


def _lines(region: str) -> tuple[str, ...]:
    return tuple(unwrap(line) for line in region.splitlines())


def _last_tag(text: str) -> str | None:
    """The text inside the last closed ``<answer>...</answer>`` pair, or None."""
    closes = list(_TAG_CLOSE.finditer(text))
    for close in reversed(closes):
        opens = [m for m in _TAG_OPEN.finditer(text, 0, close.start())]
        if opens:
            return text[opens[-1].end():close.start()]
    return None


def _last_boxed(text: str) -> str | None:
    """The inside of the last ``\\boxed{...}`` whose braces balance on its line, or None."""
    start = text.rfind(_BOXED)
    if start < 0:
        return None
    depth, k = 1, start + len(_BOXED)
    while k < len(text):
        ch = text[k]
        if ch == "\n":
            return None
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return text[start + len(_BOXED):k]
        k += 1
    return None


def find_answer(text: str) -> Found:
    """The answer's region of a model's text (see the module's docstring)."""
    text = strip_thinking(text)
    if _TAG_OPEN.search(text) or _TAG_CLOSE.search(text):
        inside = _last_tag(text)
        return Found(_lines(inside) if inside is not None else (), "tag")
    if _BOXED in text:
        inside = _last_boxed(text)
        return Found((unwrap(inside),) if inside is not None else (), "boxed")
    marks = list(_ANSWER_LINE.finditer(text))
    if marks:
        last = marks[-1]
        rest, nl, after = text[last.end():].partition("\n")
        opened = last.group("open")
        if opened and rest.rstrip().endswith(opened[::-1]):  # "**Answer: ...**", "`Answer: ...`"
            rest = rest.rstrip()[:-len(opened)]
        return Found(_lines(rest + nl + after), "line")
    return Found(_lines(text), "none")


_T = TypeVar("_T")


def read_block(found: Found, height: int, read: Callable[[str], _T | None]) -> _T | None:
    """A board-like answer (one line, or ``height`` lines one row each), read by ``read`` (None
    when a block does not read). Inside tags or a box: every non-blank line of it, as one block.
    After an ``Answer:`` line: its first non-blank line alone, else the ``height`` non-blank lines
    starting there. Unmarked: scanning from the end, each line alone, then the ``height`` lines
    ending there; the first block that reads is the answer."""
    lines = found.nonblank()
    if not lines:
        return None
    if found.marker in ("tag", "boxed"):
        return read("\n".join(lines))
    if found.marker == "line":
        for a, b in ((0, 1), (0, height)):
            if b <= len(lines):
                got = read("\n".join(lines[a:b]))
                if got is not None:
                    return got
        return None
    for end in range(len(lines), 0, -1):
        for a, b in ((end - 1, end), (end - height, end)):
            if 0 <= a < b:
                got = read("\n".join(lines[a:b]))
                if got is not None:
                    return got
    return None

