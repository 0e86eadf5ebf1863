"""The one text that carries a planning puzzle: the domain's ``(define (domain ...))`` form, then
the problem's (``tot solve planning``, the rewards and exports all read and write it here)."""

from __future__ import annotations

from verifiers.pddl_model import MAX_PDDL_CHARS

__all__ = ["join_puzzle", "split_forms", "split_puzzle"]


def split_forms(text: str) -> list[str]:
    """The top-level parenthesised forms of a text (comments after ``;`` ignored)."""
    forms, depth, start = [], 0, None
    for line_start, line in _lines(text):
        code = line.split(";", 1)[0]
        for i, ch in enumerate(code):
            if ch == "(":
                if depth == 0:
                    start = line_start + i
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0 and start is not None:
                    forms.append(text[start:line_start + i + 1])
                    start = None
                if depth < 0:
                    raise ValueError("unbalanced ')' in the PDDL text")
    if depth != 0:
        raise ValueError("unbalanced '(' in the PDDL text: a form is not closed")
    return forms


def _lines(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        out.append((pos, line))
        pos += len(line)
    return out


def join_puzzle(domain_text: str, problem_text: str) -> str:
    """One puzzle text: the domain's ``(define (domain ...))`` form, then the problem's."""
    return domain_text.strip() + "\n\n" + problem_text.strip() + "\n"


def split_puzzle(puzzle: str) -> tuple[str, str]:
    """(domain PDDL, problem PDDL) of a puzzle text made by ``join_puzzle``."""
    if len(puzzle) > 2 * MAX_PDDL_CHARS:
        raise ValueError(f"the planning puzzle is longer than {2 * MAX_PDDL_CHARS} characters")
    forms = split_forms(puzzle)
    if len(forms) != 2:
        raise ValueError(f"a planning puzzle is a domain and a problem in PDDL (two forms), found {len(forms)}")
    return forms[0], forms[1]
