"""course.timing's GPU timer: what its events time when the host is slower than the GPU."""

import time

import pytest
from course.timing import interleaved_rounds, interleaved_timings, time_cuda

HOST_MS = 5.0  # each call below keeps the host busy this long before it launches a tiny kernel


def slow_host_call(x):
    def call():
        time.sleep(HOST_MS / 1e3)
        x.add_(1)

    return call


@pytest.mark.gpu
def test_events_time_the_hosts_pace_unless_the_calls_wait_behind_a_held_gpu():
    import torch

    x = torch.zeros(1024, device="cuda")
    one_after_another = time_cuda(slow_host_call(x), warmup=1, repeat=5)
    held = time_cuda(slow_host_call(x), warmup=1, repeat=5, host_ahead=True)
    # One after another the GPU waits for each launch: the events span the host's sleep.
    assert one_after_another.median_ms >= 0.9 * HOST_MS
    assert one_after_another.host_ms is None
    # Queued behind held work, the events time the kernel alone; the host's time per call is reported.
    assert held.median_ms < 0.2 * HOST_MS
    assert held.host_ms >= 0.9 * HOST_MS
    assert x[0].item() >= 1 + 5 + 1 + 5  # every warm-up and timed call ran (a slow host moment may take more)


@pytest.mark.gpu
def test_interleaved_rounds_keep_each_rounds_median_of_the_timings():
    import torch

    x = torch.zeros(1 << 20, device="cuda")
    calls = {"add": lambda: x.add_(1), "mul": lambda: x.mul_(1)}
    timings = interleaved_timings(calls, rounds=3, warmup=1, repeat=4, host_ahead=True)
    assert [len(v) for v in timings.values()] == [3, 3]
    assert all(t.repeats == 4 and t.host_ms is not None for v in timings.values() for t in v)
    medians = interleaved_rounds(calls, rounds=2, warmup=1, repeat=4)
    assert [len(v) for v in medians.values()] == [2, 2] and all(m > 0 for v in medians.values() for m in v)


@pytest.mark.gpu
def test_a_hold_lasts_about_what_it_asks_for_from_a_fresh_start(monkeypatch):
    """_hold_gpu measures one of its launches once per process. Timed on the first launch (which also loads the
    kernel) that measure once came out milliseconds long, and every hold after it was a fraction of what was asked:
    the bench then failed with 'the host never got ahead'."""
    import torch
    from course import timing

    monkeypatch.setattr(timing, "_hold_matrices", None)  # new matrices and a new measure, as in a new process
    monkeypatch.setattr(timing, "_hold_launch_ms", None)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    timing._hold_gpu(20.0)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 15.0  # the measuring launches included: at least 3/4 of the hold


@pytest.mark.gpu
def test_the_host_queues_a_hold_far_faster_than_the_gpu_runs_it():
    """A hold of many short launches once took the host longer to issue than the GPU took to run (a slow host at
    that moment), so the calls behind it never queued. A hold of few long launches leaves the host free at once."""
    import torch
    from course import timing

    timing._hold_gpu(1.0)  # the measure of one launch, out of the way
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    begin = time.perf_counter()
    timing._hold_gpu(50.0)
    host_ms = (time.perf_counter() - begin) * 1e3
    end.record()
    end.synchronize()
    gpu_ms = start.elapsed_time(end)
    assert gpu_ms >= 40.0
    assert host_ms < 0.1 * gpu_ms, (host_ms, gpu_ms)


@pytest.mark.gpu
def test_a_call_that_waits_for_the_gpu_is_named_when_the_host_cannot_get_ahead():
    """A call that synchronizes waits for the hold itself, so no hold is long enough: time_cuda(host_ahead=True)
    must fail with the host's times of its calls, and interleaved_timings must say which fn it was timing (the bench
    once stopped with the first sentence alone, after 52 cases)."""
    import torch

    x = torch.zeros(1024, device="cuda")

    def waits():
        x.add_(1)
        torch.cuda.synchronize()

    with pytest.raises(RuntimeError, match=r"never got ahead.*the slowest .* ms \(call 1\).*cannot be timed"):
        time_cuda(waits, warmup=1, repeat=3, host_ahead=True)
    calls = {"fine": lambda: x.add_(1), "waits": waits}
    with pytest.raises(RuntimeError, match=r"^timing 'waits' \(round 1 of 2\): time_cuda\(host_ahead=True\)"):
        interleaved_timings(calls, rounds=2, warmup=1, repeat=3, host_ahead=True)
