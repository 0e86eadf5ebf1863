"""``tot list [--json]``: what this installation can run, by name.

The registered tasks (entry points ``tot.tasks``), searches (``--method``; built in, registered
with ``solver.searches.register_search`` or by a ``tot.searches`` entry point), generators
(``--generator``) and evaluators (``--evaluator``); a task may add generators, evaluators and
methods of its own (``tot solve TASK --help`` names them). Each search's own options are listed
under it, as it declares them (``solver.search_options``): flag, type, default and help.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from solver.evaluators import EVALUATORS
from solver.generators import GENERATORS
from solver.searches import SEARCHES, search_names

COMMAND = "list"


def add_parser(subparsers: Any, plugins: dict[str, Any]) -> None:
    p = subparsers.add_parser("list", help="the registered tasks, searches, generators and evaluators",
                              description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")


def registry(plugins: dict[str, Any]) -> dict[str, list[str]]:
    """Every registered name, by kind."""
    return {"tasks": list(plugins), "searches": list(search_names()), "generators": list(GENERATORS),
            "evaluators": list(EVALUATORS)}


def search_options() -> dict[str, list[dict[str, Any]] | None]:
    """Each search's own options as it declares them (None: a search that declares none, so it
    is given every search's)."""
    return {n: [spec.describe() for spec in SEARCHES[n].specs] if SEARCHES[n].options is not None else None
            for n in search_names()}


def _flag_line(o: dict[str, Any]) -> str:
    if o["type"] == "bool":
        return f"{o['flag']}: " + ("turns off: " if o["default"] else "") + o["help"]
    return f"{o['flag']} ({o['type']}, default {o['default']}): {o['help']}"


def run(args: argparse.Namespace, plugins: dict[str, Any]) -> int:
    found = registry(plugins)
    options = search_options()
    if args.json:
        print(json.dumps({**found, "search_options": options}))
        return 0
    helps = {"tasks": {n: getattr(p, "help", "") for n, p in plugins.items()},
             "searches": {n: SEARCHES[n].help for n in found["searches"]}}
    for kind, names in found.items():
        print(f"{kind}:")
        for name in names:
            text = helps.get(kind, {}).get(name, "")
            print(f"  {name}" + (f"  {text}" if text else ""))
            for o in (options.get(name) or []) if kind == "searches" else []:
                print(f"      {_flag_line(o)}")
    return 0
