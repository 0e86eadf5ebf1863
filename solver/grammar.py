"""Writing GBNF (llama.cpp's grammar format) from code: literals, alternations, repetition, rules.

Tasks write the grammar of the thoughts their gate accepts from a state (``ThoughtGrammar``) with
these helpers; generators wrap a one-thought grammar into the shape of their answer (``lines``
for ``propose``, ``one_line`` for ``sample``). Only a small subset of GBNF is emitted: quoted
literals, character classes written by the caller, rule references, sequences, ``|`` alternation,
grouping and ``?``. Repetition is spelled out with nested optionals, which every llama.cpp version
reads. No model code is imported here.

A grammar is an optimisation, never a proof: the gate checks every thought the decoder produced.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

__all__ = ["THOUGHT_RULE", "alternation", "arithmetic_answer", "expression_rules", "grammar", "lines", "literal",
           "one_line", "optional", "repeat", "rule_name"]

# The name a one-thought grammar's ``root`` takes when a generator wraps it; task grammars must not
# define rules whose names start with ``tot-``.
THOUGHT_RULE = "tot-thought"

_RULE_NAME = re.compile(r"[a-zA-Z0-9-]+")
_ROOT_DEF = re.compile(r"^root(\s*::=)", re.MULTILINE)
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def literal(text: str) -> str:
    """``text`` as a GBNF string literal. Quotes, backslashes and control characters are escaped
    (``\\n``, ``\\xHH``); other characters are written as they are (GBNF reads UTF-8)."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def alternation(items: Iterable[str]) -> str:
    """``( a | b | ... )`` of GBNF expressions, duplicates dropped, order kept. ValueError when
    there is none (an empty alternation matches nothing; GBNF has no spelling for it)."""
    seen = list(dict.fromkeys(items))
    if not seen:
        raise ValueError("an alternation needs at least one item")
    return seen[0] if len(seen) == 1 else "(" + " | ".join(seen) + ")"


def optional(expr: str) -> str:
    return f"({expr})?"


def repeat(expr: str, least: int, most: int) -> str:
    """``expr`` from ``least`` to ``most`` times, as ``e e (e (e)?)?``: plain GBNF, no ``{m,n}``."""
    if least < 0 or most < least or most < 1:
        raise ValueError(f"bad repetition {least}..{most}")
    head = [expr] * least
    tail = ""
    for _ in range(most - least):
        tail = f"({expr}{' ' + tail if tail else ''})?"
    return " ".join([*head, tail] if tail else head)


def rule_name(text: str) -> str:
    """``text`` made into a GBNF rule name (letters, digits and dashes)."""
    name = re.sub(r"[^a-zA-Z0-9-]+", "-", text).strip("-")
    return name or "r"


def grammar(rules: Mapping[str, str]) -> str:
    """A GBNF text from rule name -> body; the mapping must define ``root``."""
    if "root" not in rules:
        raise ValueError("a grammar needs a root rule")
    for name in rules:
        if not _RULE_NAME.fullmatch(name):
            raise ValueError(f"bad GBNF rule name {name!r}")
    return "".join(f"{name} ::= {body}\n" for name, body in rules.items())


def _as_rule(thought: str) -> str:
    """The one-thought grammar with its ``root`` renamed to ``THOUGHT_RULE``."""
    renamed, count = _ROOT_DEF.subn(THOUGHT_RULE + r"\1", thought)
    if count != 1:
        raise ValueError("a thought grammar must define root exactly once")
    return renamed if renamed.endswith("\n") else renamed + "\n"


def lines(thought: str, most: int, prefix: str = "") -> str:
    """The ``propose`` answer: 1 to ``most`` thoughts, each on its own line ending in a newline
    (``prefix`` before each, e.g. a bullet). Bounded so that the decoder stops by itself, before
    the token limit can cut a line in half."""
    line = f"{literal(prefix) + ' ' if prefix else ''}{THOUGHT_RULE} {literal(chr(10))}"
    return f"root ::= {repeat('(' + line + ')', 1, most)}\n" + _as_rule(thought)


def one_line(thought: str, lead: str = " ") -> str:
    """The ``sample`` answer: one thought, after an optional ``lead`` (the space a base model
    writes after a prompt ending in a colon)."""
    head = f"{literal(lead)}? " if lead else ""
    return f"root ::= {head}{THOUGHT_RULE}\n" + _as_rule(thought)


def expression_rules(nums: Sequence[int]) -> dict[str, str]:
    """GBNF rules ``e{m}`` (a sum), ``t{m}`` (a product) and ``f{m}`` (a number or a bracketed
    sum) for each non-empty set ``m`` of positions (a bit mask): the expressions that use exactly
    the numbers at those positions, each once, one space around each operator and none inside
    brackets. Usual precedence, so every expression, with any brackets, has a derivation
    (``a - b - c`` as ``(a - b) - c``)."""
    rules: dict[str, str] = {}
    for m in range(1, 1 << len(nums)):
        splits = [(a, m ^ a) for a in range(1, m) if a & m == a]
        rules[f"e{m}"] = alternation([f"t{m}", *(f'e{a} " " ("+" | "-") " " t{b}' for a, b in splits)])
        rules[f"t{m}"] = alternation([f"f{m}", *(f't{a} " " ("*" | "/") " " f{b}' for a, b in splits)])
        single = [literal(str(n)) for k, n in enumerate(nums) if m == 1 << k]
        rules[f"f{m}"] = alternation([*single, f'"(" e{m} ")"'])
    return rules


def arithmetic_answer(nums: Sequence[int], masks: Iterable[int], target: int, cot: bool) -> str:
    """A baseline's output on an arithmetic puzzle (numbers to combine into a target): ``Answer: EXPR =
    TARGET``, EXPR an expression (``expression_rules``) over the numbers at one of the position
    sets ``masks``. Without ``cot`` the line's rest after an optional space (the IO prompt ends in
    ``Answer:``); with it, first 1 to ``len(nums) - 1`` step lines ``a op b = c (left: ...)``
    (numbers free: the grammar fixes the form, the exact check decides)."""
    rules = expression_rules(nums)
    answer = f"{alternation(f'e{m}' for m in masks)} {literal(f' = {target}')}"
    if not cot:
        return grammar({"root": f'" "? {answer}', **rules})
    return grammar({"root": f'{repeat("step", 1, len(nums) - 1)} "Answer: " {answer}',
                    "step": 'num " " op " " num " = " num " (left: " num (" " num)* ")" "\\n"',
                    "op": '"+" | "-" | "*" | "/"',
                    "num": '"-"? [0-9]+ ("/" [0-9]+)?', **rules})
