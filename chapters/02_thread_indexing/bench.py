"""Warp divergence on the GPU: the same work, branched three ways (src/record.cu, kernel `divergence`).

  uniform         every thread takes the same loop
  odd_even_warps  half the warps take one loop, half the other: no warp is split, so no slowdown expected
  odd_even_lanes  odd and even lanes of every warp disagree: each warp runs both loops one after the other

Goals: odd_even_lanes ~2x the uniform time (>= 1.7x); odd_even_warps within 15% of uniform.

    python bench.py --out DIR        (make bench)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from course import gpu_skip_reason
from course.report import Goals, Table
from course.timing import time_cuda


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
    table = Table(f"warp divergence, n = {n:,} threads, 256 per block", ["iters", "mode", "time_us", "vs uniform"])
    ratios = {}
    for iters in (64, 256):
        base = None
        for mode in ("uniform", "odd_even_warps", "odd_even_lanes"):
            timing = time_cuda(lambda mode=mode, iters=iters: ti.divergence(out, mode, iters), warmup=5, repeat=30)
            base = base or timing.median_us
            ratios[(iters, mode)] = timing.median_us / base
            table.add(iters=iters, mode=mode, time_us=timing.median_us, **{"vs uniform": timing.median_us / base})
    table.save(args.out / "divergence")

    goals = Goals()
    for iters in (64, 256):
        lanes, warps = ratios[(iters, "odd_even_lanes")], ratios[(iters, "odd_even_warps")]
        goals.check(f"iters={iters}: odd_even_lanes / uniform (both branches run)", lanes, ">=", 1.7)
        goals.check(f"iters={iters}: odd_even_warps / uniform (no warp splits)", warps, "<=", 1.15)
    goals.report(args.out / "goals.txt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
