"""`make run` as a student starts it: torchrun with one process per GPU, or 2 CPU processes with Gloo; a failing
rank stops the whole run quickly and leaves no process behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import torch

CHAPTER = Path(__file__).resolve().parents[1]


def run_demo(*extra: str, timeout: float = 240) -> subprocess.CompletedProcess:
    path = os.pathsep.join(
        filter(None, [str(CHAPTER), str(CHAPTER.parents[1] / "common"), os.environ.get("PYTHONPATH")])
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}  # as `make run` sets it
    return subprocess.run(
        [sys.executable, "-m", "multigpu", *extra],
        cwd=CHAPTER,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def demo_processes() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if "multigpu.demo" in line and "ps -eo" not in line]


def test_make_run_says_what_it_chose_and_agrees_with_one_device():
    result = run_demo()
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "one process per GPU, NCCL" in out or "2 CPU processes, Gloo" in out
    assert "sharded_norm_diff:" in out and "relative error" in out
    assert "within rtol" in out and "OUTSIDE" not in out


def test_a_failing_rank_stops_the_run_and_leaves_nothing():
    start = time.monotonic()
    last = (torch.cuda.device_count() or 2) - 1  # make run starts one process per GPU, or 2 without a GPU
    result = run_demo("--fail-rank", str(last), timeout=120)
    assert result.returncode != 0
    assert f"rank {last} fails on purpose" in result.stdout + result.stderr
    assert time.monotonic() - start < 60, "torchrun should stop the other rank, not wait out its 60 s timeout"
    time.sleep(0.5)
    assert demo_processes() == []
