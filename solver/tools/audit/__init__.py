"""``tot audit``: how often did the evaluator cut a state that could still be solved?

Every scored state of a trace is rebuilt with the task's ``restore`` (solver/task.py,
``Restorable``) and judged by the task's exact ``oracle``. Figures per group of runs (one trace
file, one task, one method/generator/evaluator/model) and per depth:

- confusion of the evaluator's judgement class against the exact truth, and calibration
  P(solvable | class);
- false-prune rate = solvable states cut by a judgement / solvable states evaluated (the one
  definition in solver/tools/truth.py, shared with ``tot show``), split into ``pruned`` (judged below
  the pruning threshold) and ``beam`` (lost to the beam; ``tie`` counts those whose score equalled
  the last kept one, so order decided); ``other`` cuts (depth or child limits) are reported apart;
- puzzles whose root was solvable but that lost every solvable state, and at which step;
- every rate with its 95% Wilson interval;
- with ``--counterfactual``, replays of the recorded candidates (solver/tools/counterfactual.py) and,
  with ``--markdown``, reliability and false-prune-by-depth plots (``plots``).

Duplicates are cut before they are scored, so they are not evaluated states. A state reached
through a step the exact gate refuses (``invalid`` or ``unchecked`` verdicts, as in imported
logs of searches without a gate) is counted as ``invalid``, apart from solvable and unsolvable.

The modules, by job: ``runs`` (a trace's events as runs of node records), ``judgements`` (an
evaluator's judgement as a class), ``figures`` (ground truth, tallies and the report object),
``render`` (tables and Markdown), ``plots`` (PNG plots), ``logs`` (official ToT logs, which are not
our traces), ``command`` (``tot audit``) and ``false_prunes`` (the audit as a library call:
``audit_trace(task, trace)``).
"""

from solver.tools.audit.command import add_parser as add_parser
from solver.tools.audit.command import run as run
from solver.tools.audit.false_prunes import (
    ClassFigures,
    DepthFigures,
    GroupAudit,
    LostPuzzle,
    TraceAudit,
    audit_trace,
)

# add_parser and run are the ``tot audit`` command (solver.tools.cli finds them here), not API.
__all__ = ["audit_trace", "TraceAudit", "GroupAudit", "DepthFigures", "ClassFigures", "LostPuzzle"]
