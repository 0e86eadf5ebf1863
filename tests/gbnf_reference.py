"""An independent reader of GBNF (llama.cpp's grammar format) for the grammar tests: a parser, a
matcher and an expander of finite languages. Written from llama.cpp's grammars/README.md, sharing
no code with ``solver.grammar``, so a test that checks a grammar against it can fail.

Supported: rules ``name ::= body`` (a body may continue on lines that do not start a new rule),
string literals with ``\\n \\r \\t \\\\ \\" \\xHH \\uHHHH`` escapes, character classes ``[...]``
(ranges, ``^``), rule references, grouping, ``|``, and the postfix ``?``, ``*``, ``+``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Union


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Cls:
    ranges: tuple[tuple[str, str], ...]
    negated: bool

    def has(self, ch: str) -> bool:
        inside = any(lo <= ch <= hi for lo, hi in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    item: Node
    least: int
    most: int | None  # None: unbounded


Node = Union[Lit, Cls, Ref, Seq, Alt, Rep]


class GrammarError(ValueError):
    pass


def _escape(text: str, i: int) -> tuple[str, int]:
    """The character of the escape at text[i] == '\\', and the index after it."""
    c = text[i + 1]
    simple = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^"}
    if c in simple:
        return simple[c], i + 2
    if c == "x":
        return chr(int(text[i + 2:i + 4], 16)), i + 4
    if c == "u":
        return chr(int(text[i + 2:i + 6], 16)), i + 6
    raise GrammarError(f"unknown escape \\{c}")


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def ws(self, newlines: bool) -> None:
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            elif ch in " \t" or (newlines and ch in "\r\n"):
                self.i += 1
            else:
                return

    def name(self) -> str:
        m = re.compile(r"[a-zA-Z0-9-]+").match(self.s, self.i)
        if not m:
            raise GrammarError(f"expected a rule name at {self.i}")
        self.i = m.end()
        return m.group()

    def at_rule_start(self) -> bool:
        return re.compile(r"[a-zA-Z0-9-]+[ \t]*::=").match(self.s, self.i) is not None

    def alternatives(self, nested: bool) -> Node:
        options = [self.sequence(nested)]
        while True:
            self.ws(nested)
            if self.i < len(self.s) and self.s[self.i] == "|":
                self.i += 1
                self.ws(True)
                options.append(self.sequence(nested))
            else:
                break
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def sequence(self, nested: bool) -> Node:
        items: list[Node] = []
        while True:
            self.ws(nested)
            if self.i >= len(self.s):
                break
            ch = self.s[self.i]
            if ch in "|)":
                break
            if ch in "\r\n":  # end of the rule, unless the next line is not a new rule
                save = self.i
                self.ws(True)
                if self.i >= len(self.s) or self.at_rule_start():
                    self.i = save
                    break
                continue
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def atom(self) -> Node:
        ch = self.s[self.i]
        if ch == '"':
            self.i += 1
            out = []
            while self.s[self.i] != '"':
                if self.s[self.i] == "\\":
                    c, self.i = _escape(self.s, self.i)
                    out.append(c)
                else:
                    out.append(self.s[self.i])
                    self.i += 1
            self.i += 1
            return Lit("".join(out))
        if ch == "[":
            self.i += 1
            negated = self.s[self.i] == "^"
            if negated:
                self.i += 1
            ranges = []
            while self.s[self.i] != "]":
                lo = self.char()
                hi = lo
                if self.s[self.i] == "-" and self.s[self.i + 1] != "]":
                    self.i += 1
                    hi = self.char()
                ranges.append((lo, hi))
            self.i += 1
            return Cls(tuple(ranges), negated)
        if ch == "(":
            self.i += 1
            self.ws(True)
            inner = self.alternatives(True)
            self.ws(True)
            if self.s[self.i] != ")":
                raise GrammarError(f"expected ) at {self.i}")
            self.i += 1
            return inner
        return Ref(self.name())

    def char(self) -> str:
        if self.s[self.i] == "\\":
            c, self.i = _escape(self.s, self.i)
            return c
        c = self.s[self.i]
        self.i += 1
        return c

    def postfix(self, node: Node) -> Node:
        while self.i < len(self.s) and self.s[self.i] in "?*+":
            op = self.s[self.i]
            self.i += 1
            node = Rep(node, 0 if op in "?*" else 1, 1 if op == "?" else None)
        return node


def parse(text: str) -> dict[str, Node]:
    """Rule name -> body. Raises GrammarError on anything outside the subset."""
    r = _Reader(text)
    rules: dict[str, Node] = {}
    while True:
        r.ws(True)
        if r.i >= len(r.s):
            break
        name = r.name()
        r.ws(False)
        if not r.s.startswith("::=", r.i):
            raise GrammarError(f"expected ::= after {name}")
        r.i += 3
        r.ws(False)
        if name in rules:
            raise GrammarError(f"rule {name} defined twice")
        rules[name] = r.alternatives(False)
    if "root" not in rules:
        raise GrammarError("no root rule")
    for body in rules.values():
        for ref in _refs(body):
            if ref not in rules:
                raise GrammarError(f"undefined rule {ref}")
    return rules


def _refs(node: Node) -> Iterator[str]:
    if isinstance(node, Ref):
        yield node.name
    elif isinstance(node, Seq):
        for n in node.items:
            yield from _refs(n)
    elif isinstance(node, Alt):
        for n in node.options:
            yield from _refs(n)
    elif isinstance(node, Rep):
        yield from _refs(node.item)


class Grammar:
    def __init__(self, text: str) -> None:
        self.rules = parse(text)

    # -- matching: the set of end positions reachable from a start position -------------------
    def matches(self, text: str) -> bool:
        ends = self._ends(self.rules["root"], text, 0, 0)
        return len(text) in ends

    def _ends(self, node: Node, s: str, i: int, depth: int) -> set[int]:
        if depth > 400:
            raise GrammarError("grammar too deep (left recursion?)")
        if isinstance(node, Lit):
            return {i + len(node.text)} if s.startswith(node.text, i) else set()
        if isinstance(node, Cls):
            return {i + 1} if i < len(s) and node.has(s[i]) else set()
        if isinstance(node, Ref):
            return self._ends(self.rules[node.name], s, i, depth + 1)
        if isinstance(node, Seq):
            pos = {i}
            for item in node.items:
                pos = {e for p in pos for e in self._ends(item, s, p, depth + 1)}
                if not pos:
                    break
            return pos
        if isinstance(node, Alt):
            return {e for o in node.options for e in self._ends(o, s, i, depth + 1)}
        assert isinstance(node, Rep)
        out = {i} if node.least == 0 else set()
        frontier, count, seen = {i}, 0, set()
        while frontier and (node.most is None or count < node.most):
            count += 1
            nxt = {e for p in frontier for e in self._ends(node.item, s, p, depth + 1)}
            if node.most is None and count > node.least:
                nxt -= seen  # unbounded: stop once no new position is reached
            if count >= node.least:
                out |= nxt
                seen |= nxt
            frontier = nxt
        return out

    # -- expansion of a finite language ----------------------------------------------------------
    def language(self, limit: int = 100_000) -> set[str]:
        """Every string ``root`` derives; GrammarError if there are more than ``limit`` or the
        language is infinite (unbounded repetition, character classes)."""
        return set(self._lang(self.rules["root"], limit, 0))

    def _lang(self, node: Node, limit: int, depth: int) -> frozenset[str]:
        if depth > 200:
            raise GrammarError("recursive grammar: not a finite language")
        if isinstance(node, Lit):
            return frozenset({node.text})
        if isinstance(node, Cls):
            if node.negated:
                raise GrammarError("negated class: not a finite language")
            return frozenset(chr(c) for lo, hi in node.ranges for c in range(ord(lo), ord(hi) + 1))
        if isinstance(node, Ref):
            return self._lang(self.rules[node.name], limit, depth + 1)
        if isinstance(node, Seq):
            out = frozenset({""})
            for item in node.items:
                part = self._lang(item, limit, depth + 1)
                if len(out) * len(part) > limit:
                    raise GrammarError("language too large to expand")
                out = frozenset(a + b for a in out for b in part)
            return out
        if isinstance(node, Alt):
            acc: set[str] = set()
            for o in node.options:
                acc |= self._lang(o, limit, depth + 1)
                if len(acc) > limit:
                    raise GrammarError("language too large to expand")
            return frozenset(acc)
        assert isinstance(node, Rep)
        if node.most is None:
            raise GrammarError("unbounded repetition: not a finite language")
        item = self._lang(node.item, limit, depth + 1)
        out_set: set[str] = {""} if node.least == 0 else set()
        layer = frozenset({""})
        for k in range(1, node.most + 1):
            if len(layer) * len(item) > limit:
                raise GrammarError("language too large to expand")
            layer = frozenset(a + b for a in layer for b in item)
            if k >= node.least:
                out_set |= layer
        return frozenset(out_set)


@lru_cache(maxsize=256)
def compiled(text: str) -> Grammar:
    return Grammar(text)


def derive(g: Grammar, rng: random.Random, depth: int = 0, node: Node | None = None) -> str:
    """One random string of the language (repetitions of unbounded items: at most 3 times)."""
    node = g.rules["root"] if node is None else node
    if depth > 300:
        raise GrammarError("derivation too deep")
    if isinstance(node, Lit):
        return node.text
    if isinstance(node, Cls):
        if node.negated:
            return rng.choice([chr(c) for c in range(32, 127) if node.has(chr(c))])
        lo, hi = rng.choice(node.ranges)
        return chr(rng.randint(ord(lo), ord(hi)))
    if isinstance(node, Ref):
        return derive(g, rng, depth + 1, g.rules[node.name])
    if isinstance(node, Seq):
        return "".join(derive(g, rng, depth + 1, n) for n in node.items)
    if isinstance(node, Alt):
        return derive(g, rng, depth + 1, rng.choice(node.options))
    assert isinstance(node, Rep)
    count = rng.randint(node.least, node.most if node.most is not None else node.least + 3)
    return "".join(derive(g, rng, depth + 1, node.item) for _ in range(count))
