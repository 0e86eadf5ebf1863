"""The project's own Blocksworld (four operators, as in the IPC) and a generator of random
problems, so tests and examples need no outside data."""

from __future__ import annotations

import random

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

Towers = list[list[str]]  # each tower bottom to top


def random_towers(blocks: list[str], rng: random.Random) -> Towers:
    towers: Towers = []
    for b in rng.sample(blocks, len(blocks)):
        if towers and rng.random() < 0.6:
            rng.choice(towers).append(b)
        else:
            towers.append([b])
    return towers


def facts(towers: Towers) -> list[str]:
    out = []
    for t in towers:
        out.append(f"(on-table {t[0]})")
        out += [f"(on {up} {down})" for down, up in zip(t, t[1:], strict=False)]
        out.append(f"(clear {t[-1]})")
    return out


def problem(n: int, seed: int, name: str | None = None) -> str:
    """A random problem with ``n`` blocks: random initial towers, a random goal of ``on`` facts."""
    rng = random.Random(seed)
    blocks = [f"b{i}" for i in range(1, n + 1)]
    init = facts(random_towers(blocks, rng)) + ["(arm-empty)"]
    goal = [f for f in facts(random_towers(blocks, rng)) if f.startswith("(on ")] or ["(clear b1)"]
    return (f"(define (problem {name or f'bw-{n}-{seed}'})\n  (:domain blocks)\n"
            f"  (:objects {' '.join(blocks)})\n  (:init {' '.join(init)})\n"
            f"  (:goal (and {' '.join(goal)})))\n")


def describe(problem_text: str) -> str:
    """The problem in English, in the style of LLM+P's Blocksworld descriptions."""
    from verifiers.pddl_model import parse_problem

    p = parse_problem(DOMAIN, problem_text)
    lines = [f"You have {len(p.objects)} blocks."]
    for a in sorted(p.init):
        if a[0] == "on":
            lines.append(f"{a[1]} is on top of {a[2]}.")
        elif a[0] == "on-table":
            lines.append(f"{a[1]} is on the table.")
        elif a[0] == "clear":
            lines.append(f"{a[1]} is clear.")
        elif a[0] == "arm-empty":
            lines.append("Your arm is empty.")
    lines.append("Your goal is to move the blocks.")
    lines += [f"{a[1]} should be on top of {a[2]}." for pos, a in p.goal if pos and a[0] == "on"]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Write the domain, one example and problems (PDDL and English) into a folder, LLM+P's layout."""
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("folder")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    out = Path(a.folder)
    out.mkdir(parents=True, exist_ok=True)
    (out / "domain.pddl").write_text(DOMAIN)
    (out / "domain.nl").write_text(
        "The robot arm can pick up a clear block from the table, put down the block it holds on the table, "
        "stack the block it holds on a clear block, and unstack a clear block from the block below it. "
        "The arm holds one block at a time.\n")
    for name, seed in [("p_example", a.seed + 10_000), *((f"p{i:02d}", a.seed + i) for i in range(1, a.count + 1))]:
        text = problem(a.blocks, seed, name=name)
        (out / f"{name}.pddl").write_text(text)
        (out / f"{name}.nl").write_text(describe(text))


if __name__ == "__main__":
    main()
