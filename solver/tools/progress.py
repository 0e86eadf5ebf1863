"""Progress of a long run (``tot bench``, ``tot solve --range``) on stderr.

On a terminal: a live bar with done/total, solved so far, model calls, tokens, cost, rate and ETA.
Otherwise (a log file, CI): the same figures as a plain line after each finished item, at most
one every ``every`` seconds (and always the last). With ``--json`` nothing is shown.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class RunProgress:
    def __init__(self, total: int, label: str, *, done: int = 0, solved: int = 0, quiet: bool = False,
                 stream: IO[str] | None = None, every: float = 5.0, terminal: bool | None = None,
                 transient: bool = False) -> None:
        self.total, self.label = total, label
        self.done, self.solved = done, solved
        self.calls = self.tokens = self.errors = 0
        self.cost: float | None = None
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.every = every
        self.transient = transient  # the bar vanishes on leaving the ``with`` (results print between)
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self._start_done = done
        self._t0 = time.monotonic()
        self._last_line = float("-inf")
        self._progress: Any = None
        self._bar: Any = None

    # -- figures ----------------------------------------------------------------------------
    def rate(self) -> float:
        """Items finished per minute in this run."""
        elapsed = time.monotonic() - self._t0
        return 60.0 * (self.done - self._start_done) / elapsed if elapsed > 0 else 0.0

    def eta(self) -> float | None:
        per_min = self.rate()
        return None if per_min <= 0 else 60.0 * (self.total - self.done) / per_min

    def figures(self) -> str:
        cost = f", ${self.cost:.4f}" if self.cost is not None else ""
        errors = f", errored {self.errors}" if self.errors else ""
        eta = self.eta()
        return (f"solved {self.solved}, calls {self.calls}, tokens {self.tokens}{cost}{errors}, "
                f"{self.rate():.1f}/min, ETA {'?' if eta is None else _duration(eta)}")

    def line(self) -> str:
        return f"{self.label}: {self.done}/{self.total} done, {self.figures()}"

    # -- display ----------------------------------------------------------------------------
    def __enter__(self) -> RunProgress:
        if self.quiet or not self.terminal:
            return self
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, force_terminal=True)
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[figures]}"), TimeElapsedColumn(), console=console,
                                  transient=self.transient, redirect_stdout=False, redirect_stderr=False)
        self._progress.__enter__()
        self._bar = self._progress.add_task(self.label, total=self.total, completed=self.done,
                                            figures=self.figures())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
            self._progress = None

    def working_on(self, what: str) -> None:
        if self._progress is not None:
            self._progress.update(self._bar, description=f"{self.label} {what}")

    def finished(self, row: dict[str, Any], error: bool = False) -> None:
        """One item done; ``row`` is its summary (verified, calls, tokens, cost)."""
        self.done += 1
        self.solved += bool(row.get("verified"))
        self.calls += int(row.get("calls") or 0)
        self.tokens += int(row.get("tokens") or 0)
        if isinstance(row.get("cost"), (int, float)):
            self.cost = (self.cost or 0.0) + float(row["cost"])
        self.errors += bool(error)
        if self.quiet:
            return
        if self._progress is not None:
            self._progress.update(self._bar, completed=self.done, figures=self.figures())
            return
        now = time.monotonic()
        if now - self._last_line >= self.every or self.done >= self.total:
            self._last_line = now
            print(self.line(), file=self.stream, flush=True)
