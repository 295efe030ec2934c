"""Chapter 00: what each CUDA version on a machine means, and a diagnosis of mismatches."""

from envcheck.compat import (
    Version,
    driver_can_run_toolkit,
    max_cuda_for_driver,
)
from envcheck.diagnose import Facts, Finding, diagnose, gather_facts

__all__ = [
    "Version",
    "driver_can_run_toolkit",
    "max_cuda_for_driver",
    "Facts",
    "Finding",
    "diagnose",
    "gather_facts",
]
