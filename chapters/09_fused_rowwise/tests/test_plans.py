"""The planner's promises, on any machine: build/plan_check (tests/plan_check.cu, built by `make build`) runs the
kernels' planner (shape_plan, host code) over every op's pass, version, dtype, row layout and a grid of tunes, rows of
0 to 3 million elements, and fails if a plan leaves part of a row to no thread, divides by zero on an empty row, or
walks a group through odd rows at two 16-byte phases."""

from __future__ import annotations

import subprocess
from pathlib import Path

CHECK = Path(__file__).resolve().parents[1] / "build" / "plan_check"


def test_every_plan_covers_its_row():
    assert CHECK.exists(), f"{CHECK} is missing: `make build` in this chapter compiles it"
    done = subprocess.run([str(CHECK)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
    assert "0 break a promise" in done.stdout
