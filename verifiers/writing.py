"""Exact checks for Creative Writing: split the four required sentences, check paragraph endings.

Sentence splitting rule (documented, tested on all 100 lines of the paper's inputs):

1. Whitespace runs become one space; the text is otherwise kept as written (curly apostrophes
   stay in the sentences shown to the model; comparisons normalise them, see ``normalise``).
2. Sentences are found by pySBD's English rules (``sentences``): a sentence ends at ``.``, ``!``,
   ``?`` or ``…`` (plus closing quotes or brackets), but not after an abbreviation or initial
   ("Mr.", "e.g.", "Jonas E. Smith"), inside a number ("$100.00"), an address or a quotation that
   goes on, or an ellipsis inside a sentence. Chosen by measurement on the English Golden Rules
   of the Pragmatic Segmenter: 47/48 cases right, against 29/48 for the earlier rule (an end mark
   followed by a space and a capital, digit or opening quote, kept as ``punctuation_sentences``);
   both split the paper's 100 inputs identically. Line ends (CRLF, CR, U+2028) count as spaces.
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
with sentence i, character for character, on a word boundary. Strict by default: the only thing
not compared is layout inside a paragraph: every run of ASCII whitespace (spaces, tabs, single line
breaks) counts as one space. Case, punctuation, quote marks and every other character count.
Two relaxations can be asked for (``relax``; ``--normalise`` on the command line), each naming
exactly what it lets through:

* ``quotes``: curly and other typographic quotes and apostrophes (‘ ’ ‚ ‛ ′ ` ´ and “ ” „ ‟ ″ « »)
  count as the straight ``'`` and ``"``;
* ``nfkc``: both texts are put in Unicode NFKC form first (full-width letters, ligatures,
  non-breaking and other Unicode spaces, "…" as "...").

A failing paragraph is explained: what it ends with, what was required, and what changed (letter
case at character i, a quote mark, a missing or different final mark, a word dropped, added or
changed, text after the sentence). Character positions count in the required sentence as
compared (1-based, whitespace runs as one space). No model is ever called here.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from verifiers.report import AnswerReport, Check

__all__ = ["ALL_RELAXED", "MAX_INPUT_CHARS", "MAX_PASSAGE_CHARS", "N_SENTENCES", "PassageProblem",
           "RELAXATIONS", "RULES", "Relax", "STRICT", "check_passage", "comparable", "ending_problem",
           "normalise", "paragraphs", "parse_relax", "report_passage", "rules_text", "split_sentences",
           "what_changed"]

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


Relax = frozenset[str]
RELAXATIONS: tuple[str, ...] = ("quotes", "nfkc")
STRICT: Relax = frozenset()
ALL_RELAXED: Relax = frozenset(RELAXATIONS)
# ASCII whitespace, and the line ends that are not ASCII (NEL, U+2028, U+2029): layout, not text.
_ASCII_SPACE = re.compile(r"[ \t\n\r\f\v\x85\u2028\u2029]+")


def parse_relax(text: str | None) -> Relax:
    """``none`` (the default, strict), ``quotes``, ``nfkc`` or ``quotes,nfkc``; ValueError otherwise."""
    if text is None or text.strip() in ("", "none"):
        return STRICT
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in RELAXATIONS]
    if bad:
        raise ValueError(f"unknown normalisation {bad[0]!r}; use none, or one or more of "
                         f"{', '.join(RELAXATIONS)} separated by commas")
    return frozenset(names)


def comparable(text: str, relax: Relax = STRICT) -> str:
    """The form the gate compares: ASCII whitespace runs as one space, no outer spaces; with
    ``nfkc`` in ``relax`` NFKC first, with ``quotes`` typographic quotes made straight."""
    if "nfkc" in relax:
        text = unicodedata.normalize("NFKC", text)
    if "quotes" in relax:
        text = text.translate(_QUOTES)
    return _ASCII_SPACE.sub(" ", text).strip(" ")


def normalise(text: str) -> str:
    """Every relaxation at once: NFKC, straight quotes, one space for every whitespace run."""
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
    lines = [_squash(ln) for ln in _newlines(text).split("\n") if ln.strip()]
    if len(lines) == N_SENTENCES:
        return (lines[0], lines[1], lines[2], lines[3])
    parts = sentences(text)
    if len(parts) > N_SENTENCES or (len(parts) < N_SENTENCES and not fragments):
        raise ValueError(f"the input splits into {len(parts)} sentence{'s' if len(parts) != 1 else ''}; "
                         f"exactly {N_SENTENCES} are needed "
                         "(end each with . ! or ?, or give the four sentences one per line)")
    while len(parts) < N_SENTENCES:
        parts = _cut_first_fusion(parts, len(parts))
    return (parts[0], parts[1], parts[2], parts[3])


def punctuation_sentences(text: str) -> list[str]:
    """The earlier rule 2 alone: a sentence ends at . ! ? or … (and closing quotes or brackets)
    followed by a space and an upper-case letter, a digit or an opening quote."""
    flat = _squash(text)
    parts: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(flat):
        nxt = flat[m.end():m.end() + 1]
        if nxt.isupper() or nxt.isdigit() or nxt in _OPENERS:
            parts.append(flat[start:m.end()].strip())
            start = m.end()
    parts.append(flat[start:].strip())
    return [p for p in parts if p]


@functools.cache
def _segmenter() -> Any:
    import pysbd  # loaded on first use: its rule tables take a moment to build

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def sentences(text: str) -> list[str]:
    """Rule 2: the sentences of ``text`` (whitespace runs as one space) by pySBD's English rules
    (abbreviations such as Mr. and e.g., initials, decimals, quotations, ellipses, list items):
    47 of the Pragmatic Segmenter's 48 English Golden Rules, against 29 for the punctuation rule
    (``punctuation_sentences``). pySBD only says where each sentence starts and ends; the
    sentences are cut from the text here, so no character is changed, dropped or added."""
    flat = _squash(text)
    spans = _segmenter().segment(flat)
    out, pos = [], 0
    for sp in spans:  # every character in exactly one sentence, in order; only spaces between
        if sp.start < pos or flat[pos:sp.start].strip() or sp.end <= sp.start:
            raise ValueError("the sentence splitter lost part of the text; please report this input")
        out.append(flat[sp.start:sp.end].strip())
        pos = sp.end
    if flat[pos:].strip():
        raise ValueError("the sentence splitter lost part of the text; please report this input")
    return [o for o in out if o]


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


def _newlines(text: str) -> str:
    """Every line end as ``\\n``: CRLF, CR, NEL and the line separator U+2028 are line breaks, the
    paragraph separator U+2029 a blank line (a paragraph break)."""
    return (text.replace("\r\n", "\n").replace("\r", "\n").replace("\x85", "\n").replace("\u2028", "\n")
            .replace("\u2029", "\n\n"))


def paragraphs(passage: str) -> list[str]:
    """Non-empty paragraphs, split at blank lines and at the paragraph separator U+2029 (CRLF,
    CR, NEL and U+2028 are line ends, so two of them make a blank line)."""
    return [p.strip() for p in _PARAGRAPH_BREAK.split(_newlines(passage)) if p.strip()]


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else "\u2026" + text[-(width - 1):]


def _at_boundary(body: str, want: str) -> bool:
    """``body`` ends with ``want`` and the character before it (if any) starts a word."""
    if not body.endswith(want):
        return False
    before = body[: len(body) - len(want)]
    return not before or before[-1] == " " or before[-1] in _OPENERS


def _body(want: str, got: str) -> str:
    # A fragment without end punctuation may be followed by some in the passage.
    return got.rstrip(_END) if want[-1] not in _END + _CLOSERS else got


def ending_problem(sentence: str, paragraph: str, relax: Relax = STRICT) -> str | None:
    """None when ``paragraph`` ends with ``sentence`` (compared as ``comparable`` says, on a word
    boundary), else a one-line reason that shows both endings and says what changed."""
    want, got = comparable(sentence, relax), comparable(paragraph, relax)
    if not want:
        return "the required sentence is empty"
    if not got:
        return "the paragraph is empty"
    body = _body(want, got)
    if _at_boundary(body, want):
        return None
    if body.endswith(want):
        before = body[: len(body) - len(want)]
        return f"it ends with {want!r} but inside a longer word ({_short(before[-20:] + want)!r})"
    change = what_changed(want, got, relax)
    tail = got[-(len(want) + 12):]
    shown = tail if len(tail) == len(got) else "\u2026" + tail
    return f'it ends with "{shown}" but the required sentence is "{want}": {change}'


def what_changed(want: str, got: str, relax: Relax = STRICT) -> str:
    """What turns the required sentence ``want`` into the end of ``got`` (both comparable forms)."""
    tail = got[-len(want):] if len(got) >= len(want) else got
    if len(tail) == len(want) and tail != want and tail.lower() == want.lower():
        i = next(j for j, (a, b) in enumerate(zip(want, tail, strict=False)) if a != b)
        return f"letter case differs at character {i + 1} ({tail[i]!r} written, {want[i]!r} required)"
    missing = [r for r in RELAXATIONS if r not in relax]
    enough = next((extra for extra in [[r] for r in missing] + [missing]
                   if extra and ending_problem(want, got, relax | frozenset(extra)) is None), None)
    if enough is not None:
        i = next((j for j, (a, b) in enumerate(zip(want, tail, strict=False)) if a != b), min(len(want), len(tail)) - 1)
        if enough == ["quotes"]:
            return (f"a quote mark differs at character {i + 1} ({tail[i]!r} written, {want[i]!r} required; "
                    f"--normalise quotes accepts this)")
        return (f"characters differ from character {i + 1} ({tail[i]!r} written, {want[i]!r} required) "
                f"that are the same after {' and '.join(enough)} (--normalise {','.join(enough)} accepts this)")
    if want[-1] in _END and _at_boundary(got, want[:-1]):
        return f"the final {want[-1]!r} is missing"
    if want[-1] in _END and got[-1] in _END and _at_boundary(got[:-1], want[:-1]):
        return f"the final mark differs ({got[-1]!r} written, {want[-1]!r} required)"
    k = got.rfind(want)
    while k != -1 and not (k == 0 or got[k - 1] == " " or got[k - 1] in _OPENERS):
        k = got.rfind(want, 0, k)
    if k != -1:
        return f"the sentence is there but the paragraph goes on after it ({_short(got[k + len(want):], 40)!r})"
    return _word_change(want, got)


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _word_change(want: str, got: str) -> str:
    """The first word-level difference between ``want`` and the end of ``got`` (difflib over
    words and punctuation marks), located by character position in ``want``."""
    import difflib

    w = list(_TOKEN.finditer(want))
    g = list(_TOKEN.finditer(got))[-(len(w) + 6):]
    sm = difflib.SequenceMatcher(None, [m.group(0) for m in w], [m.group(0) for m in g], autojunk=False)
    matched = sum(b.size for b in sm.get_matching_blocks())
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    # Extra words before the sentence are the paragraph's own text, not a change.
    if ops and ops[0][0] == "insert" and ops[0][1] == 0:
        ops = ops[1:]
    if matched * 2 < len(w) or not ops:
        return "the required sentence is not at the end of the paragraph"
    tag, i1, i2, j1, j2 = ops[0]
    written = got[g[j1].start():g[j2 - 1].end()] if j2 > j1 else ""
    if tag == "insert":
        where = f"before character {w[i1].start() + 1} ({w[i1].group(0)!r})" if i1 < len(w) else "at the end"
        return f"{written!r} is added {where}"
    required = want[w[i1].start():w[i2 - 1].end()]
    if tag == "delete":
        return f"{required!r} (from character {w[i1].start() + 1}) is missing"
    return f"{required!r} (from character {w[i1].start() + 1}) is written as {written!r}"


def check_passage(sentences: tuple[str, ...], passage: str, relax: Relax = STRICT) -> PassageProblem | None:
    """None when the passage has exactly four paragraphs ending with the sentences in order."""
    if len(passage) > MAX_PASSAGE_CHARS:
        return PassageProblem(None, f"the passage is {len(passage)} characters; at most {MAX_PASSAGE_CHARS}")
    paras = paragraphs(passage)
    if len(paras) != len(sentences):
        return PassageProblem(None, f"expected {len(sentences)} paragraphs separated by blank lines, "
                                    f"found {len(paras)}")
    for i, (sentence, para) in enumerate(zip(sentences, paras, strict=True), 1):
        why = ending_problem(sentence, para, relax)
        if why is None:
            continue
        others = [j for j in range(1, len(sentences) + 1)
                  if j != i and ending_problem(sentences[j - 1], para, relax) is None]
        if others:
            why += f" (it ends with sentence {others[0]} instead: wrong order)"
        return PassageProblem(i, f"paragraph {i} must end with sentence {i}: {why}")
    return None


RULES = ("Creative writing: exactly {n} non-empty paragraphs separated by blank lines; paragraph k ends "
         "with required sentence k exactly (whitespace runs count as one space{relaxed})")


def rules_text(n: int, relax: Relax = STRICT) -> str:
    """The rule set, naming any normalisation the user allowed (strict by default)."""
    relaxed = "".join(f"; {name} normalised" for name in RELAXATIONS if name in relax)
    return RULES.format(n=n, relaxed=relaxed)


def report_passage(sentences: tuple[str, ...], passage: str, relax: Relax = STRICT) -> AnswerReport:
    """Every exact check of a passage, each named: its length, the paragraph count and each
    paragraph's ending. The same facts as ``check_passage``, which is its first failed check."""
    rules = rules_text(len(sentences), relax)
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
        why = ending_problem(sentence, paras[i - 1], relax)
        checks.append(Check(name, why is None, why or ""))
    return AnswerReport(rules, tuple(checks))
