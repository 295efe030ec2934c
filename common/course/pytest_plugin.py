"""The course's pytest plugin (loaded by the root conftest.py).

Markers:
  gpu   — needs a CUDA device; skipped with "no CUDA device visible" where there is none.
  nvcc  — needs the CUDA compiler; skipped with how to get it where it is missing.
  slow  — long-running; deselect with -m "not slow".
Fixture:
  small — True under compute-sanitizer (COURSE_SANITIZE=1): use small inputs.
"""

from __future__ import annotations

import pytest

from course.gpu import NO_NVCC_REASON, find_nvcc, gpu_skip_reason, small_sizes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped when none is visible)")
    config.addinivalue_line("markers", "nvcc: needs the CUDA compiler nvcc (skipped when it is missing)")
    config.addinivalue_line("markers", "slow: long-running")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        reason = gpu_skip_reason()
        if reason:
            pytest.skip(reason)
    if item.get_closest_marker("nvcc") is not None and find_nvcc() is None:
        pytest.skip(NO_NVCC_REASON)


@pytest.fixture
def small() -> bool:
    return small_sizes()
