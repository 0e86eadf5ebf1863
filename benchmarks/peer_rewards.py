"""Our Game-of-24 reward beside a peer RL library's scorer (reasoning-gym's ``puzzle24``), judged by
a reference that shares no code with either (tests/references.py: a strict reader and sympy).

    pip install reasoning-gym==0.1.25   # in a separate environment: it is not a dependency
    python benchmarks/peer_rewards.py --items 300

For each generated item: the peer's own answer, that answer wrapped in text outside the notation,
and expressions the peer is known to misjudge; each is scored by both and by the reference. Prints
the counts and every disagreement's kind. Only candidate strings written here reach the peer's
scorer (which evaluates its input with sympy's ``parse_expr``); no model text is involved.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import references as ref  # noqa: E402
from verifiers.rewards import game24  # noqa: E402

WRAPS = ["{a}", "({a})^2", "({a})**2", "({a})\u00b2", "({a})!", "sqrt(({a})*({a}))", "({a}) mod 5", "({a}) % 5",
         "not {a}", "2 *\n{a}", "{a} = 24.0", "{a} == 24"]
FIXED = ["1*2*3*4", "2**3*3*1", "8^2*8*1"]
STATES_24 = (" = 24.0", " == 24")  # a true statement of the result: the reference reads the expression before it


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    try:
        import reasoning_gym as rg
    except ImportError:
        print("reasoning-gym is not installed: pip install reasoning-gym==0.1.25 (a separate environment)")
        return 2
    ds = rg.create_dataset("puzzle24", size=args.items, seed=args.seed)
    tally: Counter[str] = Counter()
    kinds: Counter[tuple[str, str]] = Counter()
    for entry in ds:
        nums = tuple(entry["metadata"]["numbers"])
        for k, text in enumerate([w.format(a=entry["answer"]) for w in WRAPS] + FIXED):
            kind = WRAPS[k] if k < len(WRAPS) else text
            peer = ds.score_answer(text, entry) == 1.0
            ours = game24(completions=[text], puzzle=[list(nums)]) == [1.0]
            expr = next((text[:-len(s)] for s in STATES_24 if text.endswith(s)), text)
            tree = ref.read_tree(expr)  # it also reads a trailing "!" as punctuation: a factorial is never right
            right = tree is not None and ref.answer_ok(nums, tree) and "\n" not in text and "!" not in text
            tally["candidates"] += 1
            tally[f"peer pays {'right' if right else 'WRONG'}"] += peer
            tally[f"ours pays {'right' if right else 'WRONG'}"] += ours
            if peer != ours:
                kinds[(kind, f"peer {float(peer)} ours {float(ours)} reference {'right' if right else 'wrong'}")] += 1
    from importlib.metadata import version

    print(f"reasoning-gym {version('reasoning-gym')}, puzzle24, {args.items} items, seed {args.seed}")
    for key in ("candidates", "peer pays right", "peer pays WRONG", "ours pays right", "ours pays WRONG"):
        print(f"  {key}: {tally[key]}")
    print("disagreements (candidate kind: scores):")
    for (kind, what), n in sorted(kinds.items()):
        print(f"  {kind!r}: {what} x{n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
