"""benchmarks/perf.py after its split into one module per section: the entry still runs a
section and prints its rows (no timing is asserted here; speed targets live in the benchmark)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_perf_entry_runs_a_section_and_refuses_unknown_ones():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "perf.py"), "--only", "oracle", "--json"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert [r["section"] for r in rows] == ["machine", "oracle", "oracle", "oracle", "oracle"]
    # Both oracles agree on the 1,820 multisets of 1..13; 1,362 reach 24 (the rows of the paper's 24.csv).
    assert rows[1]["value"] == "1820 / 1362" and rows[1]["note"] == "fast and exhaustive agree"
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "perf.py"), "--only", "nosuch"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("unknown section 'nosuch'")
