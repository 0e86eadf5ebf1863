"""The viewer in a real browser: Debian's headless Chromium driven by Playwright for Python.

Never downloads a browser. Outside CI a missing browser skips these tests with the reason; in CI
(CI=true) it fails them, since .ci/run installs Chromium and Playwright.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from solver.tools.cli import main
from solver.tools.plugins import load_plugins
from solver.tools.show import load_trees
from tests.test_tree import dfs_trace, oracle_bfs_trace, scripted_bfs_trace, synthetic_trace

CHROMIUM = "/usr/bin/chromium"
# No sandbox (CI runs as root); no background networking, updates or sync (there is no network).
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"browser test cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The HTML files, made before the browser starts: Playwright's sync API holds an event loop in
    this thread, and the searches that write the traces need asyncio.run."""
    tmp = tmp_path_factory.mktemp("viewer")
    trace = tmp / "runs.jsonl"
    oracle_bfs_trace(trace, "--breadth", "2")
    dfs_trace(trace)
    scripted_bfs_trace(trace)
    html = tmp / "tree.html"
    assert main(["show", str(trace), "--oracle", "-o", str(html)]) == 0
    big = tmp / "big.jsonl"
    count = synthetic_trace(big)
    big_html = tmp / "big.html"
    assert main(["show", str(big), "-o", str(big_html)]) == 0
    return {"dir": tmp, "html": html, "trees": load_trees(str(trace), plugins=load_plugins()),
            "big_html": big_html, "big_count": count}


@pytest.fixture(scope="module")
def browser(built: dict[str, Any]) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _unavailable(f"Playwright for Python is missing ({exc}); pip install -e '.[test]'")
    if not Path(CHROMIUM).is_file():
        _unavailable(f"{CHROMIUM} is missing; apt-get install -y chromium (Debian's package)")
    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=120_000)
    except Exception as exc:  # noqa: BLE001 - any launch failure is reported as such
        pw.stop()
        _unavailable(f"headless Chromium did not start: {str(exc).splitlines()[0]}")
    yield b
    b.close()
    pw.stop()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1400, "height": 900})
    pg.set_default_timeout(60_000)
    pg.errors = []  # type: ignore[attr-defined]
    pg.remote = []  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("request", lambda r: None if r.url.startswith("file:") else pg.remote.append(r.url))
    yield pg
    pg.close()


def _open(page: Any, html: Path) -> None:
    page.goto(html.as_uri())
    page.wait_for_selector("body[data-ready='1']")


def _rendered(page: Any) -> int:
    return int(page.locator("#tree .node").count())


def test_viewer_counts_expands_searches_and_switches_runs(page, built):
    trees = built["trees"]
    first = trees[0]
    _open(page, built["html"])

    # Summary header: node count, outcome, three runs to choose from.
    assert page.get_attribute("#node-count", "data-count") == str(len(first.nodes))
    assert "verified" in page.inner_text("#outcome")
    assert page.locator("#run option").count() == 3
    assert "false prune" in page.inner_text("#legend")

    # Lazy: only the root, its children and the solution path are in the DOM at first.
    start = _rendered(page)
    assert start < len(first.nodes)
    assert page.locator(".on-path").count() == sum(nd.on_path for nd in first.nodes.values())

    # Expand a collapsed subtree by clicking its toggle: exactly its children appear, in order.
    key = next(nd.key for nd in first.nodes.values()
               if nd.children and not nd.on_path and nd.parent == first.root)
    node = page.locator(f'.node[data-key="{key}"]')
    node.locator(":scope > .row > .toggle").click()
    kids = node.locator(":scope > .children > .node")
    assert kids.count() == len(first.nodes[key].children)
    assert [kids.nth(i).get_attribute("data-key") for i in range(kids.count())] == list(first.nodes[key].children)
    assert _rendered(page) == start + len(first.nodes[key].children)
    node.locator(":scope > .row > .toggle").click()  # and collapse it again
    assert _rendered(page) == start

    # Search for a thought that is not rendered yet: it is found, revealed and marked.
    target = next(nd for nd in first.nodes.values()
                  if nd.depth >= 2 and not first.nodes[str(nd.parent)].on_path)
    assert page.locator(f'.node[data-key="{target.key}"]').count() == 0
    page.fill("#search", target.thought)
    page.press("#search", "Enter")
    q = target.thought.lower()
    want = sum(1 for nd in first.nodes.values() if q in nd.thought.lower() or q in (nd.state or "").lower())
    assert page.get_attribute("#match-count", "data-count") == str(want)
    hit = page.locator(f'.node[data-key="{target.key}"]')
    assert hit.is_visible() and "match" in (hit.get_attribute("class") or "")

    # Expand everything: every node is drawn, false prunes and the path in their own colours.
    page.fill("#search", "")
    page.press("#search", "Enter")
    page.click("#expand-all")
    assert _rendered(page) == len(first.nodes)
    assert page.locator(".false-prune").count() == len(first.false_prunes()) > 0
    colour = page.eval_on_selector(".false-prune > .row", "e => getComputedStyle(e).backgroundColor")
    path_colour = page.eval_on_selector(".on-path > .row", "e => getComputedStyle(e).backgroundColor")
    assert colour != path_colour

    # Another run: the scripted model's, with thoughts the checker rejected, greyed with reasons.
    third = trees[2]
    page.select_option("#run", "2")
    assert page.get_attribute("#node-count", "data-count") == str(len(third.nodes))
    page.click("#expand-all")
    rejected = page.locator(".node.f-rejected")
    assert rejected.count() == sum(nd.fate == "rejected" for nd in third.nodes.values()) > 0
    assert "4 * 9 is 36, not 37" in page.inner_text("#tree")
    assert page.locator(".badge.verified").inner_text().startswith("verified: ")
    grey = page.eval_on_selector(".node.f-rejected > .row", "e => getComputedStyle(e).color")
    assert grey == "rgb(138, 138, 138)"

    shot = built["dir"] / "tree.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert page.errors == [] and page.remote == []


def test_ten_thousand_nodes_stay_lazy(page, built):
    _open(page, built["big_html"])
    assert page.get_attribute("#node-count", "data-count") == str(built["big_count"]) == "10051"
    # The root has 150 children: 100 are drawn, the rest behind a button.
    assert _rendered(page) == 1 + 100
    page.click("#tree .more")
    assert _rendered(page) == 1 + 150
    # Search reaches a node deep in the last chunk of its parent without drawing the whole tree.
    page.fill("#search", "step 10050 via")
    page.press("#search", "Enter")
    assert page.get_attribute("#match-count", "data-count") == "1"
    assert page.locator('.node[data-key="10050"]').is_visible()
    assert _rendered(page) < 400
    page.screenshot(path=str(built["dir"] / "big.png"))
    assert page.errors == [] and page.remote == []


def test_a_missing_browser_fails_in_ci_and_skips_elsewhere(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="cannot run in CI: no chromium"):
        _unavailable("no chromium")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        _unavailable("no chromium")
