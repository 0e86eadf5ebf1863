"""Grammars of legal thoughts: what each derives, checked against the task's own parser and gate
with an independent GBNF reader (tests/gbnf_reference.py), and the GBNF helpers themselves."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.grammar import alternation, grammar, lines, literal, one_line, repeat
from solver.task import Thought
from solver.task_capabilities import LegalMoves, ProposePrompts, Restorable, ThoughtGrammar, find
from tasks.game24 import Game24, State24
from tests.gbnf_reference import Grammar, GrammarError
from verifiers.verdict import Invalid

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- the helpers ---------------------------------------------------------------------------

@FAST
@given(st.text(max_size=30))
def test_a_literal_derives_exactly_its_text(text: str) -> None:
    g = Grammar(grammar({"root": literal(text)}))
    assert g.language() == {text}
    assert g.matches(text)


@FAST
@given(st.lists(st.text(alphabet="ab\"\\\n x", max_size=6), min_size=1, max_size=6))
def test_an_alternation_derives_exactly_its_items(items: list[str]) -> None:
    g = Grammar(grammar({"root": alternation(literal(t) for t in items)}))
    assert g.language() == set(items)


@pytest.mark.parametrize("least,most", [(0, 1), (0, 3), (1, 1), (1, 4), (2, 2), (2, 5)])
def test_repeat_derives_the_counts_asked_for(least: int, most: int) -> None:
    g = Grammar(grammar({"root": repeat(literal("ab"), least, most)}))
    assert g.language() == {"ab" * k for k in range(least, most + 1)}


def test_an_empty_alternation_is_refused() -> None:
    with pytest.raises(ValueError):
        alternation([])


def test_lines_and_one_line_wrap_a_thought_grammar() -> None:
    thought = grammar({"root": alternation([literal("x = 1"), literal("y = 2")])})
    g = Grammar(lines(thought, 2))
    assert g.language() == {a + "\n" + (b + "\n" if b else "") for a in ("x = 1", "y = 2")
                            for b in ("", "x = 1", "y = 2")}
    assert Grammar(one_line(thought)).language() == {"x = 1", "y = 2", " x = 1", " y = 2"}


# ---- Game of 24 ----------------------------------------------------------------------------

TASK = Game24()


def _states() -> st.SearchStrategy[State24]:
    """A root of four numbers 1-13, then 0-2 legal steps taken (chosen by hypothesis)."""

    @st.composite
    def build(draw: st.DrawFn) -> State24:
        nums = draw(st.lists(st.integers(1, 13), min_size=4, max_size=4))
        state = TASK.root(" ".join(map(str, nums)))
        for _ in range(draw(st.integers(0, 2))):
            moves = find(TASK, LegalMoves).legal_thoughts(state)
            move = moves[draw(st.integers(0, len(moves) - 1))]
            verdict = TASK.check(state, move)
            assert not isinstance(verdict, Invalid)
            state = verdict.state
        return state

    return build()


def _language(state: State24) -> set[str]:
    part = find(TASK, ThoughtGrammar)
    assert part is not None
    text = part.thought_grammar(state)
    assert text is not None
    return Grammar(text).language()


@FAST
@given(_states())
def test_game24_every_derived_step_is_parsed_and_accepted_by_the_gate(state: State24) -> None:
    for line in _language(state):
        assert find(TASK, ProposePrompts).parse_proposals(state, line) == [Thought(line)]
        verdict = TASK.check(state, Thought(line))
        assert not isinstance(verdict, Invalid), (state.numbers, line, verdict)


@FAST
@given(_states())
def test_game24_every_legal_step_is_derivable(state: State24) -> None:
    language = _language(state)
    for thought in find(TASK, LegalMoves).legal_thoughts(state):
        assert thought.text in language


def _reference_steps(numbers: tuple[Fraction, ...]) -> set[tuple[Fraction, str, Fraction]]:
    """Every (a, op, b) over two positions, brute force: the moves a grammar must not lose."""
    out = set()
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j:
                for op in "+-*/":
                    if not (op == "/" and b == 0):
                        out.add((a, op, b))
    return out


@FAST
@given(_states())
def test_game24_the_grammar_covers_every_operand_order_the_gate_accepts(state: State24) -> None:
    """Independent of legal_thoughts: every ordered pair and operator, by brute force, appears
    in the language (the gate accepts 9 + 4 as well as 4 + 9)."""
    language = _language(state)
    heads = {line.split(" = ")[0] for line in language}

    def fmt(x: Fraction) -> str:
        return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"

    for a, op, b in _reference_steps(state.numbers):
        assert f"{fmt(a)} {op} {fmt(b)}" in heads, (state.numbers, a, op, b)


def test_game24_a_state_with_one_number_has_no_grammar() -> None:
    part = find(TASK, ThoughtGrammar)
    assert part is not None and part.thought_grammar(find(TASK, Restorable).restore("4 6 7 13", "24")) is None


@FAST
@given(_states(), st.data())
def test_game24_propose_answers_under_the_grammar_parse_into_their_lines(state: State24, data: st.DataObject) -> None:
    part = find(TASK, ThoughtGrammar)
    assert part is not None
    text = part.thought_grammar(state)
    assert text is not None
    g = Grammar(lines(text, 4))
    chosen = data.draw(st.lists(st.sampled_from(sorted(_language(state))), min_size=1, max_size=4))
    answer = "".join(c + "\n" for c in chosen)
    assert g.matches(answer)
    assert [t.text for t in find(TASK, ProposePrompts).parse_proposals(state, answer)] == chosen
    assert not g.matches(answer + answer) or len(chosen) * 2 <= 4


def test_game24_a_wrong_step_is_not_derivable() -> None:
    state = TASK.root("4 9 10 13")
    g = Grammar(find(TASK, ThoughtGrammar).thought_grammar(state))  # type: ignore[union-attr, arg-type]
    assert not g.matches("4 + 9 = 12 (left: 10 12 13)")
    assert not g.matches("4 + 4 = 8 (left: 8 9 10 13)")
    assert not g.matches("4 + 9 = 13")


def test_the_reference_reader_refuses_what_it_cannot_expand() -> None:
    with pytest.raises(GrammarError):
        Grammar('root ::= "a"*').language()
    assert Grammar('root ::= "a"*').matches("aaa")


# ---- the generators send it --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["propose", "sample"])
@pytest.mark.parametrize("on", [True, False])
def test_propose_and_sample_decode_under_the_tasks_grammar_unless_it_is_off(name: str, on: bool) -> None:
    import asyncio

    from solver.generators import make_generator
    from solver.lm.client import LMClient
    from tests.fakes import ScriptedBackend

    backend = ScriptedBackend(lambda p, g, i: "4 + 9 = 13 (left: 10 13 13)\n")
    gen = make_generator(name, k=2, grammar=on)
    state = TASK.root("4 9 10 13")
    thoughts = asyncio.run(gen(TASK, state, LMClient(backend).session()))  # type: ignore[operator]
    assert thoughts and thoughts[0].text == "4 + 9 = 13 (left: 10 13 13)"
    sent = backend.requests[0][1].grammar
    if not on:
        assert sent is None
        return
    assert sent is not None
    g = Grammar(sent)
    for line in _language(state):  # every legal step, as the generator's answer shape
        assert g.matches(line + "\n" if name == "propose" else " " + line)
    assert not g.matches("4 + 9 = 12 (left: 10 12 13)\n")


def test_a_constrained_and_an_unconstrained_request_are_never_the_same_entry() -> None:
    import asyncio

    from solver.lm.base import GenParams
    from solver.lm.client import LMClient
    from tests.fakes import ScriptedBackend

    backend = ScriptedBackend(lambda p, g, i: "free" if g.grammar is None else "constrained")
    session = LMClient(backend).session()
    free = asyncio.run(session.complete("p", GenParams()))
    bound = asyncio.run(session.complete("p", GenParams(grammar='root ::= "x"')))
    assert (free, bound) == (["free"], ["constrained"]) and len(backend.requests) == 2
    assert GenParams().key() == {k: v for k, v in GenParams(grammar="g").key().items() if k != "grammar"}


# ---- Sudoku --------------------------------------------------------------------------------

SOLVED = {
    4: ("1234", "3412", "2143", "4321"),
    9: ("534678912", "672195348", "198342567", "859761423", "426853791", "713924856", "961537284",
        "287419635", "345286179"),
}


def _sudoku_states() -> st.SearchStrategy[tuple[bool, str]]:
    """(boxes, puzzle): a solved board with some cells blanked; sometimes, on the Latin variant,
    a digit moved so the board is legal but has no solution."""

    @st.composite
    def build(draw: st.DrawFn) -> tuple[bool, str]:
        n = draw(st.sampled_from([4, 9]))
        rows = [list(r) for r in SOLVED[n]]
        cells = [(r, c) for r in range(n) for c in range(n)]
        blank = draw(st.sets(st.sampled_from(cells), min_size=1, max_size=min(len(cells), 30)))
        for r, c in blank:
            rows[r][c] = "*"
        return draw(st.booleans()), "|".join("".join(r) for r in rows)

    return build()


def _json_board(board: tuple[tuple[int, ...], ...]) -> str:
    """The answer format of the prompts, written here from the prompt's examples."""
    rows = ", ".join('"' + "".join(str(v) if v else "*" for v in row) + '"' for row in board)
    return ' {"rows": [' + rows + "]}"


@FAST
@given(_sudoku_states())
def test_sudoku_every_derived_board_is_parsed_and_accepted_and_every_placement_derivable(
        case: tuple[bool, str]) -> None:
    from tasks.sudoku.task import Sudoku
    from verifiers.sudoku import rule_break

    boxes, puzzle = case
    task = Sudoku(boxes)
    state = task.root(puzzle)
    part = find(task, ThoughtGrammar)
    assert part is not None
    text = part.thought_grammar(state)
    board = state.board
    n = len(board)
    legal = []
    for r in range(n):
        for c in range(n):
            if board[r][c] == 0:
                for d in range(1, n + 1):
                    new = tuple(tuple(d if (i, j) == (r, c) else board[i][j] for j in range(n)) for i in range(n))
                    if rule_break(new, boxes) is None:
                        legal.append(new)
    if text is None:
        assert not legal
        return
    g = Grammar(text)
    language = g.language()
    assert len(language) == 2 * len(legal)  # with and without the leading space
    for answer in language:
        found = find(task, ProposePrompts).parse_proposals(state, answer)
        assert len(found) == 1
        assert not isinstance(task.check(state, found[0]), Invalid), answer
    for new in legal:
        assert g.matches(_json_board(new))
    for thought in find(task, LegalMoves).legal_thoughts(state):
        assert any(find(task, ProposePrompts).parse_proposals(state, a) == [thought] for a in language)


def test_sudoku_a_full_board_has_no_grammar() -> None:
    from tasks.sudoku.task import Sudoku

    task = Sudoku()
    part = find(task, ThoughtGrammar)
    assert part is not None and part.thought_grammar(task.root("1234|3412|2143|4321")) is None


# ---- crosswords ----------------------------------------------------------------------------

def _crossword_states() -> st.SearchStrategy[tuple[int, list[int]]]:
    return st.tuples(st.integers(0, 19), st.lists(st.integers(0, 10_000), max_size=4))


@FAST
@given(_crossword_states(), st.randoms(use_true_random=False))
def test_crosswords_derived_lines_pass_the_gate_and_every_fitting_word_is_derivable(
        case: tuple[int, list[int]], rng: Any) -> None:
    import re as regex

    from tasks.crosswords.data import load_puzzles
    from tasks.crosswords.task import Crosswords
    from tests.gbnf_reference import derive

    puzzles = _CW.setdefault("puzzles", load_puzzles())
    task = _CW.setdefault("task", Crosswords())
    which, picks = case
    p = puzzles[which]
    state = task.root(p.text())
    for k in picks:  # a few lexicon candidates placed, chosen by hypothesis
        moves = find(task, LegalMoves).legal_thoughts(state)
        if not moves:
            break
        verdict = task.check(state, moves[k % len(moves)])
        if isinstance(verdict, Invalid):
            break
        state = verdict.state
    part = find(task, ThoughtGrammar)
    assert part is not None
    text = part.thought_grammar(state)
    if text is None:
        assert not state.grid.open_slots()
        return
    g = Grammar(text)
    for _ in range(30):
        line = derive(g, rng)
        found = find(task, ProposePrompts).parse_proposals(state, line)
        assert len(found) == 1, line
        assert not isinstance(task.check(state, found[0]), Invalid), line
    for thought in find(task, LegalMoves).legal_thoughts(state):
        assert g.matches(thought.text) and g.matches(thought.text + " (high)")
    # Every lexicon word that fits an open slot, found here by a plain regex scan of the words.
    for slot in state.grid.open_slots():
        pattern = "".join("." if ch == "_" else ch.lower() for ch in state.grid.pattern(slot))
        words = task.words.lexicon.index(slot.length).words
        fitting = [w for w in words if regex.fullmatch(pattern, w)]
        for w in fitting[:200] + fitting[-50:]:
            assert g.matches(f"{slot.name}. {w.upper()}"), (slot.name, w)
    filled = [s for s in state.grid.layout.slots if not state.grid.is_open(s)]
    for slot in filled:  # a filled slot is not offered again
        assert not g.matches(f"{slot.name}. {state.grid.pattern(slot)}")


_CW: dict[str, Any] = {}


# ---- planning over actions ---------------------------------------------------------------------

@FAST
@given(st.integers(2, 5), st.integers(0, 1000), st.lists(st.integers(0, 1000), max_size=4))
def test_planning_derives_exactly_the_actions_the_gate_applies(n: int, seed: int, picks: list[int]) -> None:
    from itertools import product

    from tasks.planning.blocksworld import DOMAIN, problem
    from tasks.planning.files import join_puzzle
    from tasks.planning.task import Planning

    task = Planning()
    state = task.root(join_puzzle(DOMAIN, problem(n, seed)))
    for k in picks:
        moves = find(task, LegalMoves).legal_thoughts(state)
        if not moves:
            break
        verdict = task.check(state, moves[k % len(moves)])
        if isinstance(verdict, Invalid) or verdict.state is None:
            break
        state = verdict.state
    part = find(task, ThoughtGrammar)
    assert part is not None
    text = part.thought_grammar(state)
    # By brute force, independent of the grounding: every schema over every tuple of objects, asked
    # of the gate.
    objects = sorted(name for name, _type in state.problem.objects)
    accepted = set()
    for schema in state.problem.schemas:
        for args in product(objects, repeat=len(schema.params)):
            line = "(" + " ".join((schema.name, *args)) + ")"
            if not isinstance(task.check(state, Thought(line)), Invalid):
                accepted.add(line)
    if text is None:
        assert not accepted
        return
    language = Grammar(text).language()
    assert language == accepted
    for line in language:
        assert find(task, ProposePrompts).parse_proposals(state, line) == [Thought(line)]


def test_planning_with_types_constants_negation_and_equality() -> None:
    from itertools import product

    from tasks.planning.files import join_puzzle
    from tasks.planning.task import Planning
    from tests.test_planning import LAMP, LAMP_P

    task = Planning()
    state = task.root(join_puzzle(LAMP, LAMP_P))
    names = ["l1", "l2", "hall", "master"]
    for _ in range(3):
        accepted = {line for schema in state.problem.schemas
                    for args in product(names, repeat=len(schema.params))
                    if not isinstance(task.check(state, Thought(line := "(" + " ".join((schema.name, *args)) + ")")),
                                      Invalid)}
        text = find(task, ThoughtGrammar).thought_grammar(state)  # type: ignore[union-attr]
        assert text is not None and Grammar(text).language() == accepted
        verdict = task.check(state, Thought(sorted(accepted)[-1]))
        assert not isinstance(verdict, Invalid) and verdict.state is not None
        state = verdict.state
