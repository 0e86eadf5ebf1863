"""Oracle calls per second on LLM+P Blocksworld: the work of ``tot-bfs-oracle`` (every applicable
action's successor scored by the planner oracle, the best one kept, until the goal) and of the
false-prune audit (the oracle's yes/no on every successor not kept), per problem and in all.

    python benchmarks/oracle_speed.py [--planner NAME] [--range 1-5] [--seconds 5] [--mode satisficing]

Runs against whichever checkout is first on PYTHONPATH, so the same script measures before
(an older checkout, whose Planning has no ``planner`` argument) and after.
"""

from __future__ import annotations

import argparse
import inspect
import time

from solver.task import Thought
from solver.task_capabilities import find
from tasks.planning.files import domain_file, join_puzzle, llmp_dir, read_text
from tasks.planning.parts import ApplicableActions, PlannerJudge
from tasks.planning.task import Planning
from verifiers.planning import goal_holds
from verifiers.verdict import Invalid, Solved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--planner", default=None)
    ap.add_argument("--range", default="1-5")
    ap.add_argument("--seconds", type=float, default=5.0, help="oracle time limit per call")
    ap.add_argument("--mode", choices=["optimal", "satisficing"], default="satisficing")
    ap.add_argument("--max-steps", type=int, default=40)
    ap.add_argument("--llmp-dir", default=None)
    a = ap.parse_args()
    folder = llmp_dir(a.llmp_dir) / "blocksworld"
    dom = read_text(domain_file(folder), "domain")
    kw = {"planner": a.planner} if "planner" in inspect.signature(Planning.__init__).parameters else {}
    lo, hi = (int(x) for x in a.range.split("-"))
    total_calls, total_s, unknown = 0, 0.0, 0
    for i in range(lo, hi + 1):
        task = Planning(max_depth=a.max_steps, oracle_seconds=a.seconds, oracle_mode=a.mode, **kw)
        judge = find(task, PlannerJudge)
        moves = find(task, ApplicableActions)
        assert judge is not None and moves is not None
        state = task.root(join_puzzle(dom, read_text(folder / f"p{i:02d}.pddl", "problem")))
        calls, start, solved = 0, time.monotonic(), goal_holds(state.problem, state.atoms)
        for _ in range(0 if solved else a.max_steps):
            children = []
            for th in moves.legal_thoughts(state):
                v = task.check(state, Thought(th.text))
                assert not isinstance(v, Invalid)
                children.append(v)
            scored = []
            for v in children:
                d = judge.distance(v.state)  # the evaluator's question
                calls += 1
                unknown += d is None
                scored.append((10**9 if d is None or d < 0 else d, v))
            best = min(scored, key=lambda x: x[0])[1]
            for _d, v in scored:  # the audit's question about every successor the search cut
                if v is not best:
                    unknown += judge.oracle_verdict(v.state) is None
                    calls += 1
            state = best.state
            if isinstance(best, Solved):
                solved = True
                break
        secs = time.monotonic() - start
        total_calls, total_s = total_calls + calls, total_s + secs
        print(f"p{i:02d}: {calls} oracle calls in {secs:.2f} s ({calls / max(secs, 1e-9):.1f}/s), "
              f"plan {len(state.plan)} steps, {'solved' if solved else 'not solved'}", flush=True)
    print(f"blocksworld p{lo:02d}-p{hi:02d} {a.mode} limit {a.seconds:g} s planner {a.planner or 'default'}: "
          f"{total_calls} oracle calls in {total_s:.2f} s = {total_calls / max(total_s, 1e-9):.1f} calls/s; "
          f"{unknown} unknown")


if __name__ == "__main__":
    main()
