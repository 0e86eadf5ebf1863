"""A small mutation run: break one exact check on purpose, run the tests that should notice, and
report which mutations the suite caught.

Each mutation replaces one snippet of one verifier in a scratch copy of the working tree (the
checkout itself is never modified), then runs the test files named for that verifier with
``pytest -x`` on the copy. A mutation is caught when the tests fail. ``--tests-rev REV`` runs the
tests of another revision (e.g. the suite before the independent references) against the same
mutants.

    python benchmarks/checker_mutations.py                      # every mutation, one line each
    python benchmarks/checker_mutations.py --only step-wrong-result,sudoku-no-boxes
    python benchmarks/checker_mutations.py --tests-rev f8ad226  # the older tests against the same mutants
    python benchmarks/checker_mutations.py --tests tests/test_references.py   # one file against every mutant
    python benchmarks/checker_mutations.py --list

The current tests read the papers' data from the package (tasks/data/tot). Tests of an older revision
(--tests-rev) may look for ../shared/data/tot beside the checkout: point TOT_DATA_DIR at the data and
it is linked there in the scratch copy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str
    path: str
    old: str
    new: str


GAME24_TESTS = ("tests/test_arithmetic.py", "tests/test_references.py", "tests/test_fuzz.py",
                "tests/test_oracle_fast.py", "tests/test_replay.py")
SUDOKU_TESTS = ("tests/test_sudoku.py", "tests/test_references.py", "tests/test_fuzz.py", "tests/test_controller.py")
CROSSWORD_TESTS = ("tests/test_crossword.py", "tests/test_crossword_task.py", "tests/test_references.py",
                   "tests/test_fuzz.py", "tests/test_crossword_replay.py")
WRITING_TESTS = ("tests/test_writing_verifier.py", "tests/test_writing_task.py", "tests/test_references.py",
                 "tests/test_fuzz.py", "tests/test_writing_replay.py")
TESTS = {"verifiers/arithmetic.py": GAME24_TESTS, "verifiers/sudoku.py": SUDOKU_TESTS,
         "verifiers/crossword.py": CROSSWORD_TESTS, "verifiers/writing.py": WRITING_TESTS}

A, S, C, W = "verifiers/arithmetic.py", "verifiers/sudoku.py", "verifiers/crossword.py", "verifiers/writing.py"
MUTATIONS = (
    Mutation("step-wrong-result", "step gate accepts a wrong result", A,
             "    if c != true_c:\n", "    if c != true_c and False:\n"),
    Mutation("step-reuse-number", "step gate lets one number be both operands", A,
             "        if j != i and v == b:\n", "        if v == b:\n"),
    Mutation("step-ignore-left", "step gate ignores a wrong left list", A,
             "    elif Counter(left) != Counter(true_left):\n", "    elif False:\n"),
    Mutation("answer-reuse-number", "answer check compares the set of numbers, not the multiset", A,
             "    if Counter(ev.leaves) != want:\n", "    if set(ev.leaves) != set(want):\n"),
    Mutation("answer-off-by-one", "answer check accepts a value one off the target", A,
             "    if value != target:\n", "    if abs(value - target) > 1:\n"),
    Mutation("answer-stated-result", "answer check ignores a wrong '= N' after the expression", A,
             '        if rhs.strip() not in (str(target), ""):\n', "        if False:\n"),
    Mutation("oracle-no-subtraction-last", "fast oracle forgets x - y = t in the last step", A,
             "        out.add(_norm(a * td - tn * b, b * td))  # x - y = t\n", ""),
    Mutation("sudoku-no-boxes", "Sudoku rules skip the box check", S,
             "    if boxes:\n        bh, bw = box_shape(n)\n", "    if False:\n        bh, bw = box_shape(n)\n"),
    Mutation("sudoku-no-columns", "Sudoku rules skip columns", S,
             "    for c in range(n):\n        yield f\"column", "    for c in range(0):\n        yield f\"column"),
    Mutation("sudoku-overwrite", "Sudoku gate lets a step overwrite an earlier digit", S,
             "            if cur and new != cur:\n", "            if False:\n"),
    Mutation("sudoku-incomplete", "Sudoku solution check accepts blanks", S,
             "    if missing:\n", "    if False:\n"),
    Mutation("sudoku-oracle-latin", "completability oracle ignores boxes", S,
             "    return count_solutions(board, boxes, 1) == 1\n",
             "    return count_solutions(board, False, 1) == 1\n"),
    Mutation("crossword-ignore-crossings", "crossword gate ignores letters already in the grid", C,
             "        if have not in (EMPTY, ch):\n", "        if False:\n"),
    Mutation("crossword-arc-off", "arc consistency never removes a word without crossing support", C,
             "            if not keep.all():\n", "            if False:\n"),
    Mutation("crossword-fill-no-arc", "full fill search skips arc consistency after a placement (pruning "
             "only: the same answers, so expected to survive)", C,
             "        if _arc_consistent(nxt, lexicon, sub):\n            continue\n", ""),
    Mutation("writing-case-blind", "ending check ignores letter case", W,
             "    want, got = normalise(sentence), normalise(paragraph)\n",
             "    want, got = normalise(sentence).lower(), normalise(paragraph).lower()\n"),
    Mutation("writing-sentence-inside", "ending check accepts the sentence anywhere in the paragraph", W,
             "    if body.endswith(want):\n", "    if want in body:\n"),
    Mutation("writing-no-word-boundary", "ending check accepts the sentence glued to a longer word", W,
             "        if not before or before[-1] == \" \" or before[-1] in _OPENERS:\n", "        if True:\n"),
    Mutation("writing-extra-paragraphs", "passage check ignores paragraphs after the fourth", W,
             "    paras = paragraphs(passage)\n    if len(paras)",
             "    paras = paragraphs(passage)[:len(sentences)]\n    if len(paras)"),
)


def copy_tree(dest: Path, tests_rev: str | None) -> None:
    """The working tree (tracked and untracked, not ignored files) into ``dest``; with
    ``tests_rev``, tests/ from that revision instead."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    if tests_rev:
        shutil.rmtree(dest / "tests")
        archive = subprocess.run(["git", "archive", tests_rev, "tests"], cwd=ROOT, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def run_tests(repo: Path, tests: tuple[str, ...], timeout: float) -> tuple[bool, str, float]:
    """(caught, first failing test or note, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"}
    present = [t for t in tests if (repo / t).is_file()]
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not model",
                            *present], cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return True, "timed out (counted as caught: a hang is noticed)", time.monotonic() - t0
    seconds = time.monotonic() - t0
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in r.stdout.splitlines()
              if line.startswith(("FAILED", "ERROR"))]
    if r.returncode == 0:
        return False, "survived", seconds
    return True, failed[0] if failed else f"pytest exit {r.returncode}", seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated mutation names")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--tests-rev", help="run the tests of this git revision instead of the working tree's")
    ap.add_argument("--tests", help="comma-separated test files to run for every mutation (default: per verifier)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per mutation (default 600)")
    args = ap.parse_args(argv)
    chosen = MUTATIONS
    if args.only:
        names = set(args.only.split(","))
        unknown = names - {m.name for m in MUTATIONS}
        if unknown:
            ap.error(f"unknown mutation(s): {', '.join(sorted(unknown))}")
        chosen = tuple(m for m in MUTATIONS if m.name in names)
    override = tuple(args.tests.split(",")) if args.tests else None

    def tests_for(m: Mutation) -> tuple[str, ...]:
        return override or TESTS[m.path]
    if args.list:
        for m in chosen:
            print(f"{m.name:28} {m.path:24} {m.what}")
        return 0
    with tempfile.TemporaryDirectory(prefix="tot-mutations-") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        copy_tree(repo, args.tests_rev)
        data = os.environ.get("TOT_DATA_DIR")
        if data:  # older tests (--tests-rev) that look for ../shared/data/tot beside the checkout
            (work / "shared" / "data").mkdir(parents=True)
            (work / "shared" / "data" / "tot").symlink_to(Path(data).resolve())
        baseline, note, secs = run_tests(repo, tuple(sorted({t for m in chosen for t in tests_for(m)})), args.timeout)
        if baseline:
            print(f"the unmutated tests fail ({note}); fix that first", file=sys.stderr)
            return 1
        print(f"unmutated: tests pass ({secs:.0f} s)")
        caught = 0
        for m in chosen:
            target = repo / m.path
            original = target.read_text(encoding="utf-8")
            if original.count(m.old) != 1:
                print(f"{m.name:28} NOT APPLIED (snippet not found once in {m.path})")
                continue
            target.write_text(original.replace(m.old, m.new), encoding="utf-8")
            try:
                hit, note, secs = run_tests(repo, tests_for(m), args.timeout)
            finally:
                target.write_text(original, encoding="utf-8")
            caught += hit
            print(f"{m.name:28} {'caught  ' if hit else 'SURVIVED'} {secs:5.0f} s  {note}")
        print(f"caught {caught} of {len(chosen)} mutations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
