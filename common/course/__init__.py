"""Shared helpers for the course's chapters: input checks, timing, building, the pytest plugin, reports."""

from course.checks import check_same, check_tensor
from course.gpu import gpu_available, gpu_skip_reason

__all__ = ["check_tensor", "check_same", "gpu_available", "gpu_skip_reason"]
