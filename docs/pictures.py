"""Regenerate the site's pictures with the project's own commands:

    python docs/pictures.py                # docs/assets/: calibration.png, search-tree.svg (replayed, no model)
    python docs/pictures.py --out DIR      # somewhere else
    python docs/pictures.py --record       # run the embedded model again and re-record the replay

The search tree is `tot show --svg --oracle` of a BFS with a beam of 2 over Game of 24's
"4 9 10 13", the embedded model ranking the states (`tot solve game24 "4 9 10 13" --method tot-bfs
--breadth 2 --adapter off`); magenta marks the solvable states the beam lost. The calibration plot
is `tot audit --markdown`'s reliability plot of a trace of the default Game-of-24 search
(`tot solve game24 --data --range 901-903 --adapter off`): each judgement class of the embedded
model against the share of states the exact oracle calls solvable. Both show the model as it is,
without the adapter trained on exact labels (docs/training.md), as they were recorded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPLAY = ROOT / "tests" / "data" / "docs_replay.sqlite"


def tot(*args: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run([sys.executable, "-m", "solver.tools.cli", *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="regenerate the documentation's pictures")
    parser.add_argument("--out", default=str(ROOT / "docs" / "assets"), help="where the pictures go")
    parser.add_argument("--record", action="store_true", help="run the embedded model and re-record the replay")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        tot("solve", "game24", "--data", "--range", "901-903", "--adapter", "off", "--trace", "pictures.jsonl",
            "--json", "--cache", str(REPLAY), "--cache-mode", "record" if args.record else "replay", cwd=work)
        tot("audit", "pictures.jsonl", "--markdown", "audit.md", cwd=work)
        tot("solve", "game24", "4 9 10 13", "--method", "tot-bfs", "--breadth", "2", "--adapter", "off",
            "--trace", "tree.jsonl",
            "--cache", str(REPLAY), "--cache-mode", "record" if args.record else "replay", cwd=work)
        tot("show", "tree.jsonl", "--svg", "--oracle", "-o", str(out / "search-tree.svg"), cwd=work)
        plots = sorted(work.glob("audit_reliability_*.png"))
        if len(plots) != 1:
            print(f"pictures.py: expected one reliability plot, found {[p.name for p in plots]}", file=sys.stderr)
            return 1
        shutil.copyfile(plots[0], out / "calibration.png")
    print(out / "calibration.png", out / "search-tree.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
