"""Exact checks for Creative Writing: split the four required sentences, check paragraph endings.

Sentence splitting rule (documented, tested on all 100 lines of the paper's inputs):

1. Whitespace runs become one space; the text is otherwise kept as written (curly apostrophes
   stay in the sentences shown to the model; comparisons normalise them, see ``normalise``).
2. A sentence ends at ``.``, ``!``, ``?`` or ``…`` (plus any closing quotes or brackets) that is
   followed by a space and then an upper-case letter, a digit or an opening quote.
3. A text of exactly four non-empty lines is taken as the four sentences, one per line, as
   written (the way to state them explicitly).
4. Otherwise punctuation must give exactly four sentences; more or fewer is an error that says
   how many were found. The count never changes silently.
5. Only the paper's data file (``fragments=True``, see ``tasks/writing/data.py``) repairs lines
   with fewer than four sentences: the missing ones are taken to be fragments without end
   punctuation fused into the next sentence (the paper's lines 5, 28, 49, 59 and 81, e.g.
   "Instead of a bachelorette party You realize ..."): cut at the first place, in reading order,
   where a word ending in a lower-case letter is followed by a capitalised word other than the
   pronoun "I" (and its contractions), and repeat until there are four. The loader then hands the
   four sentences on one per line (rule 3), so the cut is visible. A fragment is required as
   written; a paragraph may end with it followed by end punctuation.

Passage check: exactly four non-empty paragraphs (separated by blank lines); paragraph i ends
with sentence i, compared after NFKC, straight quotes and single spaces, on a word boundary.
Case and every other character count. No model is ever called here.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from verifiers.report import AnswerReport, Check

N_SENTENCES = 4

_QUOTES = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u0060": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
})
_END = ".!?\u2026"
_CLOSERS = "\"')]\u2019\u201d\u00bb"
_OPENERS = "\"'(\u2018\u201c\u00ab"
_BOUNDARY = re.compile(rf"[{re.escape(_END)}][{re.escape(_CLOSERS)}]* ")
_FUSED = re.compile(r"(?<=[a-z]) (?=[A-Z])")
_PRONOUN_I = re.compile(r"I(?:['\u2019](?:m|ll|ve|d|s))?\b")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v]*\n")
MAX_INPUT_CHARS = 4000
MAX_PASSAGE_CHARS = 40000


def normalise(text: str) -> str:
    """NFKC, straight quotes, one space for every whitespace run, no outer spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).split())


def _squash(text: str) -> str:
    return " ".join(text.split())


def split_sentences(text: str, fragments: bool = False) -> tuple[str, str, str, str]:
    """The four required sentences of an input (rules in the module docstring); ValueError with a
    one-line reason. ``fragments`` allows rule 5 (the paper's data file only)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError('empty input: give the four required sentences, e.g. "A cat sat. It rained. ..."')
    if len(text) > MAX_INPUT_CHARS:
        raise ValueError(f"input is {len(text)} characters; at most {MAX_INPUT_CHARS}")
    lines = [_squash(ln) for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if ln.strip()]
    if len(lines) == N_SENTENCES:
        return (lines[0], lines[1], lines[2], lines[3])
    flat = _squash(text)
    parts: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(flat):
        nxt = flat[m.end():m.end() + 1]
        if nxt.isupper() or nxt.isdigit() or nxt in _OPENERS:
            parts.append(flat[start:m.end()].strip())
            start = m.end()
    parts.append(flat[start:].strip())
    parts = [p for p in parts if p]
    if len(parts) > N_SENTENCES or (len(parts) < N_SENTENCES and not fragments):
        raise ValueError(f"the input splits into {len(parts)} sentence{'s' if len(parts) != 1 else ''} at "
                         f". ! ? followed by a capital; exactly {N_SENTENCES} are needed "
                         "(end each with . ! or ?, or give the four sentences one per line)")
    while len(parts) < N_SENTENCES:
        parts = _cut_first_fusion(parts, len(parts))
    return (parts[0], parts[1], parts[2], parts[3])


def _cut_first_fusion(parts: list[str], found: int) -> list[str]:
    for k, part in enumerate(parts):
        for m in _FUSED.finditer(part):
            if _PRONOUN_I.match(part, m.end()):
                continue
            return parts[:k] + [part[:m.start()], part[m.end():]] + parts[k + 1:]
    raise ValueError(f"the input splits into {found} sentences; exactly {N_SENTENCES} are needed "
                     "(end each with . ! or ?)")


@dataclass(frozen=True, slots=True)
class PassageProblem:
    """Why a passage fails: ``paragraph`` is the first failing one (1-based), None for the count."""

    paragraph: int | None
    reason: str


def paragraphs(passage: str) -> list[str]:
    """Non-empty paragraphs, split at blank lines (``\\r\\n`` counts as a newline)."""
    text = passage.replace("\r\n", "\n").replace("\r", "\n")
    return [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else "\u2026" + text[-(width - 1):]


def ending_problem(sentence: str, paragraph: str) -> str | None:
    """None when ``paragraph`` ends with ``sentence`` (normalised, on a word boundary), else why."""
    want, got = normalise(sentence), normalise(paragraph)
    if not want:
        return "the required sentence is empty"
    if not got:
        return "the paragraph is empty"
    body = got
    if want[-1] not in _END + _CLOSERS:
        # A fragment without end punctuation may be followed by some in the passage.
        body = got.rstrip(_END)
    if body.endswith(want):
        before = body[: len(body) - len(want)]
        if not before or before[-1] == " " or before[-1] in _OPENERS:
            return None
        return f"it ends with {want!r} but inside a longer word ({_short(before[-20:] + want)!r})"
    return f"it ends with {_short(got)!r}, not with {want!r}"


def check_passage(sentences: tuple[str, ...], passage: str) -> PassageProblem | None:
    """None when the passage has exactly four paragraphs ending with the sentences in order."""
    if len(passage) > MAX_PASSAGE_CHARS:
        return PassageProblem(None, f"the passage is {len(passage)} characters; at most {MAX_PASSAGE_CHARS}")
    paras = paragraphs(passage)
    if len(paras) != len(sentences):
        return PassageProblem(None, f"expected {len(sentences)} paragraphs separated by blank lines, "
                                    f"found {len(paras)}")
    wanted = [normalise(s) for s in sentences]
    for i, (sentence, para) in enumerate(zip(sentences, paras, strict=True), 1):
        why = ending_problem(sentence, para)
        if why is None:
            continue
        others = [j for j, w in enumerate(wanted, 1) if j != i and ending_problem(sentences[j - 1], para) is None]
        if others:
            why += f" (it ends with sentence {others[0]} instead: wrong order)"
        return PassageProblem(i, f"paragraph {i} must end with sentence {i}: {why}")
    return None


RULES = ("Creative writing: exactly {n} non-empty paragraphs separated by blank lines; paragraph k ends "
         "with required sentence k (compared after NFKC, straight quotes and single spaces)")


def report_passage(sentences: tuple[str, ...], passage: str) -> AnswerReport:
    """Every exact check of a passage, each named: its length, the paragraph count and each
    paragraph's ending. The same facts as ``check_passage``, which is its first failed check."""
    rules = RULES.format(n=len(sentences))
    checks = [Check(f"at most {MAX_PASSAGE_CHARS} characters", len(passage) <= MAX_PASSAGE_CHARS,
                    f"{len(passage)} characters")]
    if not checks[0].passed:
        return AnswerReport(rules, tuple(checks))
    paras = paragraphs(passage)
    count_ok = len(paras) == len(sentences)
    checks.append(Check(f"exactly {len(sentences)} paragraphs", count_ok,
                        "" if count_ok else f"found {len(paras)} paragraphs separated by blank lines"))
    for i, sentence in enumerate(sentences, 1):
        name = f"paragraph {i} ends with sentence {i} ({_short(sentence, 40)!r})"
        if not count_ok:
            checks.append(Check(name, None, "not checked: the paragraph count is wrong"))
            continue
        why = ending_problem(sentence, paras[i - 1])
        checks.append(Check(name, why is None, why or ""))
    return AnswerReport(rules, tuple(checks))
