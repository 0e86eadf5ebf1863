"""A search tree as one static SVG picture (``tot show TRACE --svg``): every node a dot coloured by
its fate, the path to the verified answer in green, false prunes (with ground truth) in magenta,
the thoughts of the expanded nodes written beside them. For pages and papers, where the HTML
viewer cannot go; it draws only what ``solver.tools.tree`` rebuilt from the trace."""

from __future__ import annotations

from xml.sax.saxutils import escape

from solver.tools.tree import SearchTree, TreeNode

__all__ = ["COLOURS", "render_svg"]

# Fate -> fill colour; a false prune and the answer's path override it.
COLOURS: dict[str, str] = {
    "root": "#212121", "solution": "#2e7d32", "unverified": "#f9a825", "solved": "#66bb6a",
    "kept": "#1565c0", "backtracked": "#64b5f6", "pruned": "#9e9e9e", "beam": "#bdbdbd",
    "depth": "#e0e0e0", "children": "#e0e0e0", "duplicate": "#e0e0e0", "rejected": "#ef9a9a",
    "unexplored": "#eeeeee",
}
FALSE_PRUNE = "#d81b60"
PATH = "#2e7d32"
_DX, _DY, _LABEL = 14, 80, 28


def _colour(nd: TreeNode) -> str:
    if nd.false_prune:
        return FALSE_PRUNE
    if nd.on_path and nd.fate != "root":
        return PATH
    return COLOURS.get(nd.fate, "#eeeeee")


def _layout(tree: SearchTree) -> dict[str, tuple[float, float]]:
    """x by leaf order (a parent centred over its children), y by depth; children in trace order."""
    pos: dict[str, tuple[float, float]] = {}
    slot = 0

    def place(key: str) -> float:
        nonlocal slot
        nd = tree.nodes[key]
        kids = [k for k in nd.children if k in tree.nodes]
        if kids:
            xs = [place(k) for k in kids]
            x = (xs[0] + xs[-1]) / 2
        else:
            x = slot * _DX
            slot += 1
        pos[key] = (x, nd.depth * _DY)
        return x

    roots = [k for k, nd in tree.nodes.items() if nd.parent is None or nd.parent not in tree.nodes]
    for key in roots:
        place(key)
    return pos


def _title(tree: SearchTree) -> str:
    """What ran and how it ended; no seconds, so a replayed run draws the same picture."""
    i = tree.info
    return (f"{i.get('task', '?')} {str(i.get('puzzle', '?'))!r}  {i.get('method', '?')} "
            f"{i.get('generator', '?')}/{i.get('evaluator', '?')}  model {i.get('model') or 'none'}  "
            f"{len(tree.nodes)} nodes  {tree.outcome()}")


def render_svg(tree: SearchTree, title: str = "") -> str:
    """One SVG document of ``tree``: a dot per node, an edge per parent link, a legend of the fates
    present with their counts."""
    pos = _layout(tree)
    shown = [(COLOURS[fate], f"{fate} {n}") for fate, n in tree.counts().items() if fate in COLOURS]
    prunes = len(tree.false_prunes())
    if prunes:
        shown.append((FALSE_PRUNE, f"false prune {prunes}"))
    margin, legend_h = 30, 24 * -(-len(shown) // 6) + 10
    width = max((x for x, _ in pos.values()), default=0) + 2 * margin + 220
    depth = max((y for _, y in pos.values()), default=0)
    height = depth + 2 * margin + 40 + legend_h
    ox, oy = margin, margin + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{margin}" y="{margin}" font-size="13">{escape(title or _title(tree))}</text>']
    for key, nd in tree.nodes.items():  # edges first, under the dots
        if nd.parent in pos:
            (x1, y1), (x2, y2) = pos[nd.parent], pos[key]
            stroke = PATH if nd.on_path else "#cfcfcf"
            out.append(f'<line x1="{x1 + ox:.1f}" y1="{y1 + oy:.1f}" x2="{x2 + ox:.1f}" y2="{y2 + oy:.1f}" '
                       f'stroke="{stroke}" stroke-width="{2 if nd.on_path else 1}"/>')
    for key, nd in tree.nodes.items():
        x, y = pos[key]
        tip = f"{nd.fate}: {nd.thought}" + (f" -> {nd.state}" if nd.state else "")
        out.append(f'<circle cx="{x + ox:.1f}" cy="{y + oy:.1f}" r="5" fill="{_colour(nd)}" '
                   f'data-fate="{escape(nd.fate)}" data-node="{escape(key)}"><title>{escape(tip)}</title></circle>')
        if (nd.expanded_at is not None and nd.fate != "root") or nd.fate == "solution":
            text = nd.thought if len(nd.thought) <= _LABEL else nd.thought[: _LABEL - 1] + "…"
            out.append(f'<text x="{x + ox + 8:.1f}" y="{y + oy - 7:.1f}">{escape(text)}</text>')
    lx, ly = margin, height - legend_h + 10
    for i, (colour, label) in enumerate(shown):
        cx, cy = lx + (i % 6) * 120, ly + (i // 6) * 24
        out.append(f'<circle cx="{cx + 5}" cy="{cy}" r="5" fill="{colour}"/>'
                   f'<text x="{cx + 14}" y="{cy + 4}">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
