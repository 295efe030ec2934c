"""Warp divergence on the GPU: the same work, branched three ways (src/record.cu, kernel `divergence`).

  uniform         every thread takes the same loop
  odd_even_warps  half the warps take one loop, half the other: no warp is split, so no slowdown expected
  odd_even_lanes  odd and even lanes of every warp disagree: each warp runs both loops one after the other

Goals: odd_even_lanes ~2x the uniform time (>= 1.7x); odd_even_warps within 15% of uniform; at 256 and 1024 loop
iterations, each over interleaved rounds (min / median / max printed). At 64 iterations (a row, no goal) writing the
64 MiB result costs about as much as the loops, so the ratio is small and moved from 1.71 to 1.09 between two runs
of the same code: an effect is measured where it is large.

    python bench.py --out DIR        (make bench)
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import torch
from course import gpu_skip_reason
from course.report import Goals, Table
from course.timing import interleaved_rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    args = parser.parse_args()
    reason = gpu_skip_reason()
    if reason:
        print(f"bench.py needs a GPU: {reason}. Nothing measured.")
        return 0

    import thread_index as ti

    n = 1 << 24
    out = torch.empty(n, device="cuda")
    columns = ["iters", "mode", "time_us", "min_us", "max_us", "vs uniform"]
    table = Table(f"warp divergence, n = {n:,} threads, 256 per block (median of 7 rounds)", columns)
    ratios = {}
    modes = ("uniform", "odd_even_warps", "odd_even_lanes")
    for iters in (64, 256, 1024):
        calls = {mode: lambda mode=mode, iters=iters: ti.divergence(out, mode, iters) for mode in modes}
        times = interleaved_rounds(calls, rounds=7, warmup=5, repeat=20)
        base = times["uniform"]
        for mode in modes:
            ratios[(iters, mode)] = [t / u for t, u in zip(times[mode], base)]
            median_us = statistics.median(times[mode]) * 1e3
            table.add(
                iters=iters,
                mode=mode,
                time_us=median_us,
                min_us=min(times[mode]) * 1e3,
                max_us=max(times[mode]) * 1e3,
                **{"vs uniform": statistics.median(ratios[(iters, mode)])},
            )
    table.save(args.out / "divergence")

    goals = Goals()
    for iters in (256, 1024):
        lanes, warps = ratios[(iters, "odd_even_lanes")], ratios[(iters, "odd_even_warps")]
        goals.check_rounds(f"iters={iters}: odd_even_lanes / uniform (both branches run)", lanes, ">=", 1.7)
        goals.check_rounds(f"iters={iters}: odd_even_warps / uniform (no warp splits)", warps, "<=", 1.15)
    goals.note("iters=64: a table row, no goal (the result's write costs as much as the loops; see the docstring)")
    goals.report(args.out / "goals.txt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
