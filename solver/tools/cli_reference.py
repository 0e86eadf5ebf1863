"""The command-line reference page, written from the real ``tot`` parser (the documentation site's
build calls it through ``docs/hooks/cli_page.py``), so the page lists every subcommand and flag
that exists and cannot drift from them."""

from __future__ import annotations

import argparse
import re

from solver.search_options import OptionSpec
from solver.searches import SEARCHES, search_names

__all__ = ["commands", "reference_markdown", "search_options_markdown"]


def commands(parser: argparse.ArgumentParser, prefix: str = "tot") -> list[tuple[str, argparse.ArgumentParser]]:
    """Every (command line, parser) under ``parser``, depth first, ``parser`` itself first."""
    found = [(prefix, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(commands(sub, f"{prefix} {name}"))
    return found


def _escape(text: str) -> str:
    """Help text as Markdown prose: the characters Markdown would read as markup are escaped."""
    text = text.replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([*_`|\[\]])", r"\\\1", text)


def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    if action.choices is not None and action.metavar is None:
        value = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        value = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    return ", ".join(f"{o} {value}" for o in action.option_strings)


def _one(name: str, parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    # Usage wrapped at 100 columns, not the terminal's width, so the page is the same everywhere.
    wrap = argparse.HelpFormatter(prog=parser.prog, width=100)
    wrap.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    usage = wrap.format_help().strip()
    lines = [f"## `{name}`", "", "```text", usage, "```", ""]
    if parser.description:
        lines += [_escape(parser.description), ""]
    for group in parser._action_groups:
        shown = [a for a in group._group_actions if a.help != argparse.SUPPRESS
                 and not isinstance(a, (argparse._SubParsersAction, argparse._HelpAction))]
        if not shown:
            continue
        lines += [f"**{_escape(group.title or 'arguments')}**", ""]
        for action in shown:
            help_text = formatter._expand_help(action) if action.help else ""
            default = action.default
            unset = default is None or default is False or default == [] or default is argparse.SUPPRESS
            extra = "" if unset or "default" in help_text else f"(default: `{default}`)"
            said = " ".join(part for part in (_escape(help_text), extra) if part)
            lines.append(f"- `{_flag(action)}`" + (f": {said}" if said else ""))
        lines.append("")
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        lines += ["**subcommands**", ""]
        helps = {c.dest: c.help for c in action._choices_actions}
        for sub_name in action.choices:
            anchor = re.sub(r"[^a-z0-9]+", "-", f"{name} {sub_name}".lower()).strip("-")
            lines.append(f"- [`{name} {sub_name}`](#{anchor}): {_escape(helps.get(sub_name) or '')}".rstrip(": "))
        lines.append("")
    return lines


def reference_markdown(parser: argparse.ArgumentParser) -> str:
    """One section per command line, from ``tot`` down to each task's subcommand."""
    out: list[str] = []
    for name, sub in commands(parser):
        out += _one(name, sub)
    return "\n".join(out) + "\n"


def _bounds(spec: OptionSpec) -> str:
    said = [f"at least {spec.at_least:g}" if spec.at_least is not None else "",
            f"above {spec.above:g}" if spec.above is not None else "",
            f"at most {spec.at_most:g}" if spec.at_most is not None else ""]
    return " and ".join(b for b in said if b)


def search_options_markdown() -> str:
    """A table of every registered search's own options, as each declares them
    (``solver.search_options``): the page's copy cannot drift from the declarations."""
    rows = ["| search | flag | type | default | what it sets | allowed |", "|---|---|---|---|---|---|"]
    for name in search_names():
        search = SEARCHES[name]
        if search.options is None:
            rows.append(f"| `{name}` | declares none: takes every search's | | | | |")
        elif not search.specs:
            rows.append(f"| `{name}` | none of its own | | | | |")
        for spec in search.specs:
            kind = spec.type.__name__ + (" or none" if spec.optional else "")
            default = "none" if spec.default is None else f"`{spec.default}`"
            what = ("turns off: " if spec.negated else "") + _escape(spec.help)
            flag = f"`{spec.flag}`" + (f", `{spec.short}`" if spec.short else "")
            rows.append(f"| `{name}` | {flag} | {kind} | {default} | {what} | {_bounds(spec)} |")
    return "\n".join(rows) + "\n"
