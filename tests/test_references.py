"""Every exact checker against an independent reference (tests/references.py, which imports
nothing of the project): sympy over expression trees built here for Game of 24, python-constraint
for Sudoku and crossword fills, a separately written ending check for Creative Writing.

Cases are built so that the checker's verdict matters: wrong results, reused or missing numbers,
targets off by one, Latin squares whose boxes repeat, rows that are permutations but whose columns
repeat, crossing letters that disagree, endings rewritten by one word or one letter.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest
import sympy
from hypothesis import assume, given
from hypothesis import strategies as st

from lexicon import build_lexicon
from solver.expansion import rule_failure
from solver.task import Thought
from solver.task_capabilities import HasOracle, find
from tasks.crosswords import Crosswords
from tasks.crosswords.data import load_puzzles
from tasks.datafiles import shared_data
from tasks.game24 import Game24
from tasks.game24.data import all_multisets
from tasks.sudoku.generator import generate
from tasks.sudoku.task import Sudoku
from tasks.writing import Writing
from tests import references as ref
from verifiers.arithmetic import can_reach, check_step, verify_answer
from verifiers.crossword import LAYOUT_5X5, Grid, check_word, fillability
from verifiers.sudoku import check_step as sudoku_check_step
from verifiers.sudoku import completable, rule_break, solutions, verify_solution
from verifiers.verdict import Invalid, Solved, Valid
from verifiers.writing import check_passage

# ---- Game of 24 ------------------------------------------------------------------------------------

PUZZLES = [(4, 9, 10, 13), (3, 3, 8, 8), (1, 5, 5, 5), (1, 1, 4, 6), (2, 2, 6, 6), (1, 1, 1, 1)]
SPELLINGS = [{}, {"*": "\u00d7", "/": "\u00f7", "-": "\u2212"}, {"*": "x"}, {"-": "\u2013"}]


@st.composite
def trees(draw: st.DrawFn, leaves: list[int]) -> ref.Tree:
    """A random full binary tree over ``leaves`` in the given order."""
    parts: list[ref.Tree] = list(leaves)
    while len(parts) > 1:
        i = draw(st.integers(0, len(parts) - 2))
        op = draw(st.sampled_from("+-*/"))
        parts[i:i + 2] = [(op, parts[i], parts[i + 1])]
    return parts[0]


@st.composite
def answer_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], ref.Tree, str]:
    puzzle = draw(st.sampled_from(PUZZLES))
    leaves = list(draw(st.permutations(puzzle)))
    edit = draw(st.sampled_from(["none"] * 4 + ["drop", "reuse", "extra", "swap"]))
    if edit == "drop":
        leaves.pop(draw(st.integers(0, 3)))
    elif edit == "reuse":  # a number used twice, another not at all
        k = draw(st.integers(1, 3))
        leaves[k] = leaves[0]
    elif edit == "extra":
        leaves.append(draw(st.integers(1, 13)))
    elif edit == "swap":
        leaves[draw(st.integers(0, 3))] = draw(st.integers(1, 13))
    tree = draw(trees(leaves))
    if draw(st.integers(0, 2)) == 0:  # a hand-written tree, sometimes with one operator changed
        puzzle, tree = draw(st.sampled_from(KNOWN))
        if draw(st.booleans()):
            tree = (draw(st.sampled_from("+-*/")), tree[1], tree[2])  # type: ignore[index]
    text = ref.render(tree, draw(st.sampled_from(SPELLINGS)), draw(st.sampled_from([" ", ""])))
    text = draw(st.sampled_from(["{}", "Answer: {}", "{} = 24", "{}=24"])).format(text)
    return puzzle, tree, text


# Hand-written trees: right answers, and near misses that a weakened checker would let through.
KNOWN = [
    ((4, 9, 10, 13), ("*", ("-", 10, 4), ("-", 13, 9))),
    ((3, 3, 8, 8), ("/", 8, ("-", 3, ("/", 8, 3)))),
    ((1, 5, 5, 5), ("*", ("-", 5, ("/", 1, 5)), 5)),
    ((2, 2, 6, 6), ("+", ("*", 6, 2), ("*", 6, 2))),
    ((2, 2, 6, 6), ("*", ("+", 6, 6), 2)),  # 24, but one 2 and one 6 unused: a number missing
    ((2, 2, 6, 6), ("*", ("+", 6, 6), ("/", 2, ("-", 6, 6)))),  # divides by zero
    ((1, 1, 4, 6), ("*", ("*", ("*", 6, 4), 1), 1)),
    ((1, 1, 4, 6), ("*", ("*", 6, 4), ("+", 1, 1))),  # 48
    ((4, 9, 10, 13), ("*", ("-", 10, 4), ("-", 13, 10))),  # 10 used twice, 9 never
    ((4, 9, 10, 13), ("+", ("*", 4, 9), ("-", 10, 13))),  # 33
    ((4, 9, 10, 13), ("-", ("*", ("-", 10, 4), ("-", 13, 9)), 1)),  # 23 with an extra 1
    ((3, 3, 8, 8), ("*", ("/", 8, ("-", 3, ("/", 8, 3))), 1)),  # an extra number
    ((1, 1, 1, 1), ("*", ("+", 1, 1), ("+", 1, 1))),  # 4
    ((4, 9, 10, 13), ("-", ("*", ("-", 13, 10), 9), 4)),  # 23: the right numbers, one off
    ((1, 1, 4, 6), ("+", ("*", 4, 6), ("*", 1, 1))),  # 25
    ((1, 1, 4, 6), ("-", ("*", 4, 6), ("*", 1, 1))),  # 23
]


@pytest.mark.parametrize("puzzle, tree", KNOWN)
def test_game24_known_answers_agree_with_sympy(puzzle: tuple[int, ...], tree: ref.Tree) -> None:
    want = ref.answer_ok(puzzle, tree)
    for spell in SPELLINGS:
        text = ref.render(tree, spell)
        assert (verify_answer(puzzle, text) == 24) == want, text
        assert isinstance(verify_answer(puzzle, text), Invalid) != want, text
    assert [ref.answer_ok(p, t) for p, t in KNOWN].count(True) == 5  # the labels above, by sympy


@given(answer_cases())
def test_game24_answers_agree_with_sympy(case: tuple[tuple[int, ...], ref.Tree, str]) -> None:
    puzzle, tree, text = case
    got = verify_answer(puzzle, text)
    want = ref.answer_ok(puzzle, tree)
    assert isinstance(got, Invalid) != want, (text, got)
    if want:
        assert got == 24
    task = Game24()
    assert (rule_failure(task, " ".join(map(str, puzzle)), text) is None) == want


@given(st.sampled_from(PUZZLES), st.data())
def test_game24_target_is_exact(puzzle: tuple[int, ...], data: st.DataObject) -> None:
    # A tree over the right numbers whose value is 23, 25 or 24 plus a fraction is refused; the
    # stated result after '=' must be the target.
    if data.draw(st.booleans()):
        puzzle, tree = data.draw(st.sampled_from(KNOWN))
    else:
        tree = data.draw(trees(list(data.draw(st.permutations(puzzle)))))
    value = ref.tree_value(tree)
    assume(value is not None and sorted(ref.tree_leaves(tree)) == sorted(puzzle))
    for target in (23, 24, 25):
        got = verify_answer(puzzle, ref.render(tree), target)
        assert isinstance(got, Invalid) == (value != target), (tree, target, got)
    if value == 24:
        assert isinstance(verify_answer(puzzle, ref.render(tree) + " = 25"), Invalid)
        assert isinstance(verify_answer(puzzle, ref.render(tree) + " = 23"), Invalid)


NUMBER_SETS = [(4, 9, 10, 13), (3, 8, (8, 3)), (4, 6), (1, 1, 1, 1), (0, 5, 5), (2, (1, 2), (7, 4))]


def _fmt(q: sympy.Rational) -> str:
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"


@st.composite
def step_cases(draw: st.DrawFn) -> tuple[tuple[sympy.Rational, ...], str, bool, tuple[sympy.Rational, ...] | None]:
    """A state, a step text built from parts, whether every stated fact is true (by construction,
    with sympy) and the true numbers left."""
    nums = [ref.sym(v) for v in draw(st.sampled_from(NUMBER_SETS))]
    i, j = draw(st.permutations(range(len(nums))).map(lambda p: p[:2]))
    op = draw(st.sampled_from("+-*/"))
    a, b = nums[i], nums[j]
    ok = True
    # operands: the real ones, or one that is not available / the same number twice
    kind = draw(st.sampled_from(["real"] * 6 + ["reuse", "absent"]))
    if kind == "reuse":
        b = a
        ok = ok and sum(n == a for n in nums) >= 2
    elif kind == "absent":
        b = b + 1
        ok = ok and any(n == b for k, n in enumerate(nums) if k != i)
    if op == "/" and b == 0:
        result = None
        ok = False
    else:
        result = ref.SYM_OPS[op](a, b)
    stated = result if result is not None else sympy.Integer(0)
    wrong = draw(st.sampled_from([0] * 5 + [1, -1]))
    if wrong:
        stated = stated + wrong
        ok = False
    # The left list a writer would state for this claim: the numbers without the two operands
    # (each taken once where it is there at all) and with the stated result.
    rest = list(nums)
    for x in (a, b):
        if x in rest:
            rest.remove(x)
    left = tuple(sorted(rest + [stated]))
    stated_left = list(left)
    if draw(st.sampled_from([0] * 5 + [1, 2])):
        ok = False
        if stated_left and draw(st.booleans()):
            stated_left[0] = stated_left[0] + 1
        else:
            stated_left.append(sympy.Integer(1))
    spell = draw(st.sampled_from(SPELLINGS))
    text = f"{_fmt(a)} {spell.get(op, op)} {_fmt(b)} = {_fmt(stated)} (left: {' '.join(map(_fmt, stated_left))})"
    return tuple(nums), text, ok, left


def _frac(q: sympy.Rational) -> Fraction:
    return Fraction(int(q.p), int(q.q))


@given(step_cases())
def test_game24_steps_agree_with_sympy(case) -> None:
    nums, text, ok, left = case
    got = check_step(tuple(_frac(n) for n in nums), text)
    assert isinstance(got, Invalid) != ok, (nums, text, got)
    if ok:
        assert tuple(sorted(got.left)) == tuple(_frac(n) for n in left)
    # The task's gate says the same, and a step that leaves only 24 is the solution.
    task = Game24()
    state = task.root("1 1 1 1")
    state = type(state)(tuple(sorted(_frac(n) for n in nums)), tuple(_fmt(n) for n in sorted(nums)))
    verdict = task.check(state, Thought(text))
    assert isinstance(verdict, Invalid) != ok
    if ok:
        assert isinstance(verdict, Solved) == (left == (sympy.Integer(24),))
        assert verdict.state.numbers == tuple(_frac(n) for n in left)


def test_game24_oracle_agrees_with_sympy_on_every_puzzle() -> None:
    multisets = all_multisets()
    assert len(multisets) == 1820
    want = [ref.sym_reaches(m) for m in multisets]
    assert sum(want) == 1362  # the known count of solvable Game-of-24 puzzles with numbers 1-13
    assert [can_reach(m) for m in multisets] == want


@given(st.lists(st.integers(-6, 13), min_size=1, max_size=4), st.sampled_from([24, 0, 1, -3, 7]))
def test_game24_oracle_agrees_with_sympy_on_small_sets(nums: list[int], target: int) -> None:
    assert can_reach(nums, target) == (ref.sym(target) in ref.sym_values(tuple(sorted(ref.sym(n) for n in nums))))


def test_reference_reader_reads_what_it_should() -> None:
    assert ref.read_tree("Answer: (10 - 4) * (13 - 9) = 24") == ("*", ("-", 10, 4), ("-", 13, 9))
    assert ref.tree_value(ref.read_tree("8 / (3 - 8 / 3)")) == 24
    for bad in ("1/0 = 25", "2**3", "(1", "1 2", "\u0663 + 1", "4 . 5", "x4"):
        tree = ref.read_tree(bad)
        assert tree is None or ref.tree_value(tree) is None, bad
    assert ref.read_number("8/3") == sympy.Rational(8, 3) and ref.read_number("-2.5") == sympy.Rational(-5, 2)
    assert ref.read_number("1/0") is None and ref.read_number("\u0663") is None and ref.read_number("1e5") is None


# ---- Sudoku ---------------------------------------------------------------------------------------

SHAPES = [(3, False), (4, False), (4, True), (5, False)]


@st.composite
def partial_boards(draw: st.DrawFn, n: int, boxes: bool) -> tuple[tuple[int, ...], ...]:
    """A partial board with no digit repeated in any unit (so the exact search has to decide):
    cells are filled in a random order, each with a digit its units do not hold yet."""
    units = ref.sudoku_units(n, boxes)
    board = [[0] * n for _ in range(n)]
    cells = draw(st.permutations([(r, c) for r in range(n) for c in range(n)]))
    for r, c in cells[:draw(st.integers(0, n * n))]:
        used = {board[i][j] for u in units if (r, c) in u for i, j in u}
        free = [d for d in range(1, n + 1) if d not in used]
        if free:
            board[r][c] = draw(st.sampled_from(free))
    return tuple(map(tuple, board))


@given(st.sampled_from(SHAPES).flatmap(lambda s: st.tuples(st.just(s[1]), partial_boards(*s))))
def test_sudoku_completability_agrees_with_python_constraint(case) -> None:
    boxes, board = case
    assert rule_break(board, boxes) is None  # every case reaches the search
    want = ref.csp_completable(board, boxes)
    assert completable(board, boxes) == want
    task = Sudoku(boxes=boxes)
    root = task.root("|".join("".join(str(v) if v else "*" for v in row) for row in board))
    assert find(task, HasOracle).oracle(root) == want


def test_sudoku_partial_boards_are_decided_by_the_search() -> None:
    # The generator above is not trivial: among boards without a repeated digit both answers occur.
    rng = random.Random(5)
    outcomes = set()
    for _ in range(200):
        n, boxes = rng.choice(SHAPES)
        board = [[0] * n for _ in range(n)]
        for r, c in rng.sample([(r, c) for r in range(n) for c in range(n)], rng.randint(n, n * n - 1)):
            used = {board[i][j] for u in ref.sudoku_units(n, boxes) if (r, c) in u for i, j in u}
            free = [d for d in range(1, n + 1) if d not in used]
            if free:
                board[r][c] = rng.choice(free)
        outcomes.add(ref.csp_completable(board, boxes))
    assert outcomes == {True, False}


@given(st.sampled_from(SHAPES).flatmap(lambda s: st.tuples(st.just(s[1]), partial_boards(*s))))
def test_sudoku_solutions_agree_with_python_constraint(case) -> None:
    boxes, board = case
    n = len(board)
    assume(sum(v == 0 for row in board for v in row) <= 10 or n == 3)
    want = ref.csp_solutions(board, boxes)
    assume(len(want) <= 50)
    assert sorted(solutions(board, boxes, limit=51)) == want


@st.composite
def complete_boards(draw: st.DrawFn, n: int) -> tuple[tuple[int, ...], ...]:
    """Full boards of three kinds: rows that are permutations (columns and boxes may repeat),
    Latin squares (boxes may repeat) and any digits."""
    kind = draw(st.sampled_from(["rows", "latin", "any"]))
    if kind == "rows":
        return tuple(tuple(draw(st.permutations(range(1, n + 1)))) for _ in range(n))
    if kind == "latin":
        rows = draw(st.permutations(range(n)))
        cols = draw(st.permutations(range(n)))
        syms = draw(st.permutations(range(1, n + 1)))
        return tuple(tuple(syms[(rows[r] + cols[c]) % n] for c in range(n)) for r in range(n))
    return tuple(tuple(draw(st.integers(1, n)) for _ in range(n)) for _ in range(n))


@given(st.sampled_from(SHAPES + [(9, True), (9, False)]).flatmap(
    lambda s: st.tuples(st.just(s[1]), complete_boards(s[0]))))
def test_sudoku_solution_check_agrees_with_python_constraint(case) -> None:
    boxes, board = case
    n = len(board)
    empty = tuple((0,) * n for _ in range(n))
    want = ref.csp_is_solution(empty, board, boxes)
    assert (verify_solution(empty, board, boxes) is None) == want, board
    assert isinstance(sudoku_check_step(empty, empty, board, boxes), Solved) == want
    text = "|".join("".join(map(str, row)) for row in board)
    assert (rule_failure(Sudoku(boxes=boxes), "|".join("*" * n for _ in range(n)), text) is None) == want


@given(st.sampled_from(SHAPES).flatmap(lambda s: st.tuples(st.just(s[1]), partial_boards(*s))))
def test_sudoku_partial_boards_are_no_solutions(case) -> None:
    boxes, board = case
    n = len(board)
    empty = tuple((0,) * n for _ in range(n))
    want = ref.csp_is_solution(empty, board, boxes)  # only when nothing is blank
    assert (verify_solution(empty, board, boxes) is None) == want
    assert isinstance(sudoku_check_step(empty, empty, board, boxes), Solved) == want


@pytest.mark.parametrize("n, boxes", [(4, True), (9, True), (5, False)])
def test_sudoku_generated_solutions_and_their_corruptions(n: int, boxes: bool) -> None:
    for seed in range(3):
        p = generate(n, seed, boxes=boxes)
        assert ref.csp_is_solution(p.givens, p.solution, boxes)
        assert ref.csp_solutions(p.givens, boxes) == [p.solution] if n < 9 else True
        assert verify_solution(p.givens, p.solution, boxes) is None
        rng = random.Random(seed)
        for _ in range(30):  # swap two cells of one row: the row stays a permutation
            r = rng.randrange(n)
            c1, c2 = rng.sample(range(n), 2)
            bad = [list(row) for row in p.solution]
            bad[r][c1], bad[r][c2] = bad[r][c2], bad[r][c1]
            want = ref.csp_is_solution(p.givens, bad, boxes)
            assert (verify_solution(p.givens, tuple(map(tuple, bad)), boxes) is None) == want


@given(st.sampled_from(SHAPES).flatmap(lambda s: st.tuples(st.just(s[1]), partial_boards(*s), st.data())))
def test_sudoku_gate_agrees_with_the_plain_rule(case) -> None:
    boxes, current, data = case
    n = len(current)
    givens = tuple(tuple(v if (r * n + c) % 3 == 0 else 0 for c, v in enumerate(row)) for r, row in enumerate(current))
    proposed = [list(row) for row in current]
    for _ in range(data.draw(st.integers(0, 3))):  # fill blanks (maybe conflicting), or change a digit
        r, c = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))
        proposed[r][c] = data.draw(st.integers(0, n))
    proposed_t = tuple(map(tuple, proposed))
    want = ref.sudoku_step_ok(givens, current, proposed_t, boxes)
    got = sudoku_check_step(givens, current, proposed_t, boxes)
    assert isinstance(got, Invalid) != want, (current, proposed_t, got)
    if want:
        assert isinstance(got, Solved) == all(v for row in proposed_t for v in row)


# ---- Crosswords -----------------------------------------------------------------------------------

P1 = load_puzzles(shared_data("crosswords/mini0505.json"))[0]
DISTRACTORS = ["ADAMS", "DOTOR", "MOTET", "AGENT", "SLEEP", "DRYAD", "GORSE", "ETTIN", "NOSEY", "ARTSE"]
WORDS = P1.words() + DISTRACTORS


@pytest.fixture(scope="module")
def small_lex():
    return build_lexicon(sources=(), user_words=WORDS)


@st.composite
def crossword_grids(draw: st.DrawFn) -> str:
    """A grid with some slots filled from the word list (a placement that conflicts is skipped
    by the reference) and sometimes a stray letter."""
    board = ["_"] * 25
    for _ in range(draw(st.integers(0, 5))):
        slot = draw(st.sampled_from(sorted(ref.SLOTS_5X5)))
        word = draw(st.sampled_from(WORDS))
        if ref.crossword_place_ok("".join(board), slot, word):
            for c, ch in zip(ref.SLOTS_5X5[slot], word, strict=True):
                board[c] = ch
    if draw(st.booleans()):
        board[draw(st.integers(0, 24))] = draw(st.sampled_from("AEOSTZ"))
    return "".join(board)


@given(crossword_grids(), st.sampled_from(sorted(ref.SLOTS_5X5) + ["h6", "v0"]),
       st.one_of(st.sampled_from(WORDS), st.text("AEGMORST", min_size=4, max_size=6)))
def test_crossword_gate_agrees_with_the_plain_rule(board: str, slot: str, word: str) -> None:
    got = check_word(Grid(LAYOUT_5X5, board), slot, word)
    want = ref.crossword_place_ok(board, slot, word)
    assert isinstance(got, Invalid) != want, (board, slot, word, got)
    if want:
        cells = ref.SLOTS_5X5[slot]
        assert "".join(got.cells[c] for c in cells) == word.upper()
        assert all(got.cells[k] == board[k] for k in range(25) if k not in cells)


@given(crossword_grids())
def test_crossword_full_fillability_agrees_with_python_constraint(small_lex, board: str) -> None:
    fills = ref.crossword_fills(board, WORDS)
    got = fillability(Grid(LAYOUT_5X5, board), small_lex, "full", node_limit=100_000)
    assert got.ok is bool(fills)
    if fills:
        assert got.fill in fills


def _oracle_dfs(lex, stop_when_full: bool):
    import asyncio

    from solver.budget import Budget, Usage
    from solver.evaluators import Oracle
    from solver.generators import EnumerateRank
    from solver.searches import run_search

    task = Crosswords(lex, candidates=20, stop_when_full=stop_when_full)
    return asyncio.run(run_search("tot-dfs", task, P1.text(), EnumerateRank(rank=False), Oracle(), None,
                           usage=Usage(budget=Budget(steps=15))))


def test_crossword_oracle_search_reaches_the_csp_fill(small_lex) -> None:
    fills = ref.crossword_fills("_" * 25, WORDS)
    assert P1.answer in fills and len(fills) == 2  # the key and its transpose
    res = _oracle_dfs(small_lex, stop_when_full=False)
    assert res.best is not None and res.best.state.board == P1.answer


def test_crossword_verified_answer_is_the_key(small_lex) -> None:
    res = _oracle_dfs(small_lex, stop_when_full=True)
    assert res.answer is not None
    assert res.verified == (res.answer == P1.answer)
    # The first complete grid is returned (the key never steers the search), but only the key's
    # grid is called verified; its words are a fill of the word list.
    assert not res.verified or res.answer in ref.crossword_fills("_" * 25, WORDS)


def test_crossword_answer_check_refuses_a_wrong_grid_when_the_key_is_known() -> None:
    # Both fills of the word list are lawful grids; only one is the puzzle's answer.
    other = next(f for f in ref.crossword_fills("_" * 25, WORDS) if f != P1.answer)
    task = Crosswords()
    # The verdict users see (tot solve/verify/bench) is the answer report, which holds the key;
    # rule_failure (its AnswerRules part) is the key-blind rule check search may use, so it accepts both lawful grids.
    assert task.report_answer(P1.text(), P1.answer).verified
    assert not task.report_answer(P1.text(), other).verified
    assert not task.report_answer(P1.text(), "A" * 25).verified
    assert rule_failure(task, P1.text(), other) is None


def test_crossword_puzzle_text_carries_the_key() -> None:
    assert json.loads(P1.text())["board"] == P1.answer


# ---- Creative writing -----------------------------------------------------------------------------

LINE = ("The kettle began to sing. Nobody had fed the goldfish. Maria laughed until she cried. "
        "The storm passed before dawn.")
SENTENCES = ("The kettle began to sing.", "Nobody had fed the goldfish.", "Maria laughed until she cried.",
             "The storm passed before dawn.")
FRAGMENT = "Instead of a bachelorette party"

# (ending written in the paragraph, sentence) -> same sentence?  Built by hand, not by any checker.
# The gate is strict by default: only runs of blanks inside a paragraph count as one space.
SAME = [lambda s: s, lambda s: s.replace(" ", "  "), lambda s: s.replace(" ", "\n")]
# Rewrites under the strict rules; the last two are the same only with --normalise quotes / nfkc.
REWRITTEN = [lambda s: s[:-1] + "!", lambda s: s.replace(" ", " very ", 1), lambda s: s.lower(),
             lambda s: s.replace("e", "\u2019e", 1), lambda s: s.replace("a", "\uff41", 1),
             lambda s: s[:-1], lambda s: s + " Then.", lambda s: s.replace("e", "E", 1),
             lambda s: s.split(" ", 1)[1], lambda s: s.replace(" ", "", 1)]


@st.composite
def passages(draw: st.DrawFn, sentences: tuple[str, ...]) -> tuple[str, bool]:
    """Four paragraphs (sometimes three or five), each a prefix and an ending that is the sentence
    or a rewrite of it; the label says whether every ending is the sentence."""
    ok = True
    paras = []
    for s in sentences:
        if draw(st.integers(0, 4)) == 0:
            ending = draw(st.sampled_from(REWRITTEN))(s)
            ok = ok and ending == s
        else:
            ending = draw(st.sampled_from(SAME))(s)
        prefix = draw(st.sampled_from(["", "Once. ", "It was late, and ", "\u201cYes,\u201d she said. ",
                                       "Word", "(", "The end: "]))
        if prefix == "Word":  # glued to the word before: not an ending on a word boundary
            ok = False
        paras.append(prefix + ending)
    shape = draw(st.sampled_from(["ok"] * 6 + ["merge", "extra", "drop", "single-newline"]))
    if shape == "merge":
        paras[1:3] = [paras[1] + " " + paras[2]]
        ok = False
    elif shape == "extra":
        paras.append("A fifth paragraph.")
        ok = False
    elif shape == "drop":
        paras.pop()
        ok = False
    sep = "\n" if shape == "single-newline" else draw(st.sampled_from(["\n\n", "\n \n", "\r\n\r\n", "\n\n\n"]))
    if sep == "\n":
        ok = False
    return sep.join(paras), ok


@given(passages(SENTENCES))
def test_writing_endings_agree_with_construction_and_the_plain_check(case: tuple[str, bool]) -> None:
    passage, ok = case
    assert ref.passage_ok(SENTENCES, passage) == ok, passage
    assert (check_passage(SENTENCES, passage) is None) == ok, passage
    assert (rule_failure(Writing(), LINE, passage) is None) == ok


@given(passages((FRAGMENT + ".", "Nobody came.", "It rained.", "We left.")))
def test_writing_fragment_endings(case: tuple[str, bool]) -> None:
    # A required fragment without end punctuation may end its paragraph with or without it.
    passage, ok = case
    sentences = (FRAGMENT, "Nobody came.", "It rained.", "We left.")
    assert (check_passage(sentences, passage) is None) == ref.passage_ok(sentences, passage)


@given(passages(SENTENCES))
def test_writing_paragraph_gate_agrees_with_the_plain_check(case: tuple[str, bool]) -> None:
    passage, _ok = case
    task = Writing("paragraphs")
    state = task.root(LINE)
    for i, para in enumerate(ref.split_paragraphs(passage)[:4]):
        verdict = task.check(state, Thought(para))
        assert isinstance(verdict, Invalid) != ref.ends_with_sentence(para, SENTENCES[i]), para
        if isinstance(verdict, Invalid):
            return
        assert isinstance(verdict, (Valid, Solved))
        state = verdict.state
