"""``tot export``: every exported label against a reference written here that shares no code with
the project (Game of 24: a search over fractions; Sudoku: python-constraint; planning: a
Blocksworld simulator and a breadth-first search), the held-out puzzles never exported, the
records' keys and types, the manifest's sha256s, bad options and the time a limited run takes."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import re
import time
from collections import Counter, deque
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import constraint
import pytest

from solver.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
COMMON = {"task": str, "split": str, "puzzle_id": str, "puzzle": str, "state": str, "state_key": str, "depth": int,
          "source": str}
KEYS: dict[str, dict[str, Any]] = {
    "value": {"prompt": str, "completion": str, "solvable": bool, "distance": (int, type(None))},
    "step": {"prompt": str, "completion": str, "solvable": bool, "distance": (int, type(None))},
    "preference": {"prompt": str, "chosen": str, "rejected": str, "chosen_distance": (int, type(None)),
                   "rejected_solvable": bool},
    "stepwise": {"prompt": str, "completions": list, "labels": list, "distances": list},
}


def export(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, float]:
    start = time.monotonic()
    assert main(["export", *argv]) == 0
    return capsys.readouterr().out, time.monotonic() - start


def records(out: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(split, format) -> the file's records, read with ``json`` alone."""
    found = {}
    for path in sorted(out.glob("*.jsonl")):
        split, fmt = path.stem.split("-", 1)
        found[split, fmt] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return found


def check_files(out: Path, task: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Keys and types of every record, the manifest's counts and sha256s; the records."""
    recs = records(out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["task"] == task and manifest["held_out"]
    listed = {(s, f): v for s, e in manifest["splits"].items() for f, v in e["files"].items()}
    assert set(listed) == set(recs) and len(recs) == 8
    for (split, fmt), rows in recs.items():
        entry = listed[split, fmt]
        path = out / entry["file"]
        assert entry["records"] == len(rows)
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        want = {**COMMON, **KEYS[fmt]}
        for r in rows:
            assert set(r) == set(want), (fmt, set(r) ^ set(want))
            for key, kind in want.items():
                assert isinstance(r[key], kind) and not (kind is int and isinstance(r[key], bool)), (fmt, key, r[key])
            assert r["task"] == task and r["split"] == split and r["source"]
        for key in ("completions", "labels", "distances") if fmt == "stepwise" else ():
            kinds = {type(x) for r in rows for x in r[key]} - {type(None)}
            assert len(kinds) <= 1, (key, kinds)
        for key in ("distance", "chosen_distance"):
            kinds = {type(r[key]) for r in rows if key in r} - {type(None)}
            assert len(kinds) <= 1, (key, kinds)
    return recs


def check_datasets_loads(out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # datasets is no dependency of the project (nor of its test extra): skipped where it is missing
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for path in sorted(out.glob("*.jsonl")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n == 0:
            continue
        ds = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
        assert len(ds) == n, path.name


# ---- Game of 24 ---------------------------------------------------------------------------------

@cache
def reaches_24(numbers: tuple[Fraction, ...]) -> bool:
    """Can these numbers (each used once, + - * /) make exactly 24?"""
    if len(numbers) == 1:
        return numbers[0] == 24
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i == j:
                continue
            rest = [x for k, x in enumerate(numbers) if k not in (i, j)]
            for c in (a + b, a - b, a * b, a / b if b else None):
                if c is not None and reaches_24(tuple(sorted([*rest, c]))):
                    return True
    return False


def numbers_of(text: str) -> tuple[Fraction, ...]:
    return tuple(sorted(Fraction(x) for x in text.split()))


NUM = r"-?\d+(?:/\d+)?"
STEP = re.compile(rf"^({NUM}) ([-+*/]) ({NUM}) = ({NUM}) \(left: ([^)]*)\)$")


def child_of(parent: tuple[Fraction, ...], step: str) -> tuple[Fraction, ...]:
    """The numbers a step leaves, checked here: its operands are the parent's, its result exact."""
    m = STEP.match(step)
    assert m, step
    a, op, b, c = Fraction(m[1]), m[2], Fraction(m[3]), Fraction(m[4])
    assert c == {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else None}[op], step
    left = Counter(parent)
    left.subtract([a, b])
    assert min(left.values(), default=0) >= 0, (parent, step)
    left[c] += 1
    assert +left == Counter(numbers_of(m[5])), (parent, step)
    return numbers_of(m[5])


def prompt_numbers(prompt: str) -> tuple[Fraction, ...]:
    m = re.match(r"Numbers: ([^\n]*)\n", prompt)
    assert m, prompt
    return numbers_of(m[1])


@pytest.fixture(scope="module")
def game24(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, float]:
    out = tmp_path_factory.mktemp("game24")
    buf = io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(buf):
        assert main(["export", "game24", "--out", str(out), "--limit", "3"]) == 0
    return out, buf.getvalue(), time.monotonic() - start


def test_game24_labels_match_a_search_over_fractions(game24: tuple[Path, str, float]) -> None:
    out, printed, seconds = game24
    assert seconds < 60, seconds  # a --limit run is quick (about 2 s here)
    assert "train: 3 puzzles" in printed and "val: 3 puzzles" in printed
    recs = check_files(out, "game24")
    for split in ("train", "val"):
        values = recs[split, "value"]
        assert values and {r["completion"] for r in values} <= {" sure", " impossible"}
        for r in values:
            assert (r["completion"] == " sure") == reaches_24(prompt_numbers(r["prompt"])) == r["solvable"], r
        assert recs[split, "step"] or split == "train"  # the first train multisets (1 1 1 1, ...) have none
        for r in recs[split, "step"]:
            assert r["completion"].endswith("\n") and r["prompt"].endswith("\n")
            assert reaches_24(child_of(prompt_numbers(r["prompt"]), r["completion"][:-1])), r
        for r in recs[split, "preference"]:
            parent = prompt_numbers(r["prompt"])
            assert reaches_24(child_of(parent, r["chosen"][:-1]))
            assert not reaches_24(child_of(parent, r["rejected"][:-1]))
        for r in recs[split, "stepwise"]:
            state = numbers_of(r["puzzle"])
            for step, label in zip(r["completions"], r["labels"], strict=True):
                state = child_of(state, step)
                assert label == reaches_24(state), r
    # every solvable state with steps left has its good steps exported, and only those
    for split in ("train", "val"):
        steps: dict[str, set[str]] = {}
        for r in recs[split, "step"]:
            steps.setdefault(r["prompt"], set()).add(r["completion"])
        for r in recs[split, "value"]:
            if r["solvable"] and len(prompt_numbers(r["prompt"])) > 1:
                assert r["prompt"].replace("Can they reach 24? Answer:", "Next step:\n") in steps, r


def test_game24_never_exports_the_test_puzzles(game24: tuple[Path, str, float]) -> None:
    with open(ROOT / "tasks" / "data" / "tot" / "24" / "24.csv", newline="", encoding="utf-8") as f:
        test = {" ".join(sorted(row["Puzzles"].split(), key=int)) for row in csv.DictReader(f)
                if 901 <= int(row["Rank"]) <= 1000}
    assert len(test) == 100
    out, _, _ = game24
    for rows in records(out).values():
        for r in rows:
            assert " ".join(sorted(r["puzzle"].split(), key=int)) not in test
    # the whole splits, not only their first puzzles
    from tasks.game24.cli import PLUGIN

    args = type("Args", (), {"data": None})()
    for split in PLUGIN.export_splits:
        texts = {" ".join(sorted(p.split(), key=int)) for _, p in PLUGIN.export_puzzles(split, args)}  # type: ignore[arg-type]
        assert texts and not texts & test


def test_game24_files_load_with_datasets(game24: tuple[Path, str, float], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    check_datasets_loads(game24[0], tmp_path, monkeypatch)


# ---- Sudoku -------------------------------------------------------------------------------------

BOXES = {4: (2, 2), 6: (2, 3), 8: (2, 4), 9: (3, 3)}


def board_of(text: str) -> list[list[int]]:
    rows = text.split("|")
    assert all(len(r) == len(rows) for r in rows), text
    return [[0 if ch == "*" else int(ch) for ch in row] for row in rows]


def completable(text: str, boxes: bool) -> bool:
    """python-constraint: is there a completion keeping every row, column (and box) all different?"""
    board = board_of(text)
    n = len(board)
    p = constraint.Problem()
    for r in range(n):
        for c in range(n):
            p.addVariable((r, c), [board[r][c]] if board[r][c] else list(range(1, n + 1)))
    groups = [[(r, c) for c in range(n)] for r in range(n)] + [[(r, c) for r in range(n)] for c in range(n)]
    if boxes and n in BOXES:
        h, w = BOXES[n]
        groups += [[(r, c) for r in range(r0, r0 + h) for c in range(c0, c0 + w)]
                   for r0 in range(0, n, h) for c0 in range(0, n, w)]
    for g in groups:
        p.addConstraint(constraint.AllDifferentConstraint(), g)
    return p.getSolution() is not None


def fills_one_cell(parent: str, child: str) -> bool:
    a, b = board_of(parent), board_of(child)
    changed = [(x, y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True) if x != y]
    return len(changed) == 1 and changed[0][0] == 0


def board_in(prompt: str) -> str:
    m = re.match(r"Board \((\d)x\1, (boxes|no boxes)\): (\S+)\n", prompt)
    assert m, prompt
    return m[3]


SUDOKU_RUNS = {"4x4": ["--size", "4", "--count", "5", "--val-count", "2"],
               "6x6-latin": ["--size", "6", "--latin", "--blanks", "24", "--count", "4", "--val-count", "2"]}


@pytest.fixture(scope="module", params=sorted(SUDOKU_RUNS))
def sudoku(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("sudoku")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["export", "sudoku", "--out", str(out), *SUDOKU_RUNS[request.param]]) == 0
    return out, SUDOKU_RUNS[request.param]


def test_sudoku_labels_match_python_constraint(sudoku: tuple[Path, list[str]]) -> None:
    out, argv = sudoku
    boxes = "--latin" not in argv
    recs = check_files(out, "sudoku")
    verdicts = []
    for split in ("train", "val"):
        for r in recs[split, "value"]:
            board = board_in(r["prompt"])
            assert r["state"].startswith(board + " ")
            verdicts.append(completable(board, boxes))
            assert (r["completion"] == " sure") == verdicts[-1] == r["solvable"], r
        for r in recs[split, "step"]:
            parent, child = board_in(r["prompt"]), r["completion"]
            assert child.endswith("\n") and fills_one_cell(parent, child[:-1]) and completable(child[:-1], boxes), r
        for r in recs[split, "preference"]:
            parent = board_in(r["prompt"])
            assert fills_one_cell(parent, r["chosen"][:-1]) and completable(r["chosen"][:-1], boxes)
            assert fills_one_cell(parent, r["rejected"][:-1]) and not completable(r["rejected"][:-1], boxes)
        for r in recs[split, "stepwise"]:
            board = r["puzzle"]
            for step, label in zip(r["completions"], r["labels"], strict=True):
                assert fills_one_cell(board, step)
                board = step
                assert label == completable(board, boxes)
    for split in ("train", "val"):  # every completable board with a blank left has its good steps exported
        parents = {board_in(r["prompt"]) for r in recs[split, "step"]}
        for r in recs[split, "value"]:
            board = board_in(r["prompt"])
            assert ("*" in board and r["solvable"]) == (board in parents), r
    if not boxes:  # the 6x6 Latin squares branch: both labels occur
        assert set(verdicts) == {True, False}
        assert recs["train", "preference"]


def test_sudoku_never_exports_a_held_out_seed(sudoku: tuple[Path, list[str]]) -> None:
    from tasks.sudoku.generator import generate  # the held-out set is defined by the generator's seeds 1-100

    out, argv = sudoku
    size = int(argv[argv.index("--size") + 1])
    boxes = "--latin" not in argv
    blanks = int(argv[argv.index("--blanks") + 1]) if "--blanks" in argv else None
    held = {generate(size, s, b, boxes).text for s in range(1, 101) for b in {None, blanks}}
    train_ids: set[str] = set()
    for (split, _), rows in records(out).items():
        for r in rows:
            seed = int(r["puzzle_id"].rsplit("seed", 1)[1])
            assert seed > 100 and (seed > 2000) == (split == "val"), r["puzzle_id"]
            assert r["puzzle"] not in held and r["state"].split(" ")[0] not in held
            if split == "train":
                train_ids.add(r["puzzle"])
            else:
                assert r["puzzle"] not in train_ids


def test_sudoku_files_load_with_datasets(sudoku: tuple[Path, list[str]], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    check_datasets_loads(sudoku[0], tmp_path, monkeypatch)


def test_sudoku_never_reaches_a_held_out_board_with_more_blanks(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """With more blanks than the tables' puzzles, a walk could fill its way to one: such puzzles are skipped."""
    from tasks.sudoku.generator import generate

    printed, seconds = export(capsys, "sudoku", "--out", str(tmp_path), "--size", "3", "--blanks", "5", "--count", "30",
                              "--val-count", "5", "--formats", "value")
    assert seconds < 30 and "train: 30 puzzles" in printed
    held = {generate(3, s, b).text for s in range(1, 101) for b in (None, 5)}
    states = {r["state"].split(" ")[0] for rows in records(tmp_path).values() for r in rows}
    assert states and not states & held


# ---- planning -----------------------------------------------------------------------------------

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

Atoms = frozenset[tuple[str, ...]]
# number -> (blocks, initial atoms, goal atoms); p05 has p01's goal: held out with it
PROBLEMS = {
    1: ("a b c", "(on a b) (on-table b) (on-table c) (clear a) (clear c)", "(on c a)"),
    2: ("a b c", "(on-table a) (on-table b) (on-table c) (clear a) (clear b) (clear c)", "(on a b) (on b c)"),
    3: ("a b c", "(on c b) (on b a) (on-table a) (clear c)", "(on b c) (on a b) (on-table c)"),
    4: ("a b c", "(on-table a) (on b a) (on-table c) (clear b) (clear c)", "(on c b)"),
    5: ("a b c", "(on-table a) (on-table b) (on c b) (clear a) (clear c)", "(on c a)"),
    6: ("a b c", "(on a c) (on-table c) (on-table b) (clear a) (clear b)", "(on b a) (on c b)"),
    7: ("a b c d", "(on a b) (on b c) (on-table c) (on-table d) (clear a) (clear d)", "(on d c) (on c b) (on b a)"),
}


def pddl_problem(i: int) -> str:
    blocks, init, goal = PROBLEMS[i]
    return (f"(define (problem bw{i}) (:domain blocks) (:objects {blocks})\n"
            f"  (:init (arm-empty) {init})\n  (:goal (and {goal})))\n")


def atoms_of(text: str) -> Atoms:
    return frozenset(tuple(a.split()) for a in re.findall(r"\(([^()]*)\)", text))


def successors(state: Atoms, blocks: list[str]) -> dict[str, Atoms]:
    """Every applicable action's text -> the next state (the four Blocksworld operators, by hand)."""
    out = {}
    s = set(state)
    hand_empty = ("arm-empty",) in s
    for x in blocks:
        if hand_empty and ("clear", x) in s and ("on-table", x) in s:
            out[f"(pickup {x})"] = frozenset(s - {("clear", x), ("on-table", x), ("arm-empty",)} | {("holding", x)})
        if ("holding", x) in s:
            out[f"(putdown {x})"] = frozenset(s - {("holding", x)} | {("clear", x), ("arm-empty",), ("on-table", x)})
        for y in blocks:
            if ("holding", x) in s and ("clear", y) in s:
                out[f"(stack {x} {y})"] = frozenset(s - {("clear", y), ("holding", x)}
                                                    | {("arm-empty",), ("clear", x), ("on", x, y)})
            if hand_empty and ("on", x, y) in s and ("clear", x) in s:
                out[f"(unstack {x} {y})"] = frozenset(s - {("on", x, y), ("clear", x), ("arm-empty",)}
                                                      | {("holding", x), ("clear", y)})
    return out


def shortest(state: Atoms, goal: Atoms, blocks: list[str]) -> int:
    """Breadth-first: the fewest actions from ``state`` to a state holding the goal (-1: none)."""
    seen, queue = {state}, deque([(state, 0)])
    while queue:
        s, d = queue.popleft()
        if goal <= s:
            return d
        for nxt in successors(s, blocks).values():
            if nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, d + 1))
    return -1


def replay(i: int, description: str) -> Atoms:
    """The state after the actions a record's ``state`` lists, by the simulator above."""
    blocks, init, _ = PROBLEMS[i]
    state = atoms_of("(arm-empty) " + init)
    _, _, actions = description.partition(": ")
    for act in re.findall(r"\([^()]*\)", "" if actions == "(start)" else actions):
        state = successors(state, blocks.split())[act]
    return state


@pytest.fixture(scope="module")
def planning(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    data = tmp_path_factory.mktemp("llmp")
    (data / "blocksworld").mkdir()
    (data / "blocksworld" / "domain.pddl").write_text(DOMAIN, encoding="utf-8")
    for i in PROBLEMS:
        (data / "blocksworld" / f"p{i:02d}.pddl").write_text(pddl_problem(i), encoding="utf-8")
    out = tmp_path_factory.mktemp("planning")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["export", "planning", "--out", str(out), "--llmp-dir", str(data), "--domains", "blocksworld",
                     "--max-states", "60"]) == 0
    return out, buf.getvalue()


def test_planning_distances_match_a_breadth_first_search(planning: tuple[Path, str]) -> None:
    out, printed = planning
    assert "train: 2 puzzles" in printed and "val: 2 puzzles" in printed
    assert "1 puzzle(s) cut by --max-states" in printed  # p07: four blocks, more than 60 states
    recs = check_files(out, "planning")
    ids = {r["puzzle_id"] for rows in recs.values() for r in rows}
    assert ids == {"blocksworld/p03", "blocksworld/p04", "blocksworld/p06", "blocksworld/p07"}
    for split in ("train", "val"):
        steps: dict[tuple[str, str], set[str]] = {}
        for r in recs[split, "step"]:
            steps.setdefault((r["puzzle_id"], r["state"]), set()).add(r["completion"])
        for r in recs[split, "value"]:
            i = int(r["puzzle_id"][-2:])
            blocks, goal = PROBLEMS[i][0].split(), atoms_of(PROBLEMS[i][2])
            state = replay(i, r["state"])
            facts = re.search(r"\nFacts: ([^\n]*)\n", r["prompt"])
            assert facts and atoms_of(facts[1]) == state, r["prompt"]
            d = shortest(state, goal, blocks)
            assert r["distance"] == d and r["solvable"] == (d >= 0) and r["completion"] == " sure", r
            if d > 0:  # the good steps are exactly the actions that shorten the way by one
                good = {a + "\n" for a, nxt in successors(state, blocks).items()
                        if shortest(nxt, goal, blocks) == d - 1}
                assert steps[r["puzzle_id"], r["state"]] == good, r["state"]
        for r in recs[split, "step"]:
            i = int(r["puzzle_id"][-2:])
            blocks, goal = PROBLEMS[i][0].split(), atoms_of(PROBLEMS[i][2])
            nxt = successors(replay(i, r["state"]), blocks)[r["completion"][:-1]]
            assert r["distance"] == shortest(nxt, goal, blocks) == shortest(replay(i, r["state"]), goal, blocks) - 1
        for r in recs[split, "preference"]:
            i = int(r["puzzle_id"][-2:])
            blocks, goal = PROBLEMS[i][0].split(), atoms_of(PROBLEMS[i][2])
            state = replay(i, r["state"])
            d = shortest(state, goal, blocks)
            assert shortest(successors(state, blocks)[r["chosen"][:-1]], goal, blocks) == d - 1 == r["chosen_distance"]
            assert shortest(successors(state, blocks)[r["rejected"][:-1]], goal, blocks) != d - 1
        for r in recs[split, "stepwise"]:
            i = int(r["puzzle_id"][-2:])
            blocks, goal = PROBLEMS[i][0].split(), atoms_of(PROBLEMS[i][2])
            state = replay(i, "after 0 actions: (start)")
            for act, label, dist in zip(r["completions"], r["labels"], r["distances"], strict=True):
                state = successors(state, blocks)[act]
                assert dist == shortest(state, goal, blocks) and label == (dist >= 0)


def test_planning_never_exports_the_test_problems_or_their_twins(planning: tuple[Path, str]) -> None:
    out, _ = planning
    for rows in records(out).values():
        for r in rows:
            assert r["puzzle_id"] not in {"blocksworld/p01", "blocksworld/p02", "blocksworld/p05"}
            assert "(problem bw1)" not in r["puzzle"] and "(problem bw5)" not in r["puzzle"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "p01-p02" in manifest["held_out"]


def test_planning_files_load_with_datasets(planning: tuple[Path, str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    check_datasets_loads(planning[0], tmp_path, monkeypatch)


# ---- the command line ---------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["game24", "--formats", "nope"],
    ["game24", "--splits", "test"],
    ["game24", "--max-states", "0"],
    ["sudoku", "--size", "12"],
    ["sudoku", "--size", "3", "--blanks", "9"],
    ["sudoku", "--count", "0"],
    ["planning", "--llmp-dir", "/nonexistent/llmp"],
    ["planning", "--range", "1-20"],
    ["planning", "--range", "3-20", "--val-range", "3-4"],
])
def test_bad_options_are_one_line_exit_2(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", argv[0], "--out", str(tmp_path / "x"), *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tot: error:") and err.count("\n") == 1, err
    assert not list((tmp_path / "x").glob("*.jsonl")) if (tmp_path / "x").exists() else True


def test_a_limited_sudoku_run_is_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    printed, seconds = export(capsys, "sudoku", "--out", str(tmp_path), "--limit", "3")
    assert seconds < 20, seconds  # about half a second here
    assert printed.startswith("train: 3 puzzles, 24 states: 24 value, 24 step, 0 preference, 3 stepwise")


def test_a_step_completion_parses_back_into_the_same_thought(sudoku: tuple[Path, list[str]],
                                                            planning: tuple[Path, str]) -> None:
    """What a model trained on the step files writes is read by the task's own proposal parser."""
    from solver.task import Thought
    from solver.task_capabilities import ProposePrompts, find
    from tasks.planning.task import Planning
    from tasks.sudoku.task import Sudoku

    for out, task in ((sudoku[0], Sudoku(boxes="--latin" not in sudoku[1])), (planning[0], Planning())):
        parse = find(task, ProposePrompts).parse_proposals  # type: ignore[union-attr]
        rows = records(out)["train", "step"][:20]
        assert rows
        for r in rows:
            state = task.root(r["puzzle"])  # the parsers read the text alone; the root gives the size
            assert parse(state, r["completion"] + "more text\n")[:1] == [Thought(r["completion"][:-1])]
