"""A small GBNF reader, recogniser and sampler written for the tests, sharing no code with the
grammar writers it checks. It covers the part of llama.cpp's GBNF the project writes: rules
``name ::= expr`` (one per line), ``|``, sequences, ``"literals"`` with escapes, ``[classes]``
(ranges, ``^``), rule references, ``( ... )`` and the postfix ``? * +``."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

Node = tuple  # ("alt", [seq]) ("seq", [node]) ("lit", s) ("cls", neg, [(lo, hi)]) ("ref", n) ("rep", node, lo, hi)


@dataclass
class Grammar:
    rules: dict[str, Node]

    def matches(self, text: str, start: str = "root") -> bool:
        memo: dict[tuple[int, int], frozenset[int]] = {}

        def ends(node: Node, pos: int) -> frozenset[int]:
            key = (id(node), pos)
            if key in memo:
                return memo[key]
            memo[key] = frozenset()  # no left recursion in these grammars; guards a loop anyway
            kind = node[0]
            out: set[int] = set()
            if kind == "lit":
                if text.startswith(node[1], pos):
                    out.add(pos + len(node[1]))
            elif kind == "cls":
                if pos < len(text) and _in_class(node, text[pos]):
                    out.add(pos + 1)
            elif kind == "ref":
                out |= ends(self.rules[node[1]], pos)
            elif kind == "alt":
                for option in node[1]:
                    out |= ends(option, pos)
            elif kind == "seq":
                cur = {pos}
                for item in node[1]:
                    cur = {e for p in cur for e in ends(item, p)}
                    if not cur:
                        break
                out |= cur
            elif kind == "rep":
                _, item, lo, hi = node
                frontier, count, seen = {pos}, 0, set()
                if lo == 0:
                    out |= frontier
                while frontier and (hi is None or count < hi):
                    frontier = {e for p in frontier for e in ends(item, p)} - seen
                    seen |= frontier
                    count += 1
                    if count >= lo:
                        out |= frontier
            memo[key] = frozenset(out)
            return memo[key]

        return len(text) in ends(self.rules[start], 0)

    def sample(self, draw: Callable[[int], int], start: str = "root", max_repeat: int = 4) -> str:
        """A random derivation; ``draw(n)`` picks a number in range(n) (hypothesis or random)."""
        out: list[str] = []

        def walk(node: Node, depth: int) -> None:
            if depth > 200:
                raise RecursionError("the grammar derives too deep a string")
            kind = node[0]
            if kind == "lit":
                out.append(node[1])
            elif kind == "cls":
                chars = [chr(c) for c in range(32, 127) if _in_class(node, chr(c))] + \
                        [c for c in "\n\t" if _in_class(node, c)]
                out.append(chars[draw(len(chars))])
            elif kind == "ref":
                walk(self.rules[node[1]], depth + 1)
            elif kind == "alt":
                walk(node[1][draw(len(node[1]))], depth + 1)
            elif kind == "seq":
                for item in node[1]:
                    walk(item, depth + 1)
            elif kind == "rep":
                _, item, lo, hi = node
                top = max_repeat if hi is None else min(hi, max(lo, max_repeat))
                for _ in range(lo + draw(top - lo + 1)):
                    walk(item, depth + 1)

        walk(self.rules[start], 0)
        return "".join(out)


def _in_class(node: Node, ch: str) -> bool:
    _, neg, ranges = node
    inside = any(lo <= ch <= hi for lo, hi in ranges)
    return inside != neg


_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "]": "]", "[": "[", "-": "-", "^": "^"}


def parse(text: str) -> Grammar:
    rules: dict[str, Node] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, body = line.partition("::=")
        if not sep:
            raise ValueError(f"not a rule: {line!r}")
        name = name.strip()
        if name in rules:
            raise ValueError(f"rule {name} defined twice")
        node, rest = _alt(body.strip())
        if rest.strip():
            raise ValueError(f"trailing text in rule {name}: {rest!r}")
        rules[name] = node
    if "root" not in rules:
        raise ValueError("no root rule")
    for node in rules.values():
        _check_refs(node, rules)
    return Grammar(rules)


def _check_refs(node: Node, rules: dict[str, Node]) -> None:
    if node[0] == "ref" and node[1] not in rules:
        raise ValueError(f"undefined rule {node[1]}")
    if node[0] in ("alt", "seq"):
        for n in node[1]:
            _check_refs(n, rules)
    if node[0] == "rep":
        _check_refs(node[1], rules)


def _alt(s: str) -> tuple[Node, str]:
    options = []
    seq, s = _seq(s)
    options.append(seq)
    while s.lstrip().startswith("|"):
        seq, s = _seq(s.lstrip()[1:])
        options.append(seq)
    return (options[0] if len(options) == 1 else ("alt", options)), s


def _seq(s: str) -> tuple[Node, str]:
    items = []
    while True:
        s = s.lstrip()
        if not s or s[0] in "|)":
            return ("seq", items), s
        item, s = _primary(s)
        while s and s[0] in "?*+":
            lo, hi = {"?": (0, 1), "*": (0, None), "+": (1, None)}[s[0]]
            item = ("rep", item, lo, hi)
            s = s[1:]
        items.append(item)


def _primary(s: str) -> tuple[Node, str]:
    if s[0] == '"':
        i, chars = 1, []
        while s[i] != '"':
            if s[i] == "\\":
                chars.append(_ESC[s[i + 1]])
                i += 2
            else:
                chars.append(s[i])
                i += 1
        return ("lit", "".join(chars)), s[i + 1:]
    if s[0] == "[":
        i, neg, ranges = 1, False, []
        if s[1] == "^":
            neg, i = True, 2
        while s[i] != "]":
            if s[i] == "\\":
                lo, i = _ESC[s[i + 1]], i + 2
            else:
                lo, i = s[i], i + 1
            if s[i] == "-" and s[i + 1] != "]":
                hi = s[i + 1] if s[i + 1] != "\\" else _ESC[s[i + 2]]
                i += 2 if s[i + 1] != "\\" else 3
                ranges.append((lo, hi))
            else:
                ranges.append((lo, lo))
        return ("cls", neg, ranges), s[i + 1:]
    if s[0] == "(":
        node, rest = _alt(s[1:])
        rest = rest.lstrip()
        if not rest.startswith(")"):
            raise ValueError("unclosed (")
        return node, rest[1:]
    i = 0
    while i < len(s) and (s[i].isalnum() or s[i] == "-"):
        i += 1
    if i == 0:
        raise ValueError(f"unexpected {s[:20]!r}")
    return ("ref", s[:i]), s[i:]


def random_draw(seed: int) -> Callable[[int], int]:
    rng = random.Random(seed)
    return lambda n: rng.randrange(n)
