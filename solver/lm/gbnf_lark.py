"""GBNF (llama.cpp's grammar format) rewritten as llguidance's Lark, with the same language.

llguidance's own converter (``llguidance.gbnf_to_lark``) turns every GBNF rule made only of
characters into a Lark *terminal*, and llguidance lexes terminals greedily without backtracking.
That changes the language: in ``root ::= "(:objects" plain* " "? ")"`` with ``plain ::= " " name``
the lexer, having read `` b1 b2`` as one growing terminal, can no longer close the list with ``)``
(measured on LLM+P's Blocksworld object list: the embedded model under llguidance could only go on
naming objects, while llama.cpp's sampler let it close the list). Here every GBNF rule stays a
Lark *rule* and every terminal is one character (a literal is split into its characters, a
character class is a one-character regular expression), so no terminal is a prefix of a longer
one and greedy lexing never has to choose: the language is exactly the GBNF one. Where the
grammar's literals are prefix-free and it has no character class (``_prefix_free``), each literal
stays one terminal, which is as safe and decodes faster (measured in docs/grammars.md).

Only the subset of GBNF this project writes is read (``solver.grammar``, the tasks' grammars,
``tasks.planning.problem_grammar``): ``name ::= body`` rules (a body may span lines), quoted
literals, character classes, rule references, grouping, ``|``, ``?``, ``*`` and ``+``;
``{m,n}`` repetition is refused (ValueError), so the caller falls back to llama.cpp's sampler.
"""

from __future__ import annotations

import json
import re

__all__ = ["gbnf_to_lark"]

_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_RULE_START = re.compile(r"^\s*([a-zA-Z0-9_-]+)\s*::=", re.MULTILINE)
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^"}


def _escape(text: str, i: int) -> tuple[str, int]:
    """The character of the escape starting at ``text[i] == '\\'``, and the index after it."""
    if i + 1 >= len(text):
        raise ValueError("a GBNF escape at the end of the text")
    c = text[i + 1]
    if c in _SIMPLE:
        return _SIMPLE[c], i + 2
    width = {"x": 2, "u": 4, "U": 8}.get(c)
    if width is None:
        raise ValueError(f"unknown GBNF escape \\{c}")
    digits = text[i + 2:i + 2 + width]
    if len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
        raise ValueError(f"bad GBNF escape \\{c}{digits}")
    return chr(int(digits, 16)), i + 2 + width


def _class_char(ch: str) -> str:
    """One character inside a regular expression's ``[...]``."""
    if ch in "\\]^-[/":
        return "\\" + ch
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if ord(ch) < 0x20 or ord(ch) == 0x7F:
        return f"\\x{ord(ch):02x}"
    return ch


def _class_item(text: str, i: int) -> tuple[str, int]:
    """One character of a GBNF character class (escapes read), and the index after it."""
    return _escape(text, i) if text[i] == "\\" else (text[i], i + 1)


def _body(text: str, names: dict[str, str], whole: bool, seen: list[str] | None = None) -> str:
    """One rule's body in Lark; ``whole``: each literal one terminal, else one a character.
    ``seen`` collects the literals read, and ``"[]"`` once a character class is read."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()|?*+":
            out.append(c)
            i += 1
        elif c == "{":
            raise ValueError("GBNF {m,n} repetition is not read here")
        elif c == '"':
            chars: list[str] = []
            i += 1
            while i < len(text) and text[i] != '"':
                if text[i] == "\\":
                    ch, i = _escape(text, i)
                else:
                    ch, i = text[i], i + 1
                chars.append(ch)
            if i >= len(text):
                raise ValueError("an unclosed GBNF literal")
            i += 1
            if seen is not None:
                seen.append("".join(chars))
            if whole or not chars:
                out.append(json.dumps("".join(chars), ensure_ascii=False))
            else:
                out.append("(" + " ".join(json.dumps(ch, ensure_ascii=False) for ch in chars) + ")")
        elif c == "[":
            j = i + 1
            parts: list[str] = []
            if j < len(text) and text[j] == "^":
                parts.append("^")
                j += 1
            while j < len(text) and text[j] != "]":
                lo, j = _class_item(text, j)
                if j + 1 < len(text) and text[j] == "-" and text[j + 1] != "]":
                    hi, j = _class_item(text, j + 1)
                    parts.append(_class_char(lo) + "-" + _class_char(hi))
                else:
                    parts.append(_class_char(lo))
            if j >= len(text):
                raise ValueError("an unclosed GBNF character class")
            if not parts or parts == ["^"]:
                raise ValueError("an empty GBNF character class")
            out.append("/[" + "".join(parts) + "]/")
            if seen is not None:
                seen.append("[]")
            i = j + 1
        else:
            m = _NAME.match(text, i)
            if m is None:
                raise ValueError(f"unexpected {c!r} in a GBNF rule")
            if m.group(0) not in names:
                raise ValueError(f"the GBNF rule {m.group(0)!r} is used but not defined")
            out.append(names[m.group(0)])
            i = m.end()
    return " ".join(out)


def gbnf_to_lark(gbnf: str) -> str:
    """The Lark text (llguidance's dialect) of a GBNF grammar whose start rule is ``root``;
    ValueError with a one-line reason for what is not read."""
    code = "\n".join(_strip_comment(line) for line in gbnf.splitlines())
    starts = list(_RULE_START.finditer(code))
    if not starts:
        raise ValueError("no GBNF rule")
    names: dict[str, str] = {}
    for k, m in enumerate(starts):
        if m.group(1) in names:
            raise ValueError(f"the GBNF rule {m.group(1)!r} is defined twice")
        names[m.group(1)] = f"r{k}_" + re.sub(r"[^a-z0-9_]", "_", m.group(1).lower())
    if "root" not in names:
        raise ValueError("a GBNF grammar needs a root rule")
    bodies = [code[m.end():(starts[k + 1].start() if k + 1 < len(starts) else len(code))]
              for k, m in enumerate(starts)]
    seen: list[str] = []
    for body in bodies:
        _body(body, names, False, seen)
    whole = _prefix_free(seen)
    rules = [f"start: {names['root']}"]
    for m, body in zip(starts, bodies, strict=True):
        lark = _body(body, names, whole)
        rules.append(f"{names[m.group(1)]}: {lark if lark else '()'}")
    return "\n".join(rules) + "\n"


def _prefix_free(literals: list[str]) -> bool:
    """Whether whole literals are safe terminals: no character class, no empty literal, and no
    literal a proper prefix of another. Then a literal that matches can never be extended into
    another and a dead end inside one is a string outside the language, so greedy lexing needs no
    backtracking (the Game of 24 step lines are such).
    Otherwise every terminal is one character."""
    if "[]" in literals or "" in literals:
        return False
    ordered = sorted(set(literals))
    return all(not b.startswith(a) for a, b in zip(ordered, ordered[1:], strict=False))


def _strip_comment(line: str) -> str:
    """A line without a ``#`` comment (one outside a literal or a character class)."""
    quote = klass = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and (quote or klass):
            i += 2
            continue
        if c == '"' and not klass:
            quote = not quote
        elif c == "[" and not quote:
            klass = True
        elif c == "]" and klass:
            klass = False
        elif c == "#" and not quote and not klass:
            return line[:i]
        i += 1
    return line
