"""One executor for every batch of independent work units: here, or on a Ray cluster.

A batch (the pairs of ``tot bench``, the puzzles of ``tot export``, the problems of the planner
comparison) is a list of ``Unit``s and one module-level function; ``run`` hands each unit's
``Outcome`` back as soon as it finishes, so the caller writes it at once and a killed run keeps
every finished unit (the callers' results files are resumable).

- ``InProcess`` (``--jobs 1``, the default): the units one after another in this process, as
  before there was an executor; an exception ends the batch.
- ``LocalProcesses`` (``--jobs N``): N worker processes on this machine (spawned, so no model or
  thread is copied into them). A worker that dies (killed, out of memory) takes the units it was
  running with it: each is tried again, at most ``retries`` more times, then recorded as failed
  with the reason; the other units go on. Workers never outlive their driver: on Linux the kernel
  kills each one when the driver dies (a parent-death signal), and each also watches its parent
  (every half second, on any system). Ctrl-C (SIGINT) is the driver's alone: workers ignore it;
  the driver hands back the units that had finished, kills its workers and raises
  ``KeyboardInterrupt`` (the units still running are not outcomes, so a rerun tries them again).
- ``RayCluster`` (``--ray auto|ADDRESS``): the same units as Ray tasks on an existing cluster,
  each declaring the CPUs it needs (``Unit.cpus``) and, where it loads the embedded model, the
  custom resource ``tot_embedded_model`` that only nodes told to load it offer
  (``ray start ... --resources '{"tot_embedded_model": 1}'``). Ray retries a task whose worker
  or node died (``max_retries``); an exception raised by the unit itself is not retried.

An exception raised by a unit in a worker is its outcome's ``error`` (one line), never a crash of
the batch. Workers keep what they load (a task, a model) for their next units: see
``worker_cache``.
"""

from __future__ import annotations

import atexit
import ctypes
import multiprocessing
import os
import resource
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

__all__ = ["EMBEDDED_RESOURCE", "Executor", "InProcess", "LocalProcesses", "Outcome", "RayCluster", "Unit",
           "add_executor_args", "executor_from", "worker_cache", "worker_info", "worker_options"]

EMBEDDED_RESOURCE = "tot_embedded_model"  # a Ray node offering it may load the embedded model
RAY_INSTALL = "pip install 'verified-tot[ray]'"
DEFAULT_RETRIES = 2


@dataclass(frozen=True, slots=True)
class Unit:
    """One independent piece of work: ``fn(*args)`` of the batch. ``key`` names it in messages
    and must be unique in its batch; ``cpus`` is what it needs (a planner run: one whole core);
    ``model``: it loads the embedded model."""

    key: str
    args: tuple[Any, ...]
    cpus: float = 1.0
    model: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished unit: its value, or ``error`` (one line) when it raised or its worker died
    more often than the retries allow; ``attempts`` made (a retry after a dead worker counts)."""

    unit: Unit
    value: Any = None
    error: str | None = None
    attempts: int = 1


class Executor(Protocol):
    name: str  # e.g. "local, 2 processes" or "ray at 127.0.0.1:6379, 2 nodes, 4 CPUs"
    workers: int  # units that may run at once (at one CPU each)

    def run(self, fn: Callable[..., Any], units: Iterable[Unit]) -> Iterator[Outcome]:
        """Run ``fn(*unit.args)`` for every unit; yield each outcome as it finishes."""
        ...

    def close(self) -> None: ...


# --- what a worker keeps between units -------------------------------------------------------

_CACHE: dict[Any, Any] = {}


def worker_cache(key: Any, make: Callable[[], Any]) -> Any:
    """This worker process's object for ``key``, made once (a task, a runner with its model): a
    worker that runs many units of a batch loads things once, not once a unit."""
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


# Options that name files: a worker may run in another directory (a Ray worker always does), so
# a relative path that exists here is sent as an absolute one.
PATH_OPTIONS = ("data", "puzzle_file", "domain", "problem", "nl", "model", "cache", "adapter", "llmp_dir")


def worker_options(options: dict[str, Any], leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """A command's options as workers get them: without ``leave_out`` (what only the driver
    uses) and with the files they name made absolute."""
    out = {k: v for k, v in options.items() if k not in leave_out}
    for k in PATH_OPTIONS:
        v = out.get(k)
        if isinstance(v, str) and v and not os.path.isabs(v) and os.path.exists(v):
            out[k] = os.path.abspath(v)
    return out


def worker_info() -> dict[str, Any]:
    """Which worker ran a unit, and its peak memory so far (MB)."""
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"worker": f"{socket.gethostname()}:{os.getpid()}", "peak_mb": round(peak_kb / 1024)}


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


# --- here ----------------------------------------------------------------------------------


class InProcess:
    """The units one after another in this process; an exception ends the batch (as a plain loop)."""

    name = "this process"
    workers = 1

    def run(self, fn: Callable[..., Any], units: Iterable[Unit]) -> Iterator[Outcome]:
        for unit in units:
            yield Outcome(unit, fn(*unit.args))

    def close(self) -> None:
        pass


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """In a worker: (True, value) or (False, the exception in one line); a unit's own exception
    is its outcome, not the pool's."""
    try:
        return True, fn(*args)
    except Exception as exc:  # noqa: BLE001 - reported as the unit's error, the batch goes on
        return False, _one_line(exc)


# --- what ties a worker process to its driver -------------------------------------------------

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_POLL_S = 0.5  # a worker checks its parent this often
INTERRUPT_POLL_S = 0.1  # the driver looks for Ctrl-C this often while it waits for units


def _ignore_sigint(signum: int, frame: FrameType | None) -> None:
    """A worker's SIGINT handler: nothing (the driver decides). A Python handler, not SIG_IGN, so
    that a program the unit starts gets the default back at exec and stops on a terminal's Ctrl-C."""


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:  # re-parented: the driver is gone
            os._exit(1)


def _worker_init(parent: int, death_signal: bool) -> None:
    """Each worker, before its first unit: SIGINT is the driver's; the worker dies with the
    driver (the kernel's parent-death signal on Linux, where the driver's main thread started it,
    and a thread that watches the parent everywhere)."""
    signal.signal(signal.SIGINT, _ignore_sigint)
    if death_signal and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl here: the watching thread alone
            pass
    if os.getppid() != parent:  # the driver died before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="tot-watch-parent", daemon=True).start()


def _serve(conn: Any, parent: int, death_signal: bool) -> None:
    """A worker: ``(fn, args)`` in, ``_call``'s pair out, until ``None`` or its driver's end closes."""
    _worker_init(parent, death_signal)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        except Exception as exc:  # noqa: BLE001 - a unit that cannot be read here (its module does not import)
            conn.send((False, _one_line(exc)))
            continue
        if job is None:
            return
        try:
            result = _call(*job)
        except BaseException as exc:  # noqa: BLE001 - sys.exit() in a unit: its error, as any other exception
            result = (False, _one_line(exc))
        try:
            try:
                conn.send(result)
            except (EOFError, OSError):
                raise
            except Exception as exc:  # noqa: BLE001 - the value cannot travel back (not picklable): the unit's error
                conn.send((False, _one_line(exc)))
        except (EOFError, OSError):  # the driver is gone
            return


@dataclass(eq=False, slots=True)  # compared and hashed by identity
class _Worker:
    proc: Any  # multiprocessing's SpawnProcess
    conn: Any  # the driver's end of the worker's own pipe
    unit: Unit | None = None  # the unit it runs

    def kill(self) -> None:
        self.proc.kill()
        self.proc.join()
        self.conn.close()


_LIVE: set[_Worker] = set()  # every worker not yet stopped, killed at exit if a driver forgot close()


@atexit.register
def _kill_left_workers() -> None:
    for w in list(_LIVE):
        w.proc.kill()
    for w in list(_LIVE):
        w.kill()
    _LIVE.clear()


def _died(n: int) -> str:
    return f"its worker process died {n} time(s) (killed, or out of memory)"


class LocalProcesses:
    """``workers`` spawned processes on this machine, each with a pipe of its own to the driver
    (so a worker killed while it sends leaves nothing half-read behind for the others). A worker
    runs one unit at a time; one that dies (its pipe ends) takes its unit with it, which is tried
    again (``retries`` times at most) in a new worker; the others go on.

    A worker dies with its driver (``_worker_init``). While ``run`` waits, SIGINT (Ctrl-C) only
    marks the batch interrupted (run from the main thread): within ``INTERRUPT_POLL_S`` the units
    that finished are handed back, the workers still running units are killed and
    ``KeyboardInterrupt`` is raised; while the caller handles an outcome, SIGINT raises at once,
    as Python's own handler does. A batch left early (Ctrl-C, or the caller's exception) kills the
    workers still running its units instead of waiting for them."""

    def __init__(self, workers: int, retries: int = DEFAULT_RETRIES) -> None:
        if workers < 1:
            raise ValueError("--jobs must be at least 1")
        if retries < 0:
            raise ValueError("--unit-retries must be at least 0")
        self.workers, self.retries = workers, retries
        cores = os.cpu_count() or 1
        self.name = f"local, {workers} processes"
        if workers > cores:
            print(f"tot: --jobs {workers} runs more workers than this machine's {cores} cores: they share them, "
                  "so times measure the sharing", file=sys.stderr, flush=True)
        self._idle: list[_Worker] = []  # kept between batches: they keep what they loaded
        self._busy: dict[Any, _Worker] = {}  # by the driver's end of their pipe

    def _start(self) -> _Worker:
        ctx = multiprocessing.get_context("spawn")
        mine, theirs = ctx.Pipe(duplex=True)
        # The parent-death signal follows the thread that started the worker: asked for only when
        # that is the main thread, which lives as long as the driver.
        main = threading.current_thread() is threading.main_thread()
        proc = ctx.Process(target=_serve, args=(theirs, os.getpid(), main), name="tot-worker")
        proc.start()
        theirs.close()  # the worker holds the only writing end: its death is the end of the pipe
        w = _Worker(proc, mine)
        _LIVE.add(w)
        return w

    def _drop(self, *workers: _Worker) -> None:
        """Kill ``workers``: all signalled first, then each waited for (a process that holds a model
        takes a while to give its memory back; they do it at once)."""
        for w in workers:
            w.proc.kill()
        for w in workers:
            w.kill()
            _LIVE.discard(w)

    def run(self, fn: Callable[..., Any], units: Iterable[Unit]) -> Iterator[Outcome]:
        waiting = list(units)
        waiting.reverse()  # pop() takes them in the given order
        tries: dict[str, int] = {}
        busy = self._busy
        state = {"interrupted": False, "in_caller": False, "over": False}

        def on_sigint(signum: int, frame: FrameType | None) -> None:
            if state["in_caller"] or state["over"]:  # the caller's code runs: stopped at once, as Python does
                raise KeyboardInterrupt
            state["interrupted"] = True  # seen by the wait below, within INTERRUPT_POLL_S

        previous: Any = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if previous is None or previous is signal.SIG_IGN:  # set outside Python, or ignored: left alone
                previous = None
            else:
                signal.signal(signal.SIGINT, on_sigint)
        try:
            while waiting or busy:
                outcomes: list[Outcome] = []
                while waiting and len(busy) < self.workers and not state["interrupted"]:
                    unit = waiting.pop()
                    tries[unit.key] = n = tries.get(unit.key, 0) + 1
                    w = self._idle.pop() if self._idle else self._start()
                    try:
                        w.conn.send((fn, unit.args))
                    except (EOFError, OSError):  # it died while idle: as if it died running the unit
                        self._drop(w)
                        if n > self.retries:
                            outcomes.append(Outcome(unit, error=_died(n), attempts=n))
                        else:
                            waiting.append(unit)
                        continue
                    except Exception as exc:  # noqa: BLE001 - the unit cannot be sent (not picklable)
                        self._idle.append(w)
                        outcomes.append(Outcome(unit, error=_one_line(exc), attempts=n))
                        continue
                    w.unit = unit
                    busy[w.conn] = w
                ready: list[Any] = []
                if busy and not outcomes:
                    sentinels = {w.proc.sentinel: w for w in busy.values()}
                    while not ready and not state["interrupted"]:
                        ready = mp_wait([*busy, *sentinels], timeout=INTERRUPT_POLL_S)
                    if state["interrupted"]:  # what finished is handed back; the rest is not an outcome
                        ready = mp_wait([*busy, *sentinels], timeout=0)
                    finished = {id(w): w for w in (busy.get(r) or sentinels[r] for r in ready)}
                    for w in finished.values():
                        outcome = self._collect(w, tries, waiting, state["interrupted"])
                        if outcome is not None:
                            outcomes.append(outcome)
                for outcome in outcomes:
                    state["in_caller"] = True
                    try:
                        yield outcome
                    finally:
                        state["in_caller"] = False
                if state["interrupted"]:
                    break
            if state["interrupted"]:
                raise KeyboardInterrupt
        finally:
            state["over"] = True
            if previous is not None and threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, previous)
            left = list(busy.values())  # left early: the units still running are not waited for
            busy.clear()
            self._drop(*left)

    def _collect(self, w: _Worker, tries: dict[str, int], waiting: list[Unit], interrupted: bool) -> Outcome | None:
        """The outcome of the unit ``w`` ran, None where it has none (yet): its worker died and
        it goes back to ``waiting``, or the batch was interrupted."""
        unit = w.unit
        assert unit is not None
        del self._busy[w.conn]
        n = tries[unit.key]
        try:
            if not w.conn.poll():  # its process ended without a word
                raise EOFError
            ok, value = w.conn.recv()
        except (EOFError, OSError):  # the worker died (killed, out of memory), maybe halfway through its answer
            self._drop(w)
            if interrupted:
                return None
            if n > self.retries:
                return Outcome(unit, error=_died(n), attempts=n)
            waiting.append(unit)  # next, in a new worker
            return None
        except Exception as exc:  # noqa: BLE001 - its value came back but cannot be read here
            ok, value = False, _one_line(exc)
        w.unit = None
        self._idle.append(w)
        return Outcome(unit, value if ok else None, None if ok else value, n)

    def close(self) -> None:
        """Let the workers go: idle ones are asked to stop (and killed if they do not within 5 s);
        in the middle of a batch (the caller's exception, Ctrl-C while it handled an outcome), those
        running units are killed, not waited for."""
        self._drop(*self._busy.values())
        self._busy.clear()
        idle, self._idle = self._idle, []
        for w in idle:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in idle:
            w.proc.join(timeout=5)
            self._drop(w)


# --- a Ray cluster -------------------------------------------------------------------------


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError(f"--ray needs Ray: {RAY_INSTALL}") from None
    return ray


class RayCluster:
    """The units as Ray tasks on the cluster at ``address`` (``auto``: the one running on this
    machine). Submitted all at once; Ray places each where its CPUs (and, for the embedded model,
    ``tot_embedded_model``) are free and retries it where its worker or node died."""

    def __init__(self, address: str, retries: int = DEFAULT_RETRIES) -> None:
        if retries < 0:
            raise ValueError("--unit-retries must be at least 0")
        ray = _ray()
        self.retries = retries
        self._ray = ray
        _check_reachable(address)
        try:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, logging_level="ERROR",
                     include_dashboard=False, configure_logging=False)
        except ConnectionError as exc:
            raise ValueError(f"no Ray cluster at {address}: {str(exc).splitlines()[0] if str(exc) else ''} "
                             "(start one with `ray start --head`)") from None
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        res = ray.cluster_resources()
        self.cpus = float(res.get("CPU", 0))
        self.model_slots = float(res.get(EMBEDDED_RESOURCE, 0))
        self.workers = max(1, int(self.cpus))
        where = ray.get_runtime_context().gcs_address
        self.name = (f"ray at {where}, {len(nodes)} node(s), {self.cpus:g} CPUs"
                     + (f", {self.model_slots:g} embedded-model slot(s)" if self.model_slots else ""))

    def run(self, fn: Callable[..., Any], units: Iterable[Unit]) -> Iterator[Outcome]:
        units = list(units)
        if any(u.model for u in units) and self.model_slots <= 0:
            raise ValueError("these units load the embedded model, and no node of the cluster may: start the "
                             f"nodes that may with `ray start ... --resources '{{\"{EMBEDDED_RESOURCE}\": 1}}'` "
                             "(one per model a node can hold), or give --base-url")
        if any(u.cpus > self.cpus for u in units):
            raise ValueError(f"a unit needs more CPUs than the cluster has ({self.cpus:g})")
        return self._results(fn, units)  # checked before the first unit is sent

    def _results(self, fn: Callable[..., Any], units: list[Unit]) -> Iterator[Outcome]:
        ray = self._ray
        task = ray.remote(_call)
        refs: dict[Any, Unit] = {}
        for u in units:
            opts: dict[str, Any] = {"num_cpus": u.cpus, "max_retries": self.retries}
            if u.model:
                opts["resources"] = {EMBEDDED_RESOURCE: 1}
            refs[task.options(**opts).remote(fn, u.args)] = u
        try:
            while refs:
                done, _ = ray.wait(list(refs), num_returns=1)
                for ref in done:
                    unit = refs.pop(ref)
                    try:
                        ok, value = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:  # the unit ran; its value could not come back
                        yield Outcome(unit, error=_one_line(exc))
                        continue
                    except ray.exceptions.RayError as exc:  # its worker or node died more often than retried
                        yield Outcome(unit, error=f"lost {self.retries + 1} times on the cluster "
                                                  f"({_one_line(exc)})",
                                      attempts=self.retries + 1)
                        continue
                    yield Outcome(unit, value if ok else None, None if ok else value)
        finally:
            for ref in refs:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        self._ray.shutdown()


def _check_reachable(address: str) -> None:
    """One line, at once, where nothing listens at ``address`` (Ray itself retries for minutes).
    ``auto``: the cluster ``ray start`` last recorded on this machine, where it recorded one."""
    if address == "auto":
        recorded = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
        try:
            address = recorded.read_text(encoding="utf-8").strip()[:200]
        except OSError:
            return  # Ray says there is none, at once
        if not address:
            return
        where = f"the cluster this machine last started ({address})"
    else:
        where = address
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"bad --ray address {address!r}: use HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:PORT or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ValueError(f"no Ray cluster answers at {where}: {exc.strerror or exc} "
                         "(start one with `ray start --head`, or give its address)") from None


# --- the command line ------------------------------------------------------------------------


def add_executor_args(parser: Any) -> None:
    """``--jobs``, ``--ray``, ``--unit-retries`` for a command that runs a batch of units."""
    g = parser.add_argument_group("where the work runs")
    g.add_argument("--jobs", type=int, default=1,
                   help="worker processes on this machine (default 1: in this process)")
    g.add_argument("--ray", nargs="?", const="", default=None, metavar="auto|ADDRESS",
                   help="run the units as Ray tasks on an existing cluster (ADDRESS, or auto for the one on "
                        f"this machine; no value: $RAY_ADDRESS, else auto); needs {RAY_INSTALL}")
    g.add_argument("--unit-retries", type=int, default=DEFAULT_RETRIES,
                   help=f"times a unit is tried again when its worker dies (default {DEFAULT_RETRIES})")


def executor_from(args: Any) -> Executor:
    """The executor the command line asks for."""
    jobs, ray, retries = getattr(args, "jobs", 1), getattr(args, "ray", None), getattr(args, "unit_retries",
                                                                                        DEFAULT_RETRIES)
    if retries < 0:
        raise ValueError("--unit-retries must be at least 0")
    if ray is not None:
        if jobs != 1:
            raise ValueError("give --jobs or --ray, not both (a Ray cluster runs as many units as it has CPUs)")
        return RayCluster(ray or os.environ.get("RAY_ADDRESS") or "auto", retries)
    if jobs == 1:
        return InProcess()
    return LocalProcesses(jobs, retries)
