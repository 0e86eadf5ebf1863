"""The compiled planner backend: Fast Downward's binaries from the ``up-fast-downward`` wheel
(``pip install 'verified-tot[planners]'``), called on PDDL files in a temporary folder.

The driver script runs as a child process with the time limit as its wall-clock budget (and as
Fast Downward's own ``--overall-time-limit``); its output goes to a file whose tail is read
(bounded), and its plan file is read with the project's strict plan grammar. Optimal mode is
A* with LM-cut (the same search and heuristic as the pure-Python backend, so the same plan
lengths); satisficing mode is the ``lama-first`` alias. Exit codes say what was proved: a plan,
no plan (a complete search), or nothing (time, memory, or a search that gives no proof)."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verifiers.pddl_model import Problem
from verifiers.pddl_write import write_domain, write_problem
from verifiers.planner_pyperplan import Mode, Raw
from verifiers.planning import State, parse_plan

__all__ = ["CONFIGS", "driver", "search"]

# (driver options before the files, search options after them)
CONFIGS: dict[Mode, tuple[list[str], list[str]]] = {"optimal": ([], ["--search", "astar(lmcut())"]),
                                                    "satisficing": (["--alias", "lama-first"], [])}
MAX_LOG_TAIL = 65_536
MAX_PLAN_FILE = 2_000_000
# Exit codes of Fast Downward's driver (driver/returncodes.py).
_SOLVED = {0}
_UNSOLVABLE = {10, 11}  # proved by the translator, or by a complete search
_UNKNOWN = {1, 2, 3, 12, 13, 20, 21, 22, 23, 24}  # incomplete search, out of time or memory


def driver() -> Path | None:
    """The wheel's ``fast-downward.py``, or None when the wheel is not installed. Found without
    importing the wheel's package (it imports unified-planning, which this project does not need)."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        path = Path(loc) / "downward" / "fast-downward.py"
        if path.is_file():
            return path
    return None


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - MAX_LOG_TAIL))
            return fh.read(MAX_LOG_TAIL).decode("utf-8", "replace")
    except OSError:
        return ""


def _group_peak_kb(pgid: int) -> int | None:
    """The largest peak resident memory (VmHWM) among the live processes of a process group, read
    from /proc just before they are killed (Linux; None where /proc says nothing)."""
    peak = None
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read(4096).rsplit(b")", 1)[1].split()
            if int(fields[2]) != pgid:  # after the name: state, ppid, pgrp
                continue
            with open(f"/proc/{pid}/status", "rb") as fh:
                for line in fh.read(16384).splitlines():
                    if line.startswith(b"VmHWM:"):
                        kb = int(line.split()[1])
                        peak = kb if peak is None else max(peak, kb)
        except (OSError, IndexError, ValueError):
            continue
    return peak


def _log_peak_kb(text: str) -> int | None:
    """The translator's and the search's peak memory, as Fast Downward logs them."""
    found = [int(k) for k in re.findall(r"[Pp]eak memory: (\d+) KB", text)]
    return max(found) if found else None


def search(problem: Problem, state: State, time_limit: float, mode: Mode) -> Raw:
    """Run Fast Downward on the problem from ``state`` within ``time_limit`` wall-clock seconds."""
    script = driver()
    if script is None:
        raise RuntimeError("Fast Downward is not installed (pip install 'verified-tot[planners]')")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tot-fd-") as tmp:
        folder = Path(tmp)
        (folder / "domain.pddl").write_text(write_domain(problem, costs=True), encoding="utf-8")
        (folder / "problem.pddl").write_text(write_problem(problem, state, costs=True), encoding="utf-8")
        plan_file, log = folder / "plan", folder / "log"
        cmd = [sys.executable, str(script), "--plan-file", str(plan_file),
               "--overall-time-limit", f"{max(1, math.ceil(time_limit))}s", *CONFIGS[mode][0],
               str(folder / "domain.pddl"), str(folder / "problem.pddl"), *CONFIGS[mode][1]]
        with open(log, "wb") as out:
            # Its own session, so that a timeout ends the driver and the translator or search it started.
            proc = subprocess.Popen(cmd, cwd=folder, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                code = proc.wait(timeout=max(0.0, time_limit - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                peak = _group_peak_kb(proc.pid)
                if hasattr(os, "killpg"):
                    os.killpg(proc.pid, signal.SIGKILL)
                else:  # no process groups (Windows): the driver only
                    proc.kill()
                proc.wait()
                return Raw("unknown", None, 0, "the time limit ran out", peak)
        text = _tail(log)
        m = re.findall(r"Expanded (\d+) state\(s\)", text)
        expanded = int(m[-1]) if m else 0
        peak = _log_peak_kb(text)
        if code in _SOLVED and plan_file.is_file():
            if plan_file.stat().st_size > MAX_PLAN_FILE:
                return Raw("unknown", None, expanded, "Fast Downward's plan file is too large to read")
            try:
                steps = parse_plan(plan_file.read_text(encoding="utf-8"))
            except ValueError as e:
                return Raw("unknown", None, expanded, f"Fast Downward's plan does not parse: {e}")
            return Raw("solved", tuple(steps), expanded, "", peak)
        if code in _UNSOLVABLE:
            return Raw("unsolvable", None, expanded, "Fast Downward proved there is no plan", peak)
        if code in _UNKNOWN:
            return Raw("unknown", None, expanded, f"Fast Downward stopped without a proof (exit code {code})", peak)
        last = [ln for ln in text.splitlines() if ln.strip()][-1:] or ["no output"]
        raise RuntimeError(f"Fast Downward failed (exit code {code}): {last[0][:200]}")
