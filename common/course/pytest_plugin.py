"""The course's pytest plugin (loaded by the root conftest.py).

Markers:
  gpu   — needs a CUDA device; skipped with "no CUDA device visible" where there is none.
  nvcc  — needs the CUDA compiler; skipped with how to get it where it is missing.
  slow  — long-running; deselect with -m "not slow".
  big_memory — allocates tens of GB of GPU memory. Such tests from every pytest process on the machine take turns
          (an exclusive lock on a file in the temp folder), so that `make gpu-check` can run several chapters'
          tests side by side without two of them filling the GPU at once.
Fixture:
  small — True under compute-sanitizer (COURSE_SANITIZE=1): use small inputs.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator

import pytest

from course.gpu import NO_NVCC_REASON, find_nvcc, gpu_skip_reason, small_sizes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped when none is visible)")
    config.addinivalue_line("markers", "nvcc: needs the CUDA compiler nvcc (skipped when it is missing)")
    config.addinivalue_line("markers", "slow: long-running")
    config.addinivalue_line("markers", "big_memory: needs tens of GB of GPU memory; such tests run one at a time")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        reason = gpu_skip_reason()
        if reason:
            pytest.skip(reason)
    if item.get_closest_marker("nvcc") is not None and find_nvcc() is None:
        pytest.skip(NO_NVCC_REASON)


BIG_MEMORY_LOCK = os.path.join(tempfile.gettempdir(), "course-gpu-big-memory.lock")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker("big_memory") is None:
        yield
        return
    with open(BIG_MEMORY_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits while another process runs its big test; released on close
        try:
            yield
        finally:
            _give_back_gpu_memory()  # torch's caching allocator would keep the test's tens of GB otherwise


def _give_back_gpu_memory() -> None:
    import gc
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        gc.collect()
        torch.cuda.empty_cache()


@pytest.fixture
def small() -> bool:
    return small_sizes()
