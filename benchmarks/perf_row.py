"""One row of the performance table (``benchmarks/perf.py``), and the table printer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    section: str
    measure: str
    value: float | int | str
    unit: str = ""
    goal: str = ""
    note: str = ""


def print_table(rows: list[Row]) -> None:
    w = max(len(r.measure) for r in rows)
    head = f"{'section':12} {'measure':{w}} {'value':>12} {'unit':12} {'goal':10} note"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r.section:12} {r.measure:{w}} {str(r.value):>12} {r.unit:12} {r.goal:10} {r.note}")
