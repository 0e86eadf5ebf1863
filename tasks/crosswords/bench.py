"""``tot bench crosswords``: the paper's crossword figures beside the common table.

Per pair (searches only, when the puzzle has its answer board): letter / word / game success of
the output (the complete grid, else the deepest state reached), of the best state seen (the
paper's oracle "best state": of every state that passed the gate, the one with the most words
right, then letters), and the evaluator's false prunes against the answer (pruned states that
were still solvable, over all still-solvable states it scored). The per-method table of these
is printed under the common one.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tasks.crosswords.data import parse_puzzle_text
from verifiers.crossword import consistent, score_board


def best_seen(events: list[dict[str, Any]], truth: str) -> str | None:
    """The board of the best state that passed the gate (the root counts); None without states."""
    boards = [e["state"] for e in events if e.get("event") in ("root", "verdict") and isinstance(e.get("state"), str)]
    if not boards:
        return None
    return max(boards, key=lambda b: (score_board(b, truth).words_right, score_board(b, truth).letters_right))


def false_prunes(events: list[dict[str, Any]], truth: str) -> tuple[int, int, int]:
    """(still-solvable states the evaluator pruned, still-solvable states it scored, states scored).
    A state is named by its node, or, for Long's controller, which scores and cuts a thought before
    it is a node, by its parent and thought (its state is then on the ``score`` event)."""
    def key(e: dict[str, Any]) -> tuple[Any, ...]:
        return ("node", e["node"]) if "node" in e else ("thought", e.get("parent"), e.get("thought"))

    states = {key(e): e["state"] for e in events
              if e.get("event") in ("verdict", "score") and isinstance(e.get("state"), str)
              and ("node" in e or "thought" in e)}
    scored = {key(e) for e in events if e.get("event") == "score"}
    pruned = {key(e) for e in events if e.get("event") == "cut" and e.get("why") == "pruned"}
    solvable = {k for k in scored if k in states and consistent(states[k], truth)}
    return len(solvable & pruned), len(solvable), len(scored)


def bench_row(fields: dict[str, Any], puzzle: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The crossword columns of one search pair; ``fields`` is the plugin's report of the result
    (board, letters, words, game when the answer is known). Empty without an answer board."""
    truth = parse_puzzle_text(puzzle).answer
    if truth is None or "letters" not in fields:
        return {}
    out = {k: fields[k] for k in ("board", "letters", "words", "game", "letters_right", "words_right")}
    best = best_seen(events, truth)
    if best is not None:
        bs = score_board(best, truth)
        out.update(best_letters=round(bs.letters, 4), best_words=round(bs.words, 4), best_game=bs.game)
    fp, solvable, scored = false_prunes(events, truth)
    out.update(false_pruned=fp, solvable_scored=solvable, scored=scored)
    return out


def bench_table(rows: list[dict[str, Any]]) -> str:
    """Per method, over finished pairs with the crossword columns; "" when there are none."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r.get("status") == "done" and "letters" in r:
            by[str(r["method"])].append(r)
    if not by:
        return ""
    width = max([28] + [len(m) for m in by])
    head = (f"{'method':{width}} {'n':>3} {'letters':>8} {'words':>6} {'games':>6} {'best: l/w/g':>18} "
            f"{'false prunes':>18}")
    lines = [head, "-" * len(head)]
    for method in sorted(by):
        rs = by[method]

        def mean(k: str, rs: list[dict[str, Any]] = rs) -> float:
            return sum(float(r.get(k) or 0) for r in rs) / len(rs)

        fp, sol = sum(r["false_pruned"] for r in rs), sum(r["solvable_scored"] for r in rs)
        best = f"{mean('best_letters'):.0%}/{mean('best_words'):.0%}/{sum(bool(r.get('best_game')) for r in rs)}"
        lines.append(f"{method:{width}} {len(rs):3} {mean('letters'):8.1%} {mean('words'):6.1%} "
                     f"{sum(bool(r['game']) for r in rs):6} {best:>18} {(fp / sol if sol else 0):7.1%} of {sol:<6}")
    lines.append("letters / words = mean share right of the output (complete grid, else the deepest state); games = "
                 "grids all right; best = the best state seen; false prunes = still-solvable states pruned / scored")
    return "\n".join(lines)
