"""One way of doing a work, as the harness (perf/harness.py) checks and times it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Implementation:
    workload: str
    name: str
    device: str  # "cpu" or "cuda"
    # Given float32 inputs on `device`, return a zero-argument callable that does the work once and returns the
    # result (a tensor, array, list or number), to be checked and timed.
    prepare: Callable[..., Callable[[], object]]
    max_n: int | None = None
    baseline: bool = False  # eager PyTorch on this device: the others' speed-up is relative to it
    chapter: str | None = None  # the course chapter whose code this is (None: PyTorch, NumPy, Triton, ...)
    peer: str | None = None  # "torch.compile" or "Triton": what a user might pick instead of the course's code
