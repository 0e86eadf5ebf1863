"""``tot bench``: run baselines and searches side by side over a puzzle set, resumably.

    tot bench TASK [puzzle options] --methods io,cot,cot-sc,tot-bfs --out DIR [--shard I/N] [--no-gate]
    tot bench TASK ... --methods tot-complete:enumerate:likelihood,tot-complete:enumerate:prior,... --out DIR
    tot bench merge DIR... --out DIR     join shards or runs (one row per puzzle and method)
    tot bench report DIR...              print the table and redraw the plots of finished runs

Each finished (puzzle, method) pair is appended to DIR/results*.jsonl as one JSON line and
flushed at once, so a killed run (even kill -9) loses at most the pair in flight; rerunning the
same command skips finished pairs and retries only errored ones (a model or server failure).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import IO, Any, Mapping, Protocol, runtime_checkable

from solver.baseline_capabilities import BaselineTokens, ChainSteps
from solver.baselines import (
    BASELINES,
    BaselineConfig,
    baseline_names,
    require_baseline,
    run_baseline,
)
from solver.evaluators import EVALUATORS
from solver.generators import GENERATORS
from solver.inputs import MAX_PUZZLE_FILE, ascii_int, read_text
from solver.lm.base import Backend, GenParams, LMError, ServerUnavailable
from solver.lm.cache import Cache, CacheMiss
from solver.lm.client import LMClient
from solver.lm.session import OUT_OF_TIME
from solver.run import (
    DEFAULT_EVALUATOR,
    Settings,
    check_settings,
    make_backend,
    make_parts,
    needs_model,
    solve,
    usage_for,
)
from solver.searches import SEARCHES, get_search, search_names
from solver.task import Thought
from solver.task_capabilities import (
    HasOracle,
    MissingCapability,
    Unchecked,
    find,
    has,
    missing_message,
)
from solver.tools.cli import (
    UsageError,
    _add_search_args,
    check_search_options,
    output_file,
    own_options_from,
    settings_from,
)
from solver.tools.executor import (
    Executor,
    InProcess,
    Unit,
    add_executor_args,
    executor_from,
    worker_cache,
    worker_info,
    worker_options,
)
from solver.tools.plugins import TaskPlugin
from solver.tools.report import RESULTS_GLOB, final_rows, load_rows, read_lines, write_report
from solver.tools.soft_score import SoftScorer, add_score_args, soft_table
from solver.trace import Trace, write_events
from verifiers.verdict import Invalid

NO_GATE = ":no-gate"
AT_GENERATOR = "@"  # tot-bfs@sample: this search with another generator, beside the default one
SUBCOMMANDS = ("merge", "report")
# Options that may differ between runs written into one directory (or merged) without making
# their results incomparable: which pairs to run, where, how fast, and how to show it.
_FREE_OPTIONS = {"command", "bench_task", "methods", "out", "shard", "no_gate", "trace", "json", "puzzle",
                 "ranks", "data", "generated", "cache", "cache_mode", "concurrency", "timeout", "retries",
                 "base_url", "price", "no_plots", "method", "score_base_url", "domains", "llmp_dir",
                 "jobs", "ray", "unit_retries"}


@runtime_checkable
class BenchColumns(Protocol):
    """A task plugin's own fields of one search pair's row (tasks/crosswords/bench.py)."""

    def bench_row(self, task: Any, puzzle: str, result: Any, events: list[dict[str, Any]]) -> dict[str, Any]: ...


@runtime_checkable
class BenchTable(Protocol):
    """A task plugin's own table of its rows, printed under the common one by ``tot bench``,
    ``merge`` and ``report`` (crosswords: letters / words / game; planning: per domain)."""

    def bench_table(self, rows: list[dict[str, Any]]) -> str: ...


def add_parser(subparsers: Any, plugins: dict[str, TaskPlugin]) -> None:
    p = subparsers.add_parser("bench", help="compare baselines and searches over a puzzle set",
                              description=__doc__.split("\n\n")[1] if __doc__ else None,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    tasks = p.add_subparsers(dest="bench_task", required=True, parser_class=type(p))
    for name, plugin in plugins.items():
        if name in SUBCOMMANDS:
            continue
        sp = tasks.add_parser(name, help=plugin.help, conflict_handler="resolve")
        own_args = getattr(plugin, "add_bench_args", None)  # a task with its own bench (planning)
        (own_args or plugin.add_solve_args)(sp)
        _add_search_args(sp)
        g = sp.add_argument_group("bench")
        g.add_argument("--methods", "--method", dest="methods", default="io,cot,cot-sc,tot-bfs",
                       help=f"comma-separated: {', '.join(BASELINES + search_names())} (and the task's own "
                            "baselines); a search may name its "
                            "generator and evaluator, SEARCH:GENERATOR:EVALUATOR (e.g. "
                            "tot-complete:enumerate:prior, tot-bfs:propose:value; default: --generator and "
                            f"--evaluator), or SEARCH{AT_GENERATOR}GENERATOR; add {NO_GATE} to a search to run "
                            "it with the gate off")
        g.add_argument("--out", required=True, help="results directory (created; reruns resume it)")
        g.add_argument("--shard", default=None, help="I/N: run only every N-th puzzle, starting at the I-th (1-based)")
        g.add_argument("--no-gate", action="store_true",
                       help="run the searches with the gate off (the paper's unchecked behaviour)")
        g.add_argument("--samples", type=int, default=5, help="k for cot-sc, io-best, cot-best (the paper: 100)")
        g.add_argument("--refine-rounds", type=int, default=10, help="attempts of refine (the paper: up to 10)")
        g.add_argument("--adapters", default=None, metavar="auto,off[,PATH]",
                       help="run each search once per adapter setting of the embedded model, side by side "
                            "(labels METHOD[adapter=SETTING]); default: --adapter alone")
        g.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
        g.add_argument("--trace", default=None, help="append every run's trace (JSON lines) to this file")
        g.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
        add_score_args(g)
        add_executor_args(sp)
        sp.set_defaults(**getattr(plugin, "solve_defaults", {}))  # as tot solve: writing's sample + vote
        sp.set_defaults(task_adapters=getattr(plugin, "adapters", ()))  # what --adapter auto picks from
        sp.set_defaults(method="tot-bfs")  # settings_from reads it; --methods picks per run
        sp.set_defaults(**getattr(plugin, "bench_defaults", {}))
    mp = tasks.add_parser("merge", help="join results directories (shards) into one")
    mp.add_argument("dirs", nargs="+", help="results directories")
    mp.add_argument("--out", required=True, help="the merged directory")
    mp.add_argument("--no-plots", action="store_true")
    mp.add_argument("--json", action="store_true")
    rp = tasks.add_parser("report", help="print the table and redraw the plots of results directories")
    rp.add_argument("dirs", nargs="+", help="results directories (plots go into the first)")
    rp.add_argument("--no-plots", action="store_true")
    rp.add_argument("--json", action="store_true")


def parse_shard(text: str | None) -> tuple[int, int]:
    if text is None:
        return 1, 1
    try:
        i, n = (ascii_int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"bad --shard {text!r}: use I/N, e.g. 2/8") from None
    if n < 1 or not 1 <= i <= n:
        raise UsageError(f"bad --shard {text!r}: need 1 <= I <= N")
    return i, n


ADAPTER_TAG = "[adapter="  # METHOD[adapter=off]: the method run with that --adapter (tot bench --adapters)


def split_adapter(label: str) -> tuple[str, str | None]:
    """``METHOD[adapter=SETTING]`` -> (METHOD, SETTING); a plain label -> (label, None)."""
    if label.endswith("]") and ADAPTER_TAG in label:
        base, _, rest = label.rpartition(ADAPTER_TAG)
        return base, rest[:-1]
    return label, None


def _check_adapters(settings: Settings, methods: list[str], task: str) -> None:
    """Each adapter the methods name (``--adapter``, ``--adapters``) read and checked as a run would
    (file, manifest, task): AdapterError, a one-line exit 2, before anything is written."""
    from solver.lm.adapters import resolve_adapter

    model = settings.model
    default_model = model.backend == "local" and not model.model
    for label in dict.fromkeys(split_adapter(m)[1] for m in methods):
        setting = label if label is not None else model.adapter
        if setting not in ("auto", "off"):
            resolve_adapter(setting, task, default_model=default_model, shipped=model.shipped_adapters)


def with_adapters(methods: list[str], adapters: str | None) -> list[str]:
    """Each method once per ``--adapters`` setting (auto, off or a path), labelled
    ``METHOD[adapter=SETTING]``; the methods as they are without ``--adapters``."""
    if not adapters:
        return methods
    settings = [a.strip() for a in adapters.split(",") if a.strip()]
    if not settings or len(set(settings)) != len(settings) or any("]" in a or "," in a for a in settings):
        raise UsageError(f"bad --adapters {adapters!r}: give distinct settings, e.g. auto,off or off,PATH")
    return [f"{m}{ADAPTER_TAG}{a}]" for m in methods for a in settings]


def split_search(label: str) -> tuple[str, str | None, str | None, bool]:
    """``SEARCH[:GENERATOR[:EVALUATOR]][:no-gate]`` or ``SEARCH[:no-gate]@GENERATOR`` ->
    (search, generator, evaluator, gate); an ``[adapter=...]`` suffix is left out."""
    core, at, at_gen = split_adapter(label)[0].partition(AT_GENERATOR)
    gate = not core.endswith(NO_GATE)
    parts = core.removesuffix(NO_GATE).split(":")
    gen = at_gen if at else (parts[1] if len(parts) > 1 else None)
    return parts[0], gen, (parts[2] if len(parts) > 2 else None), gate


def parse_methods(text: str, no_gate: bool, task: Any, evaluators: tuple[str, ...] = (),
                  generators: tuple[str, ...] | None = None) -> list[str]:
    """Method labels; searches get the ``:no-gate`` suffix when the gate is off, and may name
    their generator and evaluator (``SEARCH:GENERATOR:EVALUATOR``) or only their generator
    (``SEARCH@GENERATOR``). Searches, generators and evaluators are the registered ones
    (``generators``: the names allowed instead, a task's own included)."""
    searches = search_names()
    generators = tuple(GENERATORS) if generators is None else generators
    out: list[str] = []
    for raw in (m.strip() for m in text.split(",")):
        if not raw:
            continue
        core, at, at_gen = raw.partition(AT_GENERATOR)
        base, gen, ev, _gate = split_search(raw)
        parts = core.removesuffix(NO_GATE).split(":")
        if at and (base not in searches or not at_gen or len(parts) > 1):
            raise UsageError(f"bad method {raw!r}: only a search takes {AT_GENERATOR}GENERATOR, "
                             "and not together with :GENERATOR")
        if base in searches:
            if len(parts) > 3:
                raise UsageError(f"bad method {raw!r}: use SEARCH[:GENERATOR[:EVALUATOR]][{NO_GATE}]")
            if gen is not None and gen not in generators:
                raise UsageError(f"unknown generator {gen!r} in {raw!r}; choose one of {', '.join(generators)}")
            known = (*EVALUATORS, "lm", *evaluators)
            if ev is not None and ev not in known:
                raise UsageError(f"unknown evaluator {ev!r} in {raw!r}; choose one of {', '.join(known)}")
            label = core if (core.endswith(NO_GATE) or not no_gate) else core + NO_GATE
            if label.endswith(NO_GATE) and not has(task, Unchecked):
                raise MissingCapability(missing_message(task, Unchecked, f"method `{label}` (no gate)"))
            label += at + at_gen
        elif raw in baseline_names(task) or raw in BASELINES:
            require_baseline(task, raw, True)  # a missing capability in one line; baselines load a model
            label = raw
        else:
            raise UsageError(f"unknown method {raw!r}; choose from {', '.join(baseline_names(task) + searches)}"
                             f" (searches may name :GENERATOR:EVALUATOR and end in {NO_GATE})")
        if label not in out:
            out.append(label)
    if not out:
        raise UsageError("--methods is empty")
    return out


def search_settings(settings: Settings, label: str, values: Mapping[str, object] | None = None) -> Settings:
    """The settings of one search label: its own generator and evaluator where it names them,
    its own adapter (``[adapter=...]``) and its own options, made from ``values`` by name (the
    command line's, ``own_options_from``; None: those of the settings' options)."""
    base, gen, ev, gate = split_search(label)
    adapter = split_adapter(label)[1]
    if adapter is not None:
        settings = dataclasses.replace(settings, model=dataclasses.replace(settings.model, adapter=adapter))
    o = settings.search
    if values is None:
        values = dataclasses.asdict(o.options) if o.options is not None else {}
    return dataclasses.replace(settings, search=dataclasses.replace(
        o, method=base, gate=gate, generator=gen or o.generator, options=get_search(base).options_from(values),
        evaluator=(DEFAULT_EVALUATOR if ev == "lm" else ev) or o.evaluator))


def config_of(args: argparse.Namespace) -> dict[str, Any]:
    """The options that decide what a result means (see _FREE_OPTIONS for the rest)."""
    return {k: v for k, v in sorted(vars(args).items())
            if k not in _FREE_OPTIONS and isinstance(v, (str, int, float, bool, type(None)))}


MAX_JOBS = 512  # --jobs: worker processes on one machine


def out_dir(text: str) -> Path:
    """``--out`` as a directory (UsageError in one line where it is empty: never the current one)."""
    if not text:
        raise UsageError("--out is empty: give a results directory")
    return Path(text)


def check_jobs(args: argparse.Namespace) -> None:
    """UsageError in one line for ``--jobs`` out of 1..MAX_JOBS, before anything runs or is said."""
    jobs = getattr(args, "jobs", 1)
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"--jobs must be between 1 and {MAX_JOBS}, not {jobs}")


def check_config(out: Path, config: dict[str, Any]) -> None:
    """Refuse to mix results of different configurations in one directory (and an ``--out`` that
    is a file, or under one: UsageError in one line)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a results directory")
    path = out / "config.json"
    if path.is_file():
        try:
            old = json.loads(read_text(path, "bench configuration", MAX_PUZZLE_FILE))
        except (json.JSONDecodeError, RecursionError):
            raise UsageError(f"{path} is not JSON; use another --out") from None
        if not isinstance(old, dict):
            raise UsageError(f"{path} is not a bench configuration; use another --out")
        for k in sorted(set(old) | set(config)):
            if old.get(k) != config.get(k):
                raise UsageError(f"{out} holds results of another configuration ({k}: {old.get(k)!r} there, "
                                 f"{config.get(k)!r} now); use another --out")
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # under a file, or not allowed
        raise UsageError(f"cannot make the results directory --out {out}: {exc.strerror or exc}") from None
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(config, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def open_results(path: Path) -> IO[str]:
    """Append handle; a half-written last line (kill -9 mid-write) is ended first, so the next
    row starts on its own line and the broken one is skipped when read."""
    fh = path.open("a+", encoding="utf-8")
    if fh.tell() > 0:
        fh.seek(fh.tell() - 1)
        if fh.read(1) != "\n":
            fh.write("\n")
            fh.flush()
    return fh


def tree_lost_at(task: Any, puzzle: str, events: list[dict[str, Any]]) -> int | None:
    """For a failed search: 1 + the deepest depth at which it kept a state the exact oracle
    calls solvable (0 when the puzzle itself is not). States are rebuilt from the trace by
    replaying the deterministic checker, so search needs no hook for this."""
    exact, unchecked = find(task, HasOracle), find(task, Unchecked)
    if exact is None:
        return None
    oracle = exact.oracle
    states: dict[int, Any] = {}
    depths: dict[int, int] = {}  # node -> depth (root 0): the parent's plus one
    kept: list[int] = []
    for ev in events:
        kind = ev.get("event")
        if kind == "root":
            states[ev["node"]] = task.root(puzzle)
            depths[ev["node"]] = 0
            kept.append(ev["node"])
        elif kind == "proposal" and "node" in ev and ev.get("parent") in states:
            parent = states[ev["parent"]]
            verdict = task.check(parent, Thought(ev["thought"]))
            if isinstance(verdict, Invalid) and unchecked is not None:
                verdict = unchecked.apply_unchecked(parent, Thought(ev["thought"]))
            if not isinstance(verdict, Invalid):
                states[ev["node"]] = verdict.state
                depths[ev["node"]] = depths[ev["parent"]] + 1
        elif kind == "keep" and ev.get("node") in states:
            kept.append(ev["node"])
    solvable = [depths[n] for n in kept if oracle(states[n])]
    return 1 + max(solvable) if solvable else 0


class _Runner:
    def __init__(self, args: argparse.Namespace, plugin: TaskPlugin, backend: Backend | None) -> None:
        self.args, self.plugin = args, plugin
        self.task = plugin.make_task(args)
        self.settings: Settings = settings_from(args)
        self.values = own_options_from(args)  # every search's own options, by name: each method takes its own
        for name in ("samples", "refine_rounds"):
            if getattr(args, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
        # writing: whole passages, not 48 tokens
        limits = find(self.task, BaselineTokens)
        tokens = limits.baseline_tokens if limits is not None else {}
        self.cfg = BaselineConfig(samples=args.samples, rounds=args.refine_rounds,
                                  temperature=self.settings.model.temperature, seed=self.settings.model.seed,
                                  chat=self.settings.model.chat, grammar=self.settings.model.grammar)
        self.cfg = dataclasses.replace(self.cfg, io_tokens=tokens.get("io", self.cfg.io_tokens),
                                       cot_tokens=tokens.get("cot", self.cfg.cot_tokens))
        self.scorer = SoftScorer(args, self.task, self.settings)
        self._backend = backend
        self._clients: dict[str | None, LMClient] = {}

    def client(self, label: str | None = None) -> LMClient:
        """One client for the whole bench (one backend, one record/replay store), or one for each
        adapter that ``--adapters`` names (``label``'s). Each pair runs in its own session of it,
        so no memo carries answers from one pair into another (a later method would get earlier
        methods' calls for free and count too few tokens)."""
        adapter = split_adapter(label)[1] if label else None
        s = self.settings.model if adapter is None else dataclasses.replace(self.settings.model, adapter=adapter)
        if adapter not in self._clients:
            backend = self._backend or make_backend(s)
            cache = Cache(s.cache) if s.cache else None
            self._clients[adapter] = LMClient(backend, cache, s.cache_mode if cache is not None else "off",
                                              s.concurrency)
        return self._clients[adapter]

    async def warm_up(self, methods: list[str]) -> None:
        """One untimed, uncounted call of each kind the methods will make, so that loading a
        model (the embedded one loads on first use) is not charged to the first pair."""
        baselines = baseline_names(self.task)
        searches = [search_settings(self.settings, m, self.values).search for m in methods if m not in baselines]
        gen = any(m in baselines for m in methods) or any(
            s.generator in ("propose", "sample") or s.evaluator in ("value", "vote") for s in searches)
        score = any(s.generator == "enumerate-rank" or s.evaluator == "likelihood" for s in searches)
        if not (gen or score) or (self.settings.model.cache and self.settings.model.cache_mode == "replay"):
            return  # replay answers from the store and never reaches the model: nothing to load
        for label in dict.fromkeys(split_adapter(m)[1] for m in methods):
            backend = self.client(f"x{ADAPTER_TAG}{label}]" if label is not None else None).backend
            try:
                if gen:
                    await backend.complete("Input: 1 2 3 4\nAnswer:", GenParams(n=1, max_tokens=1, temperature=0.0))
                if score:
                    await backend.score("Input: 1 2 3 4\nAnswer:", [" 1"])
            except LMError:
                pass  # a failing model shows up, and is recorded, in the first pair that needs it

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        await self.scorer.close()

    def needs_embedded(self, method: str) -> bool:
        """Whether ``method`` loads the embedded model (a worker must be allowed to)."""
        if self._backend is not None or self.settings.model.backend != "local":
            return False
        if method in baseline_names(self.task):
            return True
        s = search_settings(self.settings, method, self.values)
        return needs_model(s) or self.scorer.n > 0

    async def pair(self, pid: str, puzzle: str, method: str, trace: Trace | None = None) -> dict[str, Any]:
        """One (puzzle, method) row; its trace events go to ``trace`` (default: ``--trace``'s file)."""
        row: dict[str, Any] = {"task": self.task.name, "id": pid, "puzzle": puzzle, "method": method}
        trace = trace if trace is not None else Trace(self.args.trace)
        try:
            if method in baseline_names(self.task):
                client = self.client()  # first: loading a model is not the first pair's time
                usage = usage_for(self.settings, client)
                res = await run_baseline(self.task, puzzle, method, client, self.cfg, trace, usage)
                row.update(res.summary())
                if method == "cot" and not res.verified and res.texts:
                    row["lost_at"] = chain_lost_at(self.task, puzzle, res.texts[0])
            else:
                s = search_settings(self.settings, method, self.values)
                tot_client = self.client(method) if needs_model(s) else None
                sres = await solve(self.task, puzzle, s, tot_client, trace)
                row.update(sres.summary())
                row["unchecked"] = sum(1 for e in trace.events
                                       if e["event"] == "verdict" and e.get("verdict") == "unchecked")
                row["final_rejected"] = sum(1 for e in trace.events  # refused answers, not returned ones
                                            if e["event"] == "answer" and e.get("verified") is False
                                            and not e.get("accepted"))
                if not sres.verified:
                    row["lost_at"] = tree_lost_at(self.task, puzzle, trace.events)
                if isinstance(self.plugin, BenchColumns):
                    row.update(self.plugin.bench_row(self.task, puzzle, sres, trace.events))
            row["max_depth"] = self.task.max_depth
            await self.scorer.score(row, puzzle, trace.events, self.client)
            # A call cut off by the pair's seconds budget is the budget's stop (stopped_by "seconds"),
            # not a model failure: a rerun would stop there again, so the pair is done.
            cut = sum(1 for e in trace.events if e["event"] == "lm_error" and e.get("error") == OUT_OF_TIME)
            failed = int(row.get("failed_calls") or 0) - cut
            row["status"] = "error" if failed > 0 else "done"
            if row["status"] == "error":
                row["error"] = row.get("error") or f"{failed} model call(s) failed"
        except ServerUnavailable:
            raise  # the server is gone or too slow for every pair: end the run (exit 3), rows so far are kept
        except (LMError, CacheMiss, OSError) as exc:
            row.update(status="error", verified=False, answer=None, error=f"{type(exc).__name__}: {exc}"[:300])
        finally:
            trace.close()
        return row


async def run_bench(args: argparse.Namespace, plugins: dict[str, TaskPlugin],
                    backend: Backend | None = None) -> int:
    """``tot bench TASK``; ``backend`` replaces the model (tests use a scripted one)."""
    plugin = plugins[args.bench_task]
    runner = _Runner(args, plugin, backend)
    task = runner.task
    methods = parse_methods(args.methods, args.no_gate, task, tuple(getattr(args, "task_evaluators", ())),
                            (*GENERATORS, *getattr(args, "task_generators", ())))
    baselines = [m for m in methods if m in BASELINES or m in baseline_names(task)]
    methods = baselines + with_adapters([m for m in methods if m not in baselines], getattr(args, "adapters", None))
    searched = [m for m in methods if m not in baselines]
    check_search_options([split_search(m)[0] for m in searched], getattr(args, "given_options", ()))
    puzzles = plugin.puzzles(args)
    for _pid, puzzle in puzzles:
        task.root(puzzle)  # bad input fails here, before a model is loaded
    for m in searched:  # and a capability the task lacks
        check_settings(task, search_settings(runner.settings, m, runner.values))
    for m in searched:  # what a search has to say before it runs (beam without log-likelihoods), once
        s = search_settings(runner.settings, m, runner.values)
        notice = SEARCHES[s.search.method].notice
        line = notice(make_parts(task, s)[0]) if notice is not None else None
        if line:
            print(f"tot: {m}: {line}", file=sys.stderr, flush=True)
    if backend is None:  # a bad adapter file is one line here, before the folder is made or a worker starts
        _check_adapters(runner.settings, methods, task.name)
    i, n = parse_shard(args.shard)
    puzzles = puzzles[i - 1::n]
    out = out_dir(args.out)
    check_jobs(args)
    output_file(args.trace, "--trace")
    check_config(out, config_of(args))
    results = out / ("results.jsonl" if n == 1 else f"results-{i}-of-{n}.jsonl")
    previous = final_rows(r for f in sorted(out.glob(RESULTS_GLOB)) for r in read_lines(f))
    finished = {(str(r["id"]), r["method"]): r for r in previous if r.get("status") == "done"}
    todo = [(str(pid), pz, m) for pid, pz in puzzles for m in methods if (str(pid), m) not in finished]
    wanted = {(str(pid), m) for pid, pz in puzzles for m in methods}
    done_here = [r for k, r in finished.items() if k in wanted]

    from solver.tools.progress import RunProgress

    solved_before = sum(1 for r in done_here if r.get("verified"))
    progress = RunProgress(len(wanted), f"{task.name} bench", done=len(done_here), solved=solved_before,
                           quiet=args.json)
    executor = executor_from(args) if todo else InProcess()
    if backend is not None and not isinstance(executor, InProcess):
        executor.close()
        raise UsageError("a backend given from Python runs in this process only: leave out --jobs and --ray")
    fh = open_results(results)
    try:
        if isinstance(executor, InProcess):
            if todo:
                await runner.warm_up(sorted({m for _, _, m in todo}))
            with progress:
                for pid, puzzle, method in todo:
                    progress.working_on(f"{pid} {method}")
                    row = await runner.pair(pid, puzzle, method)
                    _write_row(fh, row)
                    progress.finished(row, error=row["status"] != "done")
        else:
            # here, not in a thread: the executor takes Ctrl-C from asyncio's handler while it waits, hands
            # back what finished and raises KeyboardInterrupt at once (workers ignore SIGINT)
            _run_units(executor, runner, todo, fh, progress, args)
    finally:
        fh.close()
        executor.close()
        await runner.close()
    # Every method in DIR on these puzzles, so a later --no-gate run sits beside the gated one.
    ids = {str(pid) for pid, _ in puzzles}
    rows = [r for r in load_rows([out]) if str(r["id"]) in ids]
    _print_report(out, rows, args, plugins)
    if progress.errors:
        print(f"{progress.errors} pair(s) errored (a model, server or worker failure); rerun the same command "
              "to retry only those", file=sys.stderr)
    return 0


def _write_row(fh: IO[str], row: dict[str, Any]) -> None:
    fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    fh.flush()


def _run_units(executor: Executor, runner: _Runner, todo: list[tuple[str, str, str]], fh: IO[str],
               progress: Any, args: argparse.Namespace) -> None:
    """The pairs as units of ``executor``; each row written as its unit finishes (and its trace
    events appended to ``--trace``), a unit that failed (its worker died more often than retried)
    as an error row with the reason, so a rerun tries it again."""
    spec = worker_options(vars(args), leave_out=("trace",))
    units = [Unit(f"{pid}|{method}", (spec, pid, puzzle, method), model=runner.needs_embedded(method))
             for pid, puzzle, method in todo]
    outcomes = executor.run(bench_unit, units)  # refuses here what the executor cannot run
    print(f"tot: {len(units)} pair(s) on {executor.name}", file=sys.stderr, flush=True)
    said: set[str] = set()
    with progress:
        for outcome in outcomes:
            _spec, pid, puzzle, method = outcome.unit.args
            if outcome.error is not None or outcome.value is None:
                row = {"task": runner.task.name, "id": pid, "puzzle": puzzle, "method": method, "status": "error",
                       "verified": False, "answer": None, "error": (outcome.error or "no result")[:300],
                       "attempts": outcome.attempts}
                events: list[dict[str, Any]] = []
            else:
                row, events, info = outcome.value
                if "server_unavailable" in row:
                    raise ServerUnavailable(row["server_unavailable"])
                if info.get("model") and info["worker"] not in said:
                    said.add(info["worker"])
                    print(f"tot: worker {info['worker']} loaded the embedded model (its peak memory "
                          f"{info['peak_mb']} MB)", file=sys.stderr, flush=True)
            _write_row(fh, row)
            if args.trace and events:
                write_events(args.trace, events)
            progress.finished(row, error=row["status"] != "done")


def bench_unit(spec: dict[str, Any], pid: str, puzzle: str, method: str) -> tuple[dict[str, Any], list[Any],
                                                                                   dict[str, Any]]:
    """In a worker: one pair, with the runner (task, model clients) this worker keeps for the batch;
    (row, its trace events, which worker and its memory)."""
    key = json.dumps(spec, sort_keys=True, default=str)

    def make() -> tuple[asyncio.AbstractEventLoop, _Runner]:
        from solver.tools.plugins import load_plugins

        args = argparse.Namespace(**{**spec, "trace": None})
        plugins = load_plugins()
        loop = asyncio.new_event_loop()
        runner = _Runner(args, plugins[args.bench_task], None)
        methods = parse_methods(args.methods, args.no_gate, runner.task,
                                tuple(getattr(args, "task_evaluators", ())),
                                (*GENERATORS, *getattr(args, "task_generators", ())))
        loop.run_until_complete(runner.warm_up(with_adapters(methods, getattr(args, "adapters", None))))
        return loop, runner

    loop, runner = worker_cache(("bench", key), make)
    trace = Trace(None)
    try:
        row = loop.run_until_complete(runner.pair(pid, puzzle, method, trace))
    except ServerUnavailable as exc:
        row = {"server_unavailable": str(exc).splitlines()[0] if str(exc) else "the server is unavailable"}
    info = {**worker_info(), "model": runner.needs_embedded(method)}
    return row, trace.events, info


def _print_report(out: Path, rows: list[dict[str, Any]], args: argparse.Namespace,
                  plugins: dict[str, TaskPlugin] | None = None) -> None:
    table, paths = write_report(out, rows, plots=not args.no_plots)
    extra = [soft_table(rows)]
    for name in sorted({str(r.get("task")) for r in rows}):  # each task's own columns, if it has any
        plugin = (plugins or {}).get(name)
        if isinstance(plugin, BenchTable):
            extra.append(plugin.bench_table([r for r in rows if r.get("task") == name]))
    for part in filter(None, extra):
        table += "\n\n" + part
        with (out / "summary.txt").open("a", encoding="utf-8") as fh:
            fh.write("\n" + part + "\n")
    if args.json:
        print((out / "summary.json").read_text(encoding="utf-8"), end="")
    else:
        print(table)
        print("wrote " + ", ".join(str(p) for p in paths))


def merge(args: argparse.Namespace, plugins: dict[str, TaskPlugin] | None = None) -> int:
    dirs = [Path(d) for d in args.dirs]
    configs = []
    for d in dirs:
        if not (d / "config.json").is_file():
            raise UsageError(f"{d} is not a bench results directory (no config.json)")
        configs.append(json.loads((d / "config.json").read_text(encoding="utf-8")))
    out = out_dir(args.out)
    if any(d.resolve() == out.resolve() for d in dirs):
        raise UsageError("--out must be a new directory, not one of the inputs")
    check_config(out, configs[0])
    for d, c in zip(dirs, configs, strict=True):
        if c != configs[0]:
            diff = next(k for k in sorted(set(c) | set(configs[0])) if c.get(k) != configs[0].get(k))
            raise UsageError(f"{d} was run with another configuration ({diff}: {c.get(diff)!r} vs "
                             f"{configs[0].get(diff)!r}); it cannot be merged with {dirs[0]}")
    rows = load_rows(dirs + [out])
    tmp = out / "results.jsonl.tmp"
    with tmp.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    for old in out.glob(RESULTS_GLOB):
        old.unlink()
    tmp.replace(out / "results.jsonl")
    _print_report(out, rows, args, plugins)
    return 0


def report(args: argparse.Namespace, plugins: dict[str, TaskPlugin] | None = None) -> int:
    dirs = [Path(d) for d in args.dirs]
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"no such results directory: {d}")
    rows = load_rows(dirs)
    if not rows:
        raise UsageError(f"no results in {', '.join(map(str, dirs))}")
    if not any(r.get("status") == "done" for r in rows):
        raise UsageError(f"no finished results in {', '.join(map(str, dirs))}: all {len(rows)} pair(s) errored "
                         "(rerun the bench command to retry them)")
    _print_report(dirs[0], rows, args, plugins)
    return 0


async def run(args: argparse.Namespace, plugins: dict[str, TaskPlugin]) -> int:
    if args.bench_task == "merge":
        return merge(args, plugins)
    if args.bench_task == "report":
        return report(args, plugins)
    own_bench = getattr(plugins[args.bench_task], "run_bench", None)  # planning: domains x methods of its own
    if own_bench is not None:  # it gets what it needs of the command line: no task imports the tools
        if getattr(args, "jobs", 1) != 1 or getattr(args, "ray", None) is not None:
            raise UsageError(f"{args.bench_task}'s bench runs in this process only: leave out --jobs and --ray "
                             "(benchmarks/planner_compare.py runs planner comparisons on them)")
        searches = own_searches(args, plugins[args.bench_task])
        return int(await own_bench(args, settings_from(args), lambda out: check_config(out, config_of(args)),
                                   searches))
    return await run_bench(args, plugins)


def own_searches(args: argparse.Namespace, plugin: TaskPlugin) -> dict[str, Settings]:
    """For a task with a bench of its own (planning): the ``--methods`` labels that are not its own
    methods (``bench_methods``) parsed as searches, ``SEARCH[:GENERATOR[:EVALUATOR]]``, each with
    its settings, checked as ``tot bench`` checks them, before anything runs."""
    own = tuple(getattr(plugin, "bench_methods", ()))
    labels = [m.strip() for m in args.methods.split(",") if m.strip() and m.strip() not in own]
    if not labels:
        return {}
    for raw in labels:
        if split_search(raw)[0] not in search_names():
            raise UsageError(f"unknown method {raw!r}; choose from {args.bench_task}'s own ({', '.join(own)}) "
                             f"or a search ({', '.join(search_names())}), SEARCH[:GENERATOR[:EVALUATOR]]")
    task = plugin.make_task(args)
    searched = parse_methods(",".join(labels), args.no_gate, task, tuple(getattr(args, "task_evaluators", ())),
                             (*GENERATORS, *getattr(args, "task_generators", ())))
    check_search_options([split_search(m)[0] for m in searched], getattr(args, "given_options", ()))
    settings = settings_from(args)
    out = {m: search_settings(settings, m, own_options_from(args)) for m in searched}
    for s in out.values():
        check_settings(task, s)
    return out


def chain_lost_at(task: Any, puzzle: str, text: str) -> int | None:
    """For a failed chain of thought: the 1-based step after which no solvable state was left
    (a step the checker rejects counts as losing it there); ``len(steps) + 1`` when every step
    kept a solvable state but the answer still failed; None when the task cannot tell."""
    steps_part, exact = find(task, ChainSteps), find(task, HasOracle)
    if steps_part is None or exact is None:
        return None
    chain, oracle = steps_part.chain_thoughts, exact.oracle
    state = task.root(puzzle)
    if not oracle(state):
        return 0
    steps: list[Thought] = chain(puzzle, text)
    for i, th in enumerate(steps, 1):
        verdict = task.check(state, th)
        if isinstance(verdict, Invalid) or not oracle(verdict.state):
            return i
        state = verdict.state
    return len(steps) + 1
