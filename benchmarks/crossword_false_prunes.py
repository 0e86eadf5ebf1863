"""How often each crossword evaluator prunes a state that is still solvable: for each of the paper's
20 test puzzles, states holding k of the true words (slots drawn at random, seeded), each judged
once by every evaluator named; a prune of such a state is a false prune.

    python benchmarks/crossword_false_prunes.py --evaluators fillable --limit 5          # no model
    python benchmarks/crossword_false_prunes.py --evaluators fillable,clues --limit 3    # clues: the model

(The crossword searches themselves, with letters / words / game and false prunes along the
search, are ``tot bench crosswords``.)
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import defaultdict

from lexicon import default_lexicon
from solver.run import ModelSettings, SearchSettings, Settings, make_client
from solver.task_capabilities import OwnEvaluators, find
from tasks.crosswords import Crosswords
from tasks.crosswords.data import TEST_INDICES, default_data, load_puzzles


async def audit(args: argparse.Namespace) -> None:
    """False-prune rate on states known to be solvable: for each puzzle, states holding k of the
    true words (slots drawn at random, seeded), judged by each evaluator named in --evaluators."""
    import random

    from solver.node import NodeFactory
    from solver.task import Thought

    puzzles = load_puzzles(args.data or default_data())
    indices = [i for i in TEST_INDICES if i <= len(puzzles)][: args.limit or None]
    rng = random.Random(args.seed)
    lex = default_lexicon()
    task = Crosswords(lex, fill_level=args.fill_level)
    states = []
    for i in indices:
        p = puzzles[i - 1]
        names = [s.name for s in task.root(p.text()).grid.layout.slots]
        for k in args.audit_words:
            state = task.root(p.text())
            for name in rng.sample(names, k):
                word = p.words()[names.index(name)]
                verdict = task.check(state, Thought(f"{name}. {word}"))
                state = getattr(verdict, "state", state)
            if not state.grid.is_full():
                states.append((i, k, state))
    backend = None
    for ev_name in args.evaluators.split(","):
        ev_name = ev_name.split(":")[-1]
        s = Settings(search=SearchSettings(method="tot-dfs", generator="propose", evaluator=ev_name,
                                           model_free=("fillable", "oracle")),
                     model=ModelSettings(seed=args.seed, cache=args.cache, model=args.model, base_url=args.base_url,
                                         backend="openai" if args.model or args.base_url else "local"))
        s.search.generator = "enumerate"
        client = make_client(s, backend)
        if client is not None:
            backend = client.backend
        ev = find(task, OwnEvaluators).make_evaluator(ev_name, s)
        if ev is None:
            from solver.evaluators import make_evaluator

            ev = make_evaluator(ev_name, n=s.search.n_evaluate, seed=s.model.seed)
        nodes = NodeFactory()
        model = client.session() if client is not None else None
        t0 = time.perf_counter()
        pruned: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        for _i, k, state in states:
            (score, _detail), = await ev(task, [nodes.make(state, None)], model)
            pruned[k][0] += score < ev.prune_below
            pruned[k][1] += 1
        calls = model.usage.calls if model is not None else 0
        total = [sum(v[0] for v in pruned.values()), sum(v[1] for v in pruned.values())]
        per_k = ", ".join(f"{k} words {v[0]}/{v[1]}" for k, v in sorted(pruned.items()))
        print(f"{ev_name:10} false prunes {total[0]}/{total[1]} = {total[0] / max(1, total[1]):.1%} "
              f"({per_k}); {calls} calls, {time.perf_counter() - t0:.1f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--evaluators", default="fillable", help="comma-separated: fillable, clues, oracle")
    p.add_argument("--limit", type=int, default=None, help="only the first N of the 20 test puzzles")
    p.add_argument("--fill-level", default="arc", choices=["slots", "arc", "full"])
    p.add_argument("--data", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", default=None)
    p.add_argument("--base-url", default=None)
    p.add_argument("--cache", default=None, help="record/replay store (sqlite) for model outputs")
    p.add_argument("--audit-words", type=lambda t: [int(x) for x in t.split(",")], default=[1, 3, 5],
                   help="true words placed in the audited states (default 1,3,5)")
    asyncio.run(audit(p.parse_args()))


if __name__ == "__main__":
    main()
