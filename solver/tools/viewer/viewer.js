// Search tree viewer, inlined into the HTML file that `tot show` writes. No network, no libraries.
// Lazy: only the children of expanded nodes exist in the DOM, and a node with many children shows
// them CHUNK at a time, so traces of 10,000+ nodes stay responsive.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("tot-data").textContent);
  var CHUNK = 100, MAX_RESULTS = 200, REVEAL = 25, EXPAND_ALL_LIMIT = 3000;
  var run = null;          // the selected run's data
  var open = new Set();    // indices of expanded nodes
  var shown = new Map();   // parent index -> how many children are rendered
  var matches = new Set();
  var elements = new Map(); // node index -> its rendered element

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmtNum(x) {
    if (x === undefined || x === null) return "-";
    if (typeof x !== "number") return String(x);
    return Number.isInteger(x) ? x.toLocaleString("en-US") : (Math.round(x * 1000) / 1000).toString();
  }
  function ordinal(n) {
    var s = ["th", "st", "nd", "rd"], v = n % 100;
    return n + (s[(v - 20) % 10] || s[v] || s[0]);
  }

  function header() {
    var info = run.info, end = run.end || {};
    var sum = document.getElementById("summary");
    sum.textContent = "";
    function item(label, value, cls) {
      var s = el("span", cls);
      s.appendChild(el("b", null, label));
      s.appendChild(document.createTextNode(value));
      sum.appendChild(s);
      return s;
    }
    item("task", info.task || "-");
    item("puzzle", info.puzzle || "-");
    item("method", info.method || "-");
    item("generator", info.generator || "-");
    item("evaluator", info.evaluator || "-");
    item("model", info.model || "none");
    item("calls", fmtNum(end.calls));
    item("tokens", fmtNum(end.tokens));
    item("time", end.seconds === undefined ? "-" : fmtNum(end.seconds) + " s");
    var nc = item("nodes", fmtNum(run.nodes.length));
    nc.id = "node-count";
    nc.setAttribute("data-count", String(run.nodes.length));
    item("expanded", fmtNum(run.expanded));
    if (run.hasTruth) item("false prunes", fmtNum(run.falsePrunes), run.falsePrunes ? "fp-count" : "");
    var out = item("outcome", run.outcome, "outcome " + (run.verified ? "ok" : "fail"));
    out.id = "outcome";
    if (run.errors.length) item("model errors", String(run.errors.length), "errors");
  }

  function legend() {
    var lg = document.getElementById("legend");
    lg.textContent = "";
    function entry(cls, label, title) {
      var s = el("span");
      s.title = title || "";
      s.appendChild(el("span", "sw " + cls));
      s.appendChild(document.createTextNode(label));
      lg.appendChild(s);
    }
    entry("fate-solution", "solution path, answer verified");
    Object.keys(DATA.fates).forEach(function (f) {
      if (run.counts[f]) entry("fate-" + f, f + " (" + fmtNum(run.counts[f]) + ")", DATA.fates[f]);
    });
    if (run.hasTruth) entry("fp", "false prune: solvable state that was cut", "ground truth from the trace or --truth");
    else lg.appendChild(el("span", "detail", "no ground truth in this trace (false prunes need `tot audit` output)"));
  }

  function nodeElement(i) {
    var n = run.nodes[i];
    var box = el("div", "node f-" + n.f);
    box.setAttribute("data-key", n.k);
    box.setAttribute("data-fate", n.f);
    if (n.path) box.classList.add("on-path");
    if (n.fp) box.classList.add("false-prune");
    if (matches.has(i)) box.classList.add("match");
    var row = el("div", "row");
    var t = el("button", "toggle" + (n.c.length ? "" : " leaf"), n.c.length ? (open.has(i) ? "\u25be" : "\u25b8") : "\u00b7");
    if (n.c.length) {
      t.title = n.c.length + " children";
      t.addEventListener("click", function () { toggle(i); });
    }
    row.appendChild(t);
    row.appendChild(el("span", "id", n.k.charAt(0) === "r" ? "\u2717" : n.k.charAt(0) === "p" ? "\u2013" : "#" + n.k));
    if (n.x) row.appendChild(el("span", "badge order", "expanded " + ordinal(n.x)));
    row.appendChild(el("span", "thought", n.p < 0 ? (n.s || "root") : n.th));
    if (n.p >= 0 && n.s) row.appendChild(el("span", "state", "\u2192 " + n.s));
    var fate = el("span", "badge fate fate-" + n.f, n.f + (n.tie ? " (tie)" : ""));
    fate.title = DATA.fates[n.f] || "";
    row.appendChild(fate);
    if (n.v === "unchecked") row.appendChild(el("span", "badge fate-unverified", "unchecked: gate off"));
    if (n.pr !== undefined) row.appendChild(el("span", "badge score", "prior " + fmtNum(n.pr)));
    if (n.sc !== undefined) row.appendChild(el("span", "badge score", "score " + fmtNum(n.sc)));
    if (n.fp) row.appendChild(el("span", "badge fp", "FALSE PRUNE"));
    else if (n.sv === true || n.sv === false) row.appendChild(el("span", "detail", n.sv ? "solvable" : "unsolvable"));
    if (n.a !== undefined) {
      row.appendChild(el("span", "badge " + (n.ok ? "verified" : "fate-unverified"), (n.ok ? "verified: " : "not verified: ") + n.a));
    }
    if (n.r) row.appendChild(el("span", "reason", n.r));
    if (n.dt) row.appendChild(el("span", "detail", n.dt));
    if (n.c.length && !open.has(i)) row.appendChild(el("span", "detail", n.c.length + " children"));
    if (n.e && n.e.length) row.appendChild(el("span", "errors", "model error: " + n.e.join("; ")));
    box.appendChild(row);
    elements.set(i, box);
    if (open.has(i) && n.c.length) box.appendChild(childrenElement(i));
    return box;
  }

  function childrenElement(i) {
    var n = run.nodes[i];
    var wrap = el("div", "children");
    var count = Math.min(n.c.length, shown.get(i) || CHUNK);
    for (var j = 0; j < count; j++) wrap.appendChild(nodeElement(n.c[j]));
    if (count < n.c.length) {
      var more = el("button", "more", "show " + Math.min(CHUNK, n.c.length - count) + " more of " + (n.c.length - count) + " hidden");
      more.addEventListener("click", function () { shown.set(i, count + CHUNK); redraw(i); });
      wrap.appendChild(more);
    }
    return wrap;
  }

  function redraw(i) {
    var old = elements.get(i);
    var fresh = nodeElement(i);
    if (old && old.parentNode) old.parentNode.replaceChild(fresh, old);
    updateRendered();
  }

  function toggle(i) {
    if (open.has(i)) open.delete(i); else open.add(i);
    redraw(i);
  }

  function renderTree() {
    var tree = document.getElementById("tree");
    tree.textContent = "";
    elements.clear();
    if (run.root >= 0) tree.appendChild(nodeElement(run.root));
    updateRendered();
  }

  function updateRendered() {
    document.getElementById("rendered").textContent = document.querySelectorAll("#tree .node").length + " rendered";
  }

  // Open every ancestor of node i, and make sure each is rendered far enough into its siblings.
  function reveal(i) {
    var n = run.nodes[i];
    while (n.p >= 0) {
      var parent = run.nodes[n.p];
      open.add(n.p);
      var pos = parent.c.indexOf(i);
      if (pos >= (shown.get(n.p) || CHUNK)) shown.set(n.p, Math.ceil((pos + 1) / CHUNK) * CHUNK);
      i = n.p;
      n = parent;
    }
  }

  function showPath() {
    run.nodes.forEach(function (n, i) { if (n.path) { reveal(i); if (n.c.length && n.ok === undefined) open.add(i); } });
  }

  function search() {
    var q = document.getElementById("search").value.trim().toLowerCase();
    matches.clear();
    var res = document.getElementById("results");
    res.textContent = "";
    var found = [];
    if (q) {
      run.nodes.forEach(function (n, i) {
        if ((n.th || "").toLowerCase().indexOf(q) >= 0 || (n.s || "").toLowerCase().indexOf(q) >= 0) found.push(i);
      });
      found.forEach(function (i) { matches.add(i); });
      found.slice(0, REVEAL).forEach(reveal);
      found.slice(0, MAX_RESULTS).forEach(function (i) {
        var n = run.nodes[i];
        var a = el("a", "result", "#" + n.k + " " + (n.p < 0 ? n.s : n.th) + " [" + n.f + "]");
        a.addEventListener("click", function () { focusNode(i); });
        res.appendChild(a);
      });
    }
    var mc = document.getElementById("match-count");
    mc.textContent = q ? found.length + " match" + (found.length === 1 ? "" : "es") + (found.length > REVEAL ? " (first " + REVEAL + " opened)" : "") : "";
    mc.setAttribute("data-count", String(found.length));
    if (found.length) focusNode(found[0]); else renderTree();
  }

  function focusNode(i) {
    reveal(i);
    renderTree();
    var e = elements.get(i);
    if (e) {
      document.querySelectorAll(".focus").forEach(function (x) { x.classList.remove("focus"); });
      e.classList.add("focus");
      e.scrollIntoView({block: "center"});
    }
  }

  function selectRun(idx) {
    run = DATA.runs[idx];
    open = new Set([run.root]);
    shown = new Map();
    matches.clear();
    showPath();
    header();
    legend();
    search();
  }

  document.getElementById("search").addEventListener("keydown", function (e) { if (e.key === "Enter") search(); });
  document.getElementById("search").addEventListener("search", search);
  document.getElementById("collapse").addEventListener("click", function () { open = new Set(); renderTree(); });
  document.getElementById("path").addEventListener("click", function () { showPath(); renderTree(); });
  var expandAll = document.getElementById("expand-all");
  expandAll.addEventListener("click", function () {
    if (run.nodes.length > EXPAND_ALL_LIMIT) {
      // Opening everything at once would build the whole tree in the DOM; open one more level instead.
      var next = [];
      open.forEach(function (i) { run.nodes[i].c.forEach(function (c) { if (run.nodes[c].c.length) next.push(c); }); });
      next.forEach(function (c) { open.add(c); });
    } else {
      run.nodes.forEach(function (n, i) { if (n.c.length) open.add(i); });
    }
    renderTree();
  });
  var sel = document.getElementById("run");
  DATA.runs.forEach(function (r, i) {
    var o = el("option", null, "run " + r.run + ": " + (r.info.puzzle || "") + " " + (r.info.method || "") + " \u2014 " + r.outcome);
    o.value = String(i);
    sel.appendChild(o);
  });
  sel.disabled = DATA.runs.length < 2;
  document.getElementById("run-count").textContent = DATA.runs.length + (DATA.runs.length === 1 ? " run" : " runs");
  sel.addEventListener("change", function () { selectRun(Number(sel.value)); });
  selectRun(0);
  document.body.setAttribute("data-ready", "1");
})();
