"""The ``tot`` command: ``tot solve TASK ...``, ``tot verify TASK ...`` and the subcommands below.

Bad input exits with status 2 and one line on stderr; a model or server failure exits with 3.
Set TOT_DEBUG=1 to see a traceback instead.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from solver.budget import Budget
from solver.evaluators import EVALUATORS
from solver.generators import GENERATORS
from solver.lm.adapters import adapter_of
from solver.lm.base import LMError
from solver.lm.cache import CacheMiss
from solver.run import RunStopped, check_settings, make_client, make_parts, scoring_notice, solve
from solver.search_options import check_value
from solver.searches import SEARCHES, declared_options, search_names
from solver.settings import DEFAULT_EVALUATOR, DEFAULT_GENERATOR, ModelSettings, SearchSettings, Settings
from solver.task_capabilities import HasOracle, find
from solver.tools.plugins import TaskPlugin, load_plugins
from solver.trace import Trace
from verifiers.report import AnswerReport

# Further subcommands (bench, audit, show, ...) live in their own modules. Each module defines
# ``add_parser(subparsers, plugins)`` and ``run(args, plugins) -> int`` (sync or async) and is
# listed here by import path.
COMMAND_MODULES: tuple[str, ...] = ("solver.tools.show", "solver.tools.audit", "solver.tools.bench",
                                   "solver.tools.models", "solver.tools.listing", "solver.tools.export",
                                   "solver.tools.train")


def _command_of(module: str) -> str:
    """The subcommand a module adds: its ``COMMAND``, else the module's own name."""
    return str(importlib.import_module(module).__dict__.get("COMMAND", module.rsplit(".", 1)[-1]))


class UsageError(Exception):
    """Bad command-line input: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _price(text: str) -> tuple[str, tuple[float, float]]:
    try:
        model, rest = text.split("=", 1)
        pin, pout = rest.split(",", 1)
        return model, (float(pin), float(pout))
    except ValueError:
        raise argparse.ArgumentTypeError("use MODEL=PROMPT_USD_PER_M,COMPLETION_USD_PER_M") from None


class _Given(argparse._StoreAction):
    """Stores the value and remembers that the flag was given (a default is not)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        namespace.given_options = {*getattr(namespace, "given_options", ()), self.dest}


class _GivenTrue(argparse._StoreTrueAction):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        namespace.given_options = {*getattr(namespace, "given_options", ()), self.dest}


def _own_flags() -> dict[str, tuple[str, str]]:
    """Every registered search's own options on the command line: argparse dest -> (flag, option)."""
    return {d.spec.dest: (d.spec.flag, name) for name, d in declared_options().items()}


def check_search_options(methods: Sequence[str], given: Any) -> None:
    """UsageError (one line) for a search option given on the command line that none of
    ``methods`` takes."""
    found = [SEARCHES[m] for m in methods if m in SEARCHES]
    if not found:
        return
    flags = _own_flags()
    taken = {spec.name for s in found for spec in s.specs}
    for dest in sorted(given or (), key=list(flags).index):
        flag, option = flags[dest]
        if option not in taken:
            theirs = [f for f, o in flags.values() if o in taken]
            what = f"--method {found[0].name}" if len(found) == 1 else "any of the methods"
            own = f"its own options are {', '.join(theirs)}" if theirs else "it takes no options of its own"
            raise UsageError(f"{flag} is not an option of {what}; {own}"
                             + " (every search takes --depth, --generator, --evaluator and the model and budget flags)")


def check_own_method_options(args: argparse.Namespace) -> None:
    """UsageError (one line) for a search's flag given to a task's own method (planning's
    ``llmp``, ``direct``, ``planner``): it is not a search over thoughts, so it would ignore it."""
    flags = _own_flags()
    given = [flags[d][0] for d in sorted(getattr(args, "given_options", ()) or (), key=list(flags).index)]
    given += [flag for flag, value, default in (("--trace", args.trace, None), ("--depth", args.depth, None),
                                                ("--generator", args.generator, DEFAULT_GENERATOR),
                                                ("--evaluator", args.evaluator, "lm"))
              if value != default]
    if given:
        raise UsageError(f"{given[0]} is not an option of --method {args.method}: it is the task's own method, "
                         "not a search over thoughts (--json gives its whole result)")


def _add_own_options(g: Any) -> None:
    """The flags of every registered search's own options, from their declarations
    (``solver.search_options``): given ones are remembered (``check_search_options``)."""
    for d in declared_options().values():
        spec = d.spec
        names = [spec.flag, *([spec.short] if spec.short else [])]
        try:
            if spec.type is bool:
                g.add_argument(*names, dest=spec.dest, action=_GivenTrue, help=d.help())
                if not spec.negated:  # off again where a task's defaults turn it on (Countdown: --no-prune-proven)
                    g.add_argument("--no-" + spec.flag[2:], dest=spec.dest, action="store_false",
                                   default=argparse.SUPPRESS, help=f"turns {spec.flag} off where a task's defaults "
                                                                     "turn it on")
            else:
                g.add_argument(*names, dest=spec.dest, type=spec.type, default=spec.default, action=_Given,
                               metavar={int: "N", float: "X"}.get(spec.type, "TEXT"), help=d.help())
        except argparse.ArgumentError:
            raise ValueError(f"search {d.searches[0]!r}: its option {spec.flag} is already a flag of tot; "
                             "rename the option") from None


def own_options_from(args: argparse.Namespace) -> dict[str, Any]:
    """Every registered search's own options from the command line, by name, each checked
    (UsageError in one line naming the flag): ``get_search(method).options_from`` makes a
    search's options of them."""
    out: dict[str, Any] = {}
    for name, d in declared_options().items():
        spec = d.spec
        value = getattr(args, spec.dest, None if spec.type is bool else spec.default)
        if spec.type is bool:  # the flag given: off where it is --no-NAME
            value = bool(value) != spec.negated
        try:
            out[name] = check_value(spec, value, spec.flag)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return out


def _add_search_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("search")
    names = search_names()  # the registry: built-in, user-registered and tot.searches plugins
    g.add_argument("--method", choices=list(names), default="tot-bfs",
                   help="the search (default: the task's, tot-bfs unless the task names another): "
                        + "; ".join(f"{n}: {SEARCHES[n].help}" if SEARCHES[n].help else n for n in names)
                        + " (tot list shows every registered name)")
    g.add_argument("--depth", type=int, default=None, help="maximum depth (default: the task's)")
    g.add_argument("--generator", default=DEFAULT_GENERATOR,
                   help=f"thought generator: {', '.join(GENERATORS)} or a task's own "
                        f"(default {DEFAULT_GENERATOR}, or the task's)")
    g.add_argument("--evaluator", default="lm",
                   help=f"lm (= {DEFAULT_EVALUATOR}), oracle, or one of {', '.join(EVALUATORS)}")
    g.add_argument("--k", type=int, default=5, help="samples per state for --generator sample")
    g.add_argument("--n-evaluate", type=int, default=3, help="samples per value/vote judgement")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--temperature", type=float, default=0.7)
    m = p.add_argument_group("model")
    m.add_argument("--backend", choices=["local", "openai"], default=None,
                   help="local (embedded Gemma 3 270M, default) or openai (any compatible server); "
                        "--model or --base-url imply openai")
    m.add_argument("--model", default=None, help="model name on the server (or a GGUF path with --backend local)")
    m.add_argument("--base-url", action="append", default=None,
                   help="OpenAI-compatible server URL (or OPENAI_BASE_URL); repeat it, or separate URLs by "
                        "commas, to spread requests over several endpoints serving the same model")
    m.add_argument("--scoring", choices=["auto", "echo", "top-logprobs"], default="auto",
                   help="how a server scores continuations: echoed prompt log-probabilities, or the top "
                        "log-probabilities of one generated token; auto asks the server (default)")
    m.add_argument("--chat", action="store_true", help="use chat completions and chat-style prompts")
    m.add_argument("--thinking", default="auto", metavar="MODE",
                   help="reasoning models (servers): auto (the server's default), on, off, low/medium/high "
                        "(reasoning_effort) or N (at most N tokens of thinking; each request's max_tokens grows "
                        "by N). Thinking is never read as a thought or an answer; it goes in the trace and "
                        "its tokens count in usage and budget")
    m.add_argument("--grammar", choices=["auto", "on", "off"], default="auto",
                   help="propose/sample decode under the grammar of legal thoughts the task writes from "
                        "its rules, where the model backend can: auto (default) unless a server decodes "
                        "grammars too slowly (measured once, said), on always, off never; the gate checks "
                        "every thought either way")
    m.add_argument("--timeout", type=float, default=60.0, help="seconds per model call")
    m.add_argument("--retries", type=int, default=3, help="retries of transient server errors")
    m.add_argument("--concurrency", type=int, default=None,
                   help="concurrent calls to a server (to each endpoint); default 4, or 1 to a server that "
                        "serves one request at a time (probed)")
    m.add_argument("--cache", default=None, help="record/replay store (sqlite file)")
    m.add_argument("--context", type=int, default=None, metavar="N",
                   help="embedded model: most tokens of context (the model's own window, capped by this; "
                        "default $TOT_CONTEXT or 8192)")
    m.add_argument("--adapter", default="auto", metavar="auto|off|PATH",
                   help="embedded model: a LoRA adapter (GGUF, with its JSON manifest beside it, as tot train "
                        "writes them); auto (default): the one shipped for the task, where its measured figures "
                        "made it the default (through a server: where llama.cpp's server has it loaded on the "
                        "embedded model); off: none. It reorders and proposes, never decides a verdict")
    m.add_argument("--cache-mode", choices=["record", "replay", "off"], default="record",
                   help="record: reuse and add; replay: fail on a miss; off: ignore the store")
    m.add_argument("--price", type=_price, action="append", default=[],
                   help="MODEL=IN,OUT: USD per million prompt and completion tokens")
    b = p.add_argument_group("budgets (per puzzle)")
    b.add_argument("--budget-calls", type=int, default=None)
    b.add_argument("--budget-tokens", type=int, default=None)
    b.add_argument("--budget-steps", type=int, default=None)
    b.add_argument("--budget-seconds", type=float, default=None)
    o = p.add_argument_group("output")
    o.add_argument("--trace", default=None, help="append the search trace (JSON lines) to this file")
    o.add_argument("--json", action="store_true", help="one JSON object per puzzle on stdout")
    _add_own_options(g)  # last: an option named like one of tot's own flags is refused, not tot's flag


def build_parser(plugins: dict[str, TaskPlugin]) -> argparse.ArgumentParser:
    parser = _Parser(prog="tot", description="Verified Tree-of-Thoughts search.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    solve_p = sub.add_parser("solve", help="solve puzzles with verified search")
    solve_tasks = solve_p.add_subparsers(dest="task", required=True, parser_class=_Parser)
    verify_p = sub.add_parser("verify", help="check an answer exactly (exit 0 valid, 1 invalid), "
                                             "or re-check a whole trace with --trace")
    verify_p.add_argument("--trace", dest="verify_trace", default=None, metavar="RUN.jsonl",
                          help="replay a trace with no model: every gate verdict, state and answer is "
                               "re-checked (exit 0 all hold, 1 first mismatch, 2 malformed)")
    verify_tasks = verify_p.add_subparsers(dest="task", required=False, parser_class=_Parser)
    for name, plugin in plugins.items():
        sp = solve_tasks.add_parser(name, help=plugin.help)
        plugin.add_solve_args(sp)
        _add_search_args(sp)
        for action in sp._actions:  # a task's own methods (planning: llmp, direct) join the choices
            task_methods: tuple[str, ...] = getattr(plugin, "methods", ())
            if action.dest == "method" and task_methods:
                action.choices = [*(action.choices or ()), *task_methods]
        sp.set_defaults(**getattr(plugin, "solve_defaults", {}))  # e.g. writing: sample + vote, b=1
        sp.set_defaults(task_adapters=getattr(plugin, "adapters", ()))  # what --adapter auto picks from
        vp = verify_tasks.add_parser(name, help=plugin.help)
        plugin.add_verify_args(vp)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_parser(sub, plugins)
    return parser


def _urls(values: list[str] | str | None) -> str | None:
    """The ``--base-url`` values as one comma-separated string (None where none was given);
    UsageError in one line for one given empty (never a fall-back to another server) or one that
    is not an http(s) URL with a host and a valid port."""
    from urllib.parse import urlsplit

    from solver.lm.pool import split_urls

    urls = split_urls(values)
    if values is not None and not urls:
        raise UsageError("--base-url is empty: give http://HOST:PORT/v1 or https://...")
    for url in urls:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - read for its check: ValueError for a port out of range or not a number
        except ValueError as exc:
            raise UsageError(f"bad --base-url {url!r}: {exc}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"bad --base-url {url!r}: use http://HOST:PORT/v1 or https://...")
    return ",".join(urls) or None


def output_file(path: str | None, flag: str) -> None:
    """UsageError in one line where ``path`` (given with ``flag``: a file the run appends to or
    creates, with its folders) cannot be one: empty, a directory, or under a file. Checked before
    a model is loaded or anything runs."""
    if path is None:
        return
    if not path:
        raise UsageError(f"{flag} is empty: give a file name")
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{flag} {path} is a directory, not a file")
    for parent in p.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise UsageError(f"{flag} {path}: {parent} is not a directory")
            break


def settings_from(args: argparse.Namespace) -> Settings:
    backend = args.backend or ("openai" if (args.base_url or (args.model and not os.path.isfile(args.model))
                                            or os.environ.get("OPENAI_BASE_URL")) else "local")
    evaluator = DEFAULT_EVALUATOR if args.evaluator == "lm" else args.evaluator
    known = (*EVALUATORS, *getattr(args, "task_evaluators", ()))  # a plugin's own, via solve_defaults
    if evaluator not in known:
        raise UsageError(f"unknown evaluator {args.evaluator!r}; choose lm or one of {', '.join(known)}")
    generators = (*GENERATORS, *getattr(args, "task_generators", ()))  # a plugin's own, via solve_defaults
    if args.generator not in generators:
        raise UsageError(f"unknown generator {args.generator!r}; choose one of {', '.join(generators)}")
    for name in ("k", "n_evaluate", "concurrency"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    if args.depth is not None and args.depth < 1:
        raise UsageError("--depth must be at least 1")
    output_file(args.cache, "--cache")
    search = SearchSettings(
        method=args.method, depth=args.depth, generator=args.generator, evaluator=evaluator, k=args.k,
        n_evaluate=args.n_evaluate, model_free=tuple(getattr(args, "task_model_free", ())),
        seed=args.seed if args.seed is not None else 0,
        options=SEARCHES[args.method].options_from(own_options_from(args)) if args.method in SEARCHES else None)
    model = ModelSettings(
        temperature=args.temperature, seed=args.seed, chat=args.chat, backend=backend, model=args.model,
        base_url=_urls(args.base_url), scoring=args.scoring, thinking=_thinking(args.thinking),
        grammar=args.grammar != "off", grammar_forced=args.grammar == "on", timeout=args.timeout,
        retries=args.retries,
        concurrency=4 if args.concurrency is None else args.concurrency,
        probe_parallel=args.concurrency is None, cache=args.cache, cache_mode=args.cache_mode, context=args.context,
        prices=dict(args.price), adapter=args.adapter,
        task=getattr(args, "task", None) or getattr(args, "bench_task", None),
        shipped_adapters=tuple(str(p) for p in getattr(args, "task_adapters", ())))
    return Settings(search, model, budget_from(args))


def _thinking(value: str) -> str:
    from solver.lm.thinking import parse_thinking

    try:
        return str(parse_thinking(value))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def budget_from(args: argparse.Namespace) -> Budget:
    """The ``--budget-*`` limits of one run (unlimited where not given)."""
    return Budget(*(getattr(args, f"budget_{k}", None) for k in ("calls", "tokens", "steps", "seconds")))


def _no_answer(result: dict[str, Any]) -> str:
    """Why there is no answer: a budget, a proof by exhausted complete search, and/or the exact
    oracle's verdict on the puzzle (each named as what it is)."""
    stop = result["stopped_by"]
    oracle = result.get("oracle_solvable")
    if result.get("exhausted"):
        n = result["expanded"]
        proven = result.get("proven_cuts")
        head = (f"no solution exists: the complete search tried every legal step from every reachable state "
                f"({n} state{'' if n == 1 else 's'} expanded) and none reaches a solution" if not proven else
                f"no solution exists: the complete search tried every legal step from every reachable state but "
                f"the {proven} the exact oracle proved have no solution ({n} state{'' if n == 1 else 's'} "
                "expanded), and none reaches a solution")
        if oracle is False:
            head += "; the exact oracle agrees (no solution from the start)"
        elif oracle is True:
            head += "; but the exact oracle says one exists (please report this as a bug)"
        return head
    why = "the server stopped answering" if stop == "server" else f"{stop} budget ran out"
    head = "no verified solution found" + (f" ({why})" if stop else "")
    if result.get("limit"):  # an enumeration limit cut the search: it is no evidence that none exists
        n = int(result.get("not_tried") or 0)
        head += (f"; incomplete: {n:,} candidate{'' if n == 1 else 's'} not tried" if n else "; incomplete") \
            + f" ({result['limit']})"
    if oracle is False:
        head += "; the exact oracle says this puzzle has no solution"
    elif oracle is True:
        head += "; the exact oracle says a solution exists"
    return head


def _fmt(result: dict[str, Any], answer_suffix: str = "") -> str:
    """The printed result; ``answer_suffix`` follows each answer (the task plugin's, e.g. " = 24")."""
    if result["answer"] is not None:
        tag = "[verified]" if result["verified"] else "[NOT verified]"
        head = f"answer: {result['answer']}{answer_suffix} {tag}"
    else:
        head = _no_answer(result)
    report = result.get("report") or result.get("board_report")
    if isinstance(report, dict):  # what was checked, and each result (AnswerReport.lines)
        head += "\n" + "\n".join("  " + ln for ln in AnswerReport.from_json(report).lines())
    several = result.get("answers")
    if isinstance(several, list):  # mcts --answers N: every distinct answer found, in order
        eq = answer_suffix
        why = f" ({result['answers_note']})" if result.get("answers_note") else ""
        head += f"\nanswers found: {len(several)}{why}" + "".join(
            f"\n  {i}. {a['answer']}{eq} [{'verified' if a['verified'] else 'NOT verified'}]"
            for i, a in enumerate(several, 1))
    cost = f", cost ${result['cost']:.4f}" if result.get("cost") is not None else ""
    return (f"{head}\n  calls {result['calls']} (cached {result['cache_hits']}, failed {result['failed_calls']}), "
            f"tokens {result['tokens']} (prompt {result['prompt_tokens']}, "
            f"completion {result['completion_tokens']}), {result['seconds']:.1f} s{cost}; "
            f"thoughts proposed {result['proposed']}, rejected by the gate {result['rejected']}"
            f"{_unscored(result)}")


def _unscored(result: dict[str, Any]) -> str:
    """A line beside the answer when every scoring call of the run failed: the model ordered
    nothing, and the search went in the checker's own order."""
    n = int(result.get("failed_scores") or 0)
    if not n or n != result.get("score_calls"):
        return ""
    return (f"\n  the model scored nothing: all {n} scoring call{'' if n == 1 else 's'} failed (their errors are "
            "the trace's lm_error events), so the search went in the checker's own order")


async def _solve(plugin: TaskPlugin, args: argparse.Namespace) -> int:
    if args.method in getattr(plugin, "methods", ()):  # a task's own method, not a search (planning: llmp)
        check_own_method_options(args)
        s = settings_from(args)
        run_method: Any = getattr(plugin, "run_method", None)
        own = dataclasses.replace(s, search=dataclasses.replace(s.search, generator="propose"))
        return int(await run_method(args, s, lambda: make_client(own)))
    check_search_options([args.method], getattr(args, "given_options", ()))
    puzzles = plugin.puzzles(args)
    task = plugin.make_task(args)
    s = settings_from(args)
    for _pid, puzzle in puzzles:
        task.root(puzzle)  # bad input fails here, before a model is loaded
    check_settings(task, s)  # and a capability the task lacks (one line, exit 2)
    output_file(args.trace, "--trace")
    search = SEARCHES[s.search.method]
    gen, ev = make_parts(task, s)
    line = search.notice(gen) if search.notice is not None else None
    if line:  # said once, before the first puzzle
        print(f"tot: {s.search.method}: {line}", file=sys.stderr, flush=True)
    client = make_client(s)
    line = await scoring_notice(client, (gen, ev) if search.uses_evaluator(s.search.evaluator) else (gen,))
    if line:  # said before the run, which goes on (the gate still checks every thought)
        print(f"tot: {line}", file=sys.stderr, flush=True)
    trace = Trace(args.trace)
    from solver.tools.progress import RunProgress

    progress = RunProgress(len(puzzles), f"{task.name} solve", quiet=args.json or len(puzzles) < 2,
                           transient=True)
    try:
        for pid, puzzle in puzzles:
            with progress:  # a live bar between puzzles, not over the printed results
                progress.working_on(pid)
                stopped: RunStopped | None = None
                try:
                    res = await solve(task, puzzle, s, client, trace)
                except RunStopped as exc:  # the results so far, then the error (exit 3)
                    res, stopped = exc.result, exc
                progress.finished(res.summary())
            out = {"task": task.name, "id": pid, "puzzle": puzzle, **res.summary()}
            adapter = adapter_of(client.backend) if client is not None else None
            if adapter is not None:  # the embedded model's LoRA adapter: file and sha256
                out["adapter"] = adapter.describe()
            exact = find(task, HasOracle)
            oracle = exact.oracle if exact is not None else None
            if res.exhausted and oracle is not None:
                try:  # the exact oracle's own verdict on the puzzle, beside the search's proof
                    out["oracle_solvable"] = bool(oracle(task.root(puzzle)))
                except ValueError:
                    pass
            report = getattr(plugin, "report", None)  # optional: task fields and text (crosswords: the grid)
            fields, text = report(task, puzzle, res) if report is not None else ({}, "")
            out.update(fields)
            if args.json:
                print(json.dumps(out, ensure_ascii=False), flush=True)
            else:
                prefix = f"[{pid}] " if len(puzzles) > 1 else ""
                print(prefix + (text + "\n" if text else "") + _fmt(out, getattr(plugin, "answer_suffix", "")),
                      flush=True)
            if stopped is not None:
                raise LMError(f"{stopped}; the run stopped there (results so far above)")
    finally:
        trace.close()
        if client is not None:
            await client.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    debug = bool(os.environ.get("TOT_DEBUG"))
    try:
        plugins = load_plugins()
        parser = build_parser(plugins)
        args = parser.parse_args(argv)
        if args.command not in ("solve", "verify"):
            module = next(m for m in COMMAND_MODULES if _command_of(m) == args.command)
            outcome = importlib.import_module(module).run(args, plugins)
            return int(asyncio.run(outcome) if inspect.iscoroutine(outcome) else outcome)
        if args.command == "verify" and args.verify_trace is not None:
            if args.task is not None:
                raise UsageError("give either --trace RUN.jsonl or a task to verify an answer, not both")
            from solver.tools.verify_trace import verify_trace

            code, line = verify_trace(args.verify_trace, plugins)
            print(line, file=sys.stderr if code == 2 else sys.stdout)
            return code
        if args.task is None:
            raise UsageError(f"give a task ({', '.join(plugins)}) or --trace RUN.jsonl")
        plugin = plugins[args.task]
        if args.command == "verify":
            ok, message = plugin.verify(args)
            print(message)
            return 0 if ok else 1
        return asyncio.run(_solve(plugin, args))
    except (UsageError, ValueError) as exc:
        if debug:
            raise
        print(f"tot: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    except (LMError, CacheMiss) as exc:
        if debug:
            raise
        print(f"tot: model error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("tot: interrupted; results printed so far and the trace file are complete", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `tot ... | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - the user gets one line, not a traceback
        if debug:
            raise
        print(f"tot: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
