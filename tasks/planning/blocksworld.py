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
