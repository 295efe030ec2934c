"""Chapter 00: what each CUDA version on a machine means, and a diagnosis of mismatches."""

from course.build import exercises_first

exercises_first(__path__)  # under EXERCISE=1, `envcheck.compat` is the student's exercises/compat.py

from envcheck.compat import (  # noqa: E402
    Version,
    driver_can_run_toolkit,
    max_cuda_for_driver,
)
from envcheck.diagnose import Facts, Finding, diagnose, gather_facts  # noqa: E402

__all__ = [
    "Version",
    "driver_can_run_toolkit",
    "max_cuda_for_driver",
    "Facts",
    "Finding",
    "diagnose",
    "gather_facts",
]
