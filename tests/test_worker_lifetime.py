"""Worker processes never outlive their driver, and Ctrl-C stops a batch with workers at once.

Each driver runs in a session of its own (``start_new_session``), so every process it starts (the
workers, multiprocessing's resource tracker) is in its process group; its processes are found by
walking /proc, by that group and by the PIDs seen before the signal. Linux only (/proc)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from solver.tools.executor import LocalProcesses, Unit
from tests.fake_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="walks /proc (Linux)")


# --- units and a small driver (module level: spawned workers import them) ----------------------


def nap(x: int, seconds: float) -> int:
    time.sleep(seconds)
    return x


def drive(fast: int, slow: int) -> None:
    """A driver: ``fast`` units of 0.1 s, then ``slow`` of 120 s, on two workers; one line a unit
    as it finishes; exit 130 on Ctrl-C as ``tot`` does."""
    units = [Unit(str(i), (i, 0.1 if i < fast else 120.0)) for i in range(fast + slow)]
    ex = LocalProcesses(2)
    try:
        for o in ex.run(nap, units):
            print(json.dumps({"key": o.unit.key, "value": o.value, "error": o.error}), flush=True)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
    finally:
        ex.close()


def dies_while_sending(size_mb: int) -> bytes:
    """A value of ``size_mb`` MB whose worker is killed (SIGKILL, as the OOM killer or ``kill -9``
    would) once it has written half of it back to the driver: this worker's pipe writes are
    wrapped to write half of a large buffer, then kill the process."""
    from multiprocessing import connection

    real = connection.Connection._send  # type: ignore[attr-defined]

    def half_then_die(self: Any, buf: Any, *rest: Any) -> None:
        if len(buf) < 1 << 20:
            return real(self, buf, *rest)  # type: ignore[no-any-return]
        real(self, bytes(buf[: len(buf) // 2]), *rest)
        os.kill(os.getpid(), signal.SIGKILL)

    connection.Connection._send = half_then_die  # type: ignore[attr-defined]
    return b"x" * (size_mb << 20)


def drive_dying_sender() -> None:
    ex = LocalProcesses(2, retries=1)
    try:
        got = {o.unit.key: (o.value, o.error, o.attempts) for o in ex.run(nap, [Unit("a", (1, 0.0))])}
        got |= {o.unit.key: (o.value, o.error, o.attempts) for o in ex.run(dies_while_sending, [Unit("big", (64,))])}
        got |= {o.unit.key: (o.value, o.error, o.attempts) for o in ex.run(nap, [Unit("b", (2, 0.0))])}
    finally:
        ex.close()
    print(json.dumps(got))


# --- processes -------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent, process group) of a live process, None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid, pgrp = text[text.rindex(")") + 2:].split()[:3]
    return state, int(ppid), int(pgrp)


def _pids() -> Iterator[int]:
    for name in os.listdir("/proc"):
        if name.isdigit():
            yield int(name)


def descendants(root: int) -> set[int]:
    """The processes below ``root`` (children, theirs, ...), zombies left out."""
    parent = {}
    for pid in _pids():
        st = _stat(pid)
        if st is not None and st[0] != "Z":
            parent[pid] = st[1]
    found, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - found
        found |= frontier
    return found



def interrupt(proc: subprocess.Popen[str], to: str, timeout: float) -> tuple[str, str, float]:
    """SIGINT to the driver alone or to its whole process group (what a terminal's Ctrl-C sends);
    (stdout, stderr, seconds from the signal to the driver's exit)."""
    start = time.monotonic()
    if to == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=timeout)
    return out, err, time.monotonic() - start

def alive(pids: set[int], group: int) -> set[int]:
    """Of ``pids`` and of process group ``group``, those still running (a zombie is not: it has
    ended and holds no memory; it only waits for its new parent to reap it)."""
    out = set()
    for pid in set(_pids()) | pids:
        st = _stat(pid)
        if st is not None and st[0] != "Z" and (pid in pids or st[2] == group):
            out.add(pid)
    return out


def cleanup(group: int, pids: set[int]) -> None:
    """Whatever a failed test left running (old code: the workers would live on)."""
    for pid in alive(pids, group):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_for(cond: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not cond():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def gone_within(group: int, pids: set[int], seconds: float) -> tuple[float, set[int]]:
    """Seconds until no process of ``pids`` or of ``group`` runs (or ``seconds``), and those left."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        left = alive(pids, group)
        if not left:
            return time.monotonic() - start, set()
        time.sleep(0.05)
    return time.monotonic() - start, alive(pids, group)


def driver(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def script_driver(fast: int, slow: int) -> subprocess.Popen[str]:
    return driver([sys.executable, "-c", f"from tests.test_worker_lifetime import drive; drive({fast}, {slow})"])


def read_lines(proc: subprocess.Popen[str], n: int, seconds: float) -> list[str]:
    """The first ``n`` lines the driver prints."""
    assert proc.stdout is not None
    got: list[str] = []
    deadline = time.monotonic() + seconds
    while len(got) < n and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        got.append(line)
    assert len(got) == n, f"the driver printed {got} then stopped"
    return got


# --- SIGKILL of the driver ---------------------------------------------------------------------------


def test_no_process_of_a_killed_driver_is_left_within_5_seconds() -> None:
    proc = script_driver(fast=3, slow=4)
    pids: set[int] = set()
    try:
        read_lines(proc, 3, 60)  # the fast units are done: both workers now sleep in slow ones
        pids = descendants(proc.pid)
        assert len(pids) >= 3, pids  # two workers and the resource tracker
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seconds, left = gone_within(proc.pid, pids, 5)
        print(f"\nscript driver: {len(pids)} processes, {len(left)} left {seconds:.2f} s after SIGKILL")
        assert not left, f"{len(left)} process(es) of the killed driver still run after 5 s"
    finally:
        proc.kill()
        cleanup(proc.pid, pids)
        proc.communicate()


def _slow_server() -> FakeOpenAIServer:
    # 10 requests are the workers' probes and warm-ups (io through a server without grammars): 12 lets a
    # few pairs finish, then every request hangs (a unit that would take minutes)
    return FakeOpenAIServer(["ok"], stall_after=12, hang=120)


def _bench(srv: FakeOpenAIServer, out: Path) -> list[str]:
    return [sys.executable, "-m", "solver.tools.cli", "bench", "game24", "--range", "1-10", "--methods", "io",
            "--no-plots", "--base-url", srv.url, "--model", "fake", "--out", str(out), "--jobs", "2"]


def _rows(out: Path) -> list[dict]:
    path = out / "results.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_tot_bench_killed_with_sigkill_leaves_no_worker(tmp_path: Path) -> None:
    out = tmp_path / "b"
    with _slow_server() as srv:
        proc = driver(_bench(srv, out))
        pids: set[int] = set()
        try:
            wait_for(lambda: srv.busy == 2 and _rows(out), 120, "both workers in a hanging request")
            pids = descendants(proc.pid)
            assert len(pids) >= 3, pids
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            seconds, left = gone_within(proc.pid, pids, 5)
            print(f"\ntot bench --jobs 2: {len(pids)} processes, {len(left)} left {seconds:.2f} s after SIGKILL")
            assert not left, f"{len(left)} process(es) of the killed driver still run after 5 s"
        finally:
            proc.kill()
            cleanup(proc.pid, pids)
            proc.communicate()


# --- Ctrl-C -----------------------------------------------------------------------------------------

EXIT_WITHIN_S = 2.0  # the target; measured: see docs/robustness.md


@pytest.mark.parametrize("to", ["driver", "group"])  # kill -INT PID, or a terminal's Ctrl-C (the whole group)
def test_ctrl_c_stops_a_batch_at_once_and_hands_back_what_finished(to: str) -> None:
    proc = script_driver(fast=3, slow=4)
    pids: set[int] = set()
    try:
        finished = read_lines(proc, 3, 60)
        pids = descendants(proc.pid)
        time.sleep(0.3)  # the slow units are running
        rest, err, seconds = interrupt(proc, to, 60)
        print(f"\nscript driver, SIGINT to the {to}: exit {proc.returncode} after {seconds:.2f} s")
        assert proc.returncode == 130, err
        assert seconds < EXIT_WITHIN_S
        outcomes = [json.loads(x) for x in finished + rest.splitlines()]
        assert sorted(o["key"] for o in outcomes) == ["0", "1", "2"]  # no slow unit, not as an error either
        assert all(o["error"] is None for o in outcomes)
        assert not gone_within(proc.pid, pids, 2)[1]
    finally:
        proc.kill()
        cleanup(proc.pid, pids)
        proc.communicate()


@pytest.mark.parametrize("to", ["driver", "group"])
def test_ctrl_c_on_tot_bench_with_workers_exits_130_at_once_and_keeps_every_finished_row(tmp_path: Path,
                                                                                        to: str) -> None:
    out = tmp_path / "b"
    with _slow_server() as srv:
        proc = driver(_bench(srv, out))
        pids: set[int] = set()
        try:
            wait_for(lambda: srv.busy == 2 and _rows(out), 120, "both workers in a hanging request")
            pids = descendants(proc.pid)
            before = _rows(out)
            _, err, seconds = interrupt(proc, to, 120)
            print(f"\ntot bench --jobs 2, SIGINT to the {to}: exit {proc.returncode} after {seconds:.2f} s, "
                  f"{len(before)} row(s) kept")
            assert proc.returncode == 130, err
            assert seconds < EXIT_WITHIN_S
            after = _rows(out)
            assert after == before and all(r["status"] == "done" for r in after)  # no KeyboardInterrupt rows
            assert not gone_within(proc.pid, pids, 2)[1]
        finally:
            proc.kill()
            cleanup(proc.pid, pids)
            proc.communicate()
    with FakeOpenAIServer(["ok"]) as srv:  # a rerun does the rest, and only the rest
        again = subprocess.run(_bench(srv, out), cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        asked = sum(1 for r in srv.requests if r.body and "Input:" in str(r.body.get("prompt"))
                    and r.body.get("max_tokens") != 1)
    rows = _rows(out)
    assert sorted(r["id"] for r in rows) == sorted(str(i) for i in range(1, 11))  # each pair once
    assert asked == 10 - len(before)


def test_a_worker_killed_halfway_through_sending_its_value_is_a_dead_worker_not_a_hung_driver() -> None:
    # a pool whose workers share one result pipe (concurrent.futures) hangs here for good: its reader
    # waits for the rest of the message, and the pipe stays open in the driver and the other workers
    proc = driver([sys.executable, "-c", "from tests.test_worker_lifetime import drive_dying_sender; "
                                         "drive_dying_sender()"])
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        cleanup(proc.pid, set())
        proc.communicate()
    assert proc.returncode == 0, err
    got = json.loads(out)
    assert got["a"] == [1, None, 1] and got["b"] == [2, None, 1]
    assert got["big"] == [None, "its worker process died 2 time(s) (killed, or out of memory)", 2]


@pytest.mark.parametrize("to", ["driver", "group"])
def test_ctrl_c_on_tot_export_with_workers_exits_130_at_once(tmp_path: Path, to: str) -> None:
    proc = driver([sys.executable, "-m", "solver.tools.cli", "export", "game24", "--out", str(tmp_path / "e"),
                   "--jobs", "2"])
    pids: set[int] = set()
    try:
        wait_for(lambda: len(descendants(proc.pid)) >= 3, 60, "two workers")
        time.sleep(3)  # labelling: units come and go, many values a second on their way back
        pids = descendants(proc.pid)
        _, err, seconds = interrupt(proc, to, 120)
        print(f"\ntot export --jobs 2, SIGINT to the {to}: exit {proc.returncode} after {seconds:.2f} s")
        assert proc.returncode == 130, err
        assert seconds < EXIT_WITHIN_S
        assert not gone_within(proc.pid, pids, 2)[1]
    finally:
        proc.kill()
        cleanup(proc.pid, pids)
        proc.communicate()


# --- leaving a batch early ---------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["batch closed", "executor closed"])
def test_a_batch_left_early_does_not_wait_for_the_units_still_running(how: str) -> None:
    ex = LocalProcesses(2)
    try:
        outcomes = ex.run(nap, [Unit("fast", (0, 0.1)), Unit("slow", (1, 120.0)), Unit("later", (2, 120.0))])
        first = next(outcomes)
        start = time.monotonic()
        if how == "batch closed":
            outcomes.close()  # the caller's loop left (a generator closed)
        ex.close()  # as bench and export do when the caller raises, the batch still open
        seconds = time.monotonic() - start
        outcomes.close()
        again = [o.value for o in ex.run(nap, [Unit("next", (3, 0.0))])]  # a new pool for the next batch
    finally:
        ex.close()
    assert first.unit.key == "fast" and first.value == 0
    assert seconds < 5
    assert again == [3]
