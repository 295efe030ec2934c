"""Honest timing: CUDA events after warm-up for GPU work, a monotonic clock for CPU work, median of repeats.

    t = time_cuda(lambda: op(x, b))            # Timing(median_ms=..., ...)
    bandwidth_gbs(bytes_moved, t.median_ms)    # effective GB/s
    t = time_cuda(step, host_ahead=True)       # the GPU's time alone, and the host's per call (t.host_ms)

GPU launches return before the work is done, so a host clock around a launch measures only the launch. CUDA events
are recorded on the stream and timestamp the work itself. Warm-up keeps one-off costs (module loading, the caching
allocator's first allocations, cuBLAS handles, JIT compilation) out of the numbers.

Events time the work between them, gaps included: where the host needs about as long to issue a call as the GPU
needs to run it (an autograd step of a few hundred microseconds: its engine alone costs the host ~125 µs), the GPU
waits for the host between kernels and the events time the host's pace. host_ahead=True queues the timed calls
behind GPU work that lasts longer than the host takes to issue them all, so the GPU runs them back to back, as in a
training step whose host is ahead; it also reports the host's time per call, to show where a call alone would be
host-bound.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    repeats: int
    host_ms: float | None = None  # host_ahead: the host's time to issue one call (its median over the repeats)

    @property
    def median_us(self) -> float:
        return self.median_ms * 1e3


def _summarise(samples_ms: list[float], host_ms: float | None = None) -> Timing:
    return Timing(statistics.median(samples_ms), min(samples_ms), max(samples_ms), len(samples_ms), host_ms)


_l2_flush_buffer = None


def _flush_l2() -> None:
    """Overwrite a buffer larger than any current GPU's L2 so that the next kernel reads from device memory."""
    _flush_buffer().zero_()


def _flush_buffer():
    global _l2_flush_buffer
    import torch

    if _l2_flush_buffer is None:
        _l2_flush_buffer = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    return _l2_flush_buffer


_hold_matrices = None  # what _hold_gpu multiplies and where it writes, and the time of one product (measured once)
_hold_launch_ms = None
HOLD_N = 4096  # float32 4096 x 4096 @ 4096 x 4096: ~137 GFLOP, about 2-3 ms on an H100 (under 1 ms with TF32)


def _hold_gpu(ms: float) -> None:
    """Queue at least `ms` of GPU work (whole products) on the current stream and return at once.

    The work is a few long launches (float32 matrix products of HOLD_N x HOLD_N, milliseconds each), not many short
    ones: the host issues each launch in microseconds, so even a slow host queues the whole hold long before the GPU
    finishes its first product. (A hold of 230 short writes, 0.09 ms each, once never filled the queue: the host,
    slow at that moment, issued each write more slowly than the GPU ran it.)"""
    global _hold_matrices, _hold_launch_ms
    import torch

    if _hold_matrices is None:
        factor = torch.full((HOLD_N, HOLD_N), 1.0 / HOLD_N, device="cuda")
        _hold_matrices = factor, torch.empty_like(factor)
    factor, product = _hold_matrices
    if _hold_launch_ms is None:
        # The first product of a process also loads the kernel and picks cuBLAS's algorithm (milliseconds): timed,
        # it would make every later hold a fraction of what was asked. So one product first, then the timed one.
        torch.mm(factor, factor, out=product)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.mm(factor, factor, out=product)
        end.record()
        end.synchronize()
        _hold_launch_ms = max(start.elapsed_time(end), 1e-3)
    for _ in range(max(1, math.ceil(ms / _hold_launch_ms))):
        torch.mm(factor, factor, out=product)


def time_cuda(
    fn: Callable[[], object], *, warmup: int = 10, repeat: int = 50, flush_l2: bool = False, host_ahead: bool = False
) -> Timing:
    """Median time of fn() on the current CUDA stream, measured with CUDA events, after `warmup` untimed calls.

    host_ahead: the repeats wait in the stream's queue behind GPU work that outlasts the host's time to issue them,
    so each pair of events times the GPU alone; Timing.host_ms is the host's time per call. If the host took longer
    than the GPU was held (a slow moment), the repeats are taken again behind a longer hold."""
    global _hold_launch_ms
    import torch

    issue_ms = []
    for _ in range(max(warmup, 1 if host_ahead else 0)):
        begin = time.perf_counter()
        fn()
        issue_ms.append((time.perf_counter() - begin) * 1e3)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
    hold_ms = 2 * repeat * statistics.median(issue_ms) + 1 if host_ahead else 0.0
    for _ in range(4 if host_ahead else 1):
        if host_ahead:
            _hold_gpu(hold_ms)
        host = []
        for start, end in zip(starts, ends):
            if flush_l2:
                _flush_l2()
            begin = time.perf_counter()
            start.record()
            fn()
            end.record()
            host.append((time.perf_counter() - begin) * 1e3)
        # Every call issued and the GPU still held (it has not reached the first one): none of them waited for the host.
        ahead = not host_ahead or not starts[0].query()
        torch.cuda.synchronize()
        if ahead:
            samples = [start.elapsed_time(end) for start, end in zip(starts, ends)]
            return _summarise(samples, statistics.median(host) if host_ahead else None)
        hold_ms *= 2
        _hold_launch_ms = None  # measured again too: a GPU whose clocks (or TF32 setting) changed runs it faster
    # What the host did in the last try says why: one call far slower than the others waited for something (a call
    # that waits for the GPU waits for the hold too, however long it is); all of them slow, a busy host.
    raise RuntimeError(
        f"time_cuda(host_ahead=True): the host never got ahead of the GPU (held {hold_ms / 2:.0f} ms). In the last "
        f"try its {len(host)} calls took {sum(host):.1f} ms of host time, the slowest {max(host):.1f} ms (call "
        f"{host.index(max(host)) + 1}), the median {statistics.median(host):.3f} ms. A call that waits for the GPU "
        "(torch.cuda.synchronize, .item(), the caching allocator returning memory) cannot be timed with host_ahead."
    )


def time_host_loop(fn: Callable[[], object], *, calls: int = 2000, repeat: int = 7, warmup: int = 200) -> Timing:
    """Per-call wall time of many back-to-back calls, for host-side overhead (tiny GPU launches, Python calls).
    The device is synchronized before the clock stops, so queued work is not left out."""
    import torch

    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        samples.append((time.perf_counter() - start) * 1e3 / calls)
    return _summarise(samples)


def time_cpu(fn: Callable[[], object], *, warmup: int = 1, repeat: int = 5, budget_s: float | None = None) -> Timing:
    """Median wall time of fn() for work that runs on the CPU. With budget_s, stops repeating once the time spent
    passes it (at least one timed run), so slow baselines such as Python loops stay affordable."""
    for _ in range(warmup):
        fn()
    samples: list[float] = []
    spent = 0.0
    while len(samples) < repeat:
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        samples.append(elapsed * 1e3)
        spent += elapsed
        if budget_s is not None and spent > budget_s:
            break
    return _summarise(samples)


def interleaved_timings(
    fns: dict[str, Callable[[], object]], *, rounds: int = 7, timer: Callable[..., Timing] | None = None, **timer_args
) -> dict[str, list[Timing]]:
    """Each fn timed `rounds` times, taking turns (a, b, c, a, b, c, ...), so that a slow moment of the machine (clock
    changes, another process) falls on every fn alike. Returns each fn's Timing per round, in round order.
    timer defaults to time_cuda; its keyword arguments (warmup, repeat, flush_l2, host_ahead) pass through."""
    timer = timer or time_cuda
    results: dict[str, list[Timing]] = {name: [] for name in fns}
    for round_ in range(rounds):
        for name, fn in fns.items():
            try:
                results[name].append(timer(fn, **timer_args))
            except RuntimeError as error:  # the same error, saying which fn and round it came from
                raise RuntimeError(f"timing {name!r} (round {round_ + 1} of {rounds}): {error}") from error
    return results


def interleaved_rounds(
    fns: dict[str, Callable[[], object]], *, rounds: int = 7, timer: Callable[..., Timing] | None = None, **timer_args
) -> dict[str, list[float]]:
    """interleaved_timings, keeping each round's median in ms:

    times = interleaved_rounds({"ours": f, "torch": g}, rounds=7, repeat=20)
    ratios = [t / o for o, t in zip(times["ours"], times["torch"])]   # one speed-up per round
    goals.check_rounds("speed-up over torch", ratios, ">=", 1.0)      # median, with min and max
    """
    timings = interleaved_timings(fns, rounds=rounds, timer=timer, **timer_args)
    return {name: [t.median_ms for t in per_round] for name, per_round in timings.items()}


# Inputs smaller than the L2 cache (50 MB on an H100) stay in it between repeated calls, and a benchmark then
# measures the cache. Taking turns over enough input sets to cover ROTATE_BYTES makes every call read device memory.
ROTATE_BYTES = 256 * 2**20


def rotation_count(bytes_per_set: int, *, cover: int = ROTATE_BYTES, most: int = 1024) -> int:
    """How many input sets of bytes_per_set cover `cover` bytes (at least 1, at most `most`)."""
    return max(1, min(most, -(-cover // max(bytes_per_set, 1))))


def rotating(calls: list[Callable[[], object]]) -> Callable[[], object]:
    """One call that runs calls[0], calls[1], ... in turn (each on its own input set)."""
    if len(calls) == 1:
        return calls[0]
    turn = itertools.cycle(calls).__next__
    return lambda: turn()()


def bandwidth_gbs(bytes_moved: float, ms: float) -> float:
    """Effective bandwidth in GB/s (10^9 bytes per second): bytes the op must move over the time it took."""
    return bytes_moved / (ms * 1e-3) / 1e9 if ms > 0 else float("nan")
