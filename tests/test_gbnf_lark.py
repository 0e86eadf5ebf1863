"""The GBNF -> Lark rewrite llguidance decodes under (solver/lm/gbnf_lark.py): llguidance, fed
byte by byte, accepts exactly what the independent GBNF reader (tests/gbnf_reference.py) derives,
on the project's own grammars. llguidance's own converter failed this on LLM+P's object list (its
greedy terminals could not close ``(:objects b1 b2 b3)``), which is why the rewrite exists."""

from __future__ import annotations

import random
from pathlib import Path

import llguidance
import pytest

from solver.lm.gbnf_lark import gbnf_to_lark
from tasks.game24 import Game24
from tasks.game24.grammar import Game24Grammar
from tasks.planning.blocksworld import DOMAIN
from tasks.planning.files import LLMP_DOMAINS, domain_file, llmp_dir
from tasks.planning.problem_grammar import (
    body_grammar,
    canonical,
    domain_shape,
    objects_grammar,
    read_objects_prefix,
)
from tasks.sudoku.grammar import SudokuGrammar
from tasks.sudoku.task import Sudoku
from tests.gbnf_reference import Grammar, derive

TOKENIZER = llguidance.LLTokenizer("byte")


def accepts(gbnf: str, text: str) -> bool:
    m = llguidance.LLMatcher(TOKENIZER, llguidance.LLMatcher.grammar_from_lark(gbnf_to_lark(gbnf)), log_level=0)
    assert not m.is_error(), m.get_error()
    return m.consume_tokens(TOKENIZER.tokenize_bytes(text.encode())) and m.is_accepting()


SHAPE = domain_shape(DOMAIN)
OBJECTS = (("b1", "object"), ("b2", "object"), ("b3", "object"))
GRAMMARS = {
    "objects": objects_grammar(SHAPE),
    "body": body_grammar(SHAPE, OBJECTS),
    "game24 io": Game24Grammar().answer_grammar("4 4 6 8", False),
    "game24 cot": Game24Grammar().answer_grammar("1 2 3 4", True),
    "game24 step": Game24Grammar().thought_grammar(Game24().root("4 9 10 13")),
    "escapes": 'root ::= "a\\"b" [\\]x-z] "\\\\" ("\\n" | [^a-c])+ "" "\\x41" [-]\n',
    "prefix": 'root ::= ("(" "arm" | "(and" " x") ")"\n',  # "(" a prefix of "(and": greedy whole literals fail
    "sudoku step": SudokuGrammar().thought_grammar(Sudoku().root("12**|**12|2***|***1")),
}


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_llguidance_accepts_every_string_the_reference_derives(name: str) -> None:
    text = GRAMMARS[name]
    assert text is not None
    g, rng = Grammar(text), random.Random(name)
    for _ in range(25):
        s = derive(g, rng)
        assert accepts(text, s), (name, s)


def test_llguidance_refuses_what_the_grammar_excludes() -> None:
    for name, s in (("game24 io", " (4 + 8) * (6 - 5) = 24"), ("game24 io", " 4 + 4 + 6 = 24"),
                    ("objects", "(define (problem p) (:domain blocks) (:objects b1 - block)"),
                    ("body", " (:init (on b1 b4)) (:goal (on b1 b2)))"),
                    ("escapes", 'a"b]\\da')):
        grammar = GRAMMARS[name]
        assert grammar is not None and not Grammar(grammar).matches(s), s
        assert not accepts(grammar, s), (name, s)


def test_a_problem_in_canonical_form_closes_its_object_list() -> None:
    truth = ("(define (problem bw-rand-3) (:domain blocks) (:objects b1 b2 b3) (:init (arm-empty) "
             "(on b1 b3) (on-table b2) (on b3 b2) (clear b1)) (:goal (and (on b2 b3) (on b3 b1))))")
    head = truth[:truth.index(" (:init")]
    assert canonical(truth) == truth
    assert accepts(objects_grammar(SHAPE), head)
    assert accepts(body_grammar(SHAPE, OBJECTS), truth[len(head):])


def test_what_the_rewrite_does_not_read_is_a_value_error() -> None:
    for bad in ('root ::= "a"{2,3}\n', 'x ::= "a"\n', 'root ::= y\n', 'root ::= "a\n', 'root ::= [ab\n',
                'root ::= "a"\nroot ::= "b"\n', 'root ::= "\\q"\n'):
        with pytest.raises(ValueError):
            gbnf_to_lark(bad)


def test_prefix_free_literal_grammars_keep_whole_literals_and_the_others_are_split() -> None:
    step = GRAMMARS["game24 step"]
    assert step is not None and '"4 + 9 = 13 (left: 10 13 13)"' in gbnf_to_lark(step)
    prefix = gbnf_to_lark(GRAMMARS["prefix"] or "")
    assert '"(and"' not in prefix and '"("' in prefix
    assert accepts(GRAMMARS["prefix"] or "", "(arm)") and accepts(GRAMMARS["prefix"] or "", "(and x)")


def _shared() -> Path | None:
    """Where the project itself finds LLM+P's data (tasks.planning.files.llmp_dir), if anywhere."""
    try:
        return llmp_dir()
    except ValueError:
        return None


SHARED = _shared()


@pytest.mark.skipif(SHARED is None, reason="LLM+P's data (../shared/data/llmp or $TOT_LLMP_DIR) is not present")
@pytest.mark.parametrize("domain", LLMP_DOMAINS)
def test_llguidance_accepts_every_llmp_ground_truth_in_canonical_form(domain: str) -> None:
    assert SHARED is not None
    folder = SHARED / domain
    text = domain_file(folder).read_text()
    shape = domain_shape(text)
    for f in sorted(folder.glob("p[0-9]*.pddl")):
        truth = canonical(f.read_text())
        end = truth.index(")", truth.index("(:objects")) + 1
        head = read_objects_prefix(truth[:end])
        assert accepts(objects_grammar(shape), truth[:end]), f.name
        assert accepts(body_grammar(shape, head.objects), truth[end:]), f.name
