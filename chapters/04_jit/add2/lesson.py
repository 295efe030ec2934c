"""The timing lesson: one kernel timed three ways, side by side (used by the demo and the notebook).

1. time.time() around the call, no synchronize: measures only the launch — the GPU is still working when the
   clock stops (the seed's first attempt; absurd bandwidth follows);
2. time.time() with torch.cuda.synchronize() before and after: the real time plus the host clock's and the
   synchronize's overhead, and noisy (the seed's show_time, which also averaged instead of taking a median);
3. CUDA events recorded on the stream around the launch, after warm-up, median of repeats
   (course.timing.time_cuda): what the course's benchmarks use.
"""

from __future__ import annotations

import statistics
import time

import torch
from course.report import Table
from course.timing import bandwidth_gbs, time_cuda


def timing_lesson(n: int = 1 << 26, dtype: torch.dtype = torch.float32, repeats: int = 20, fn=None) -> Table:
    """Time c = a + b (add2.add2 unless fn is given) on n elements three ways; prints and returns the table."""
    import add2

    a = torch.randn(n, device="cuda", dtype=dtype)
    b = torch.randn(n, device="cuda", dtype=dtype)
    fn = fn or (lambda: add2.add2(a, b))
    bytes_moved = 3 * n * a.element_size()  # read a and b, write c
    for _ in range(3):  # warm-up: the first calls pay for module loading and the allocator's first blocks
        fn()
    torch.cuda.synchronize()

    # 1. no synchronize: the clock stops as soon as the launch is queued
    no_sync = []
    for _ in range(repeats):
        start = time.time()
        fn()
        no_sync.append((time.time() - start) * 1e3)
        torch.cuda.synchronize()  # (outside the timed region, so the next sample starts from an idle GPU)

    # 2. synchronize before and after
    with_sync = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.time()
        fn()
        torch.cuda.synchronize()
        with_sync.append((time.time() - start) * 1e3)

    # 3. CUDA events, warm-up, median
    events = time_cuda(fn, warmup=5, repeat=repeats)

    table = Table(
        f"one add2 call on n = {n:,} {str(dtype).removeprefix('torch.')} elements, timed three ways",
        ["method", "median_us", "min_us", "max_us", "GB/s"],
    )
    for method, samples in [("time.time(), no sync", no_sync), ("time.time() + synchronize", with_sync)]:
        median = statistics.median(samples)
        table.add(
            method=method,
            median_us=median * 1e3,
            min_us=min(samples) * 1e3,
            max_us=max(samples) * 1e3,
            **{"GB/s": bandwidth_gbs(bytes_moved, median)},
        )
    table.add(
        method="CUDA events (time_cuda)",
        median_us=events.median_ms * 1e3,
        min_us=events.min_ms * 1e3,
        max_us=events.max_ms * 1e3,
        **{"GB/s": bandwidth_gbs(bytes_moved, events.median_ms)},
    )
    return table
