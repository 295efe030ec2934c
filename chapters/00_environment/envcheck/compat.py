"""The compatibility rules between the NVIDIA driver, the CUDA toolkit and PyTorch, as plain functions.

- A driver runs CUDA code built with toolkits up to its own CUDA version (newer drivers run older toolkits).
- An extension must be compiled by an nvcc whose major version matches the CUDA that torch was built with.
- A GPU runs a kernel only if the binary holds machine code for its architecture (or PTX the driver can JIT).
"""

from __future__ import annotations

import re
import sys
from typing import NamedTuple

from course.build import exercise_or_reference


class Version(NamedTuple):
    major: int
    minor: int = 0

    @classmethod
    def parse(cls, text: str | int) -> Version:
        """'12.4', '12.4.131', 'V13.0.88', or the API's integer form 12040 -> Version(12, 4)."""
        if isinstance(text, int):
            return cls(text // 1000, (text % 1000) // 10)
        match = re.search(r"(\d+)\.(\d+)", str(text))
        if match is None:
            raise ValueError(f"not a version: {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


# Minimum Linux driver for each CUDA toolkit release (NVIDIA's CUDA release notes, "CUDA Toolkit and Corresponding
# Driver Versions"). A driver also serves every earlier toolkit.
MINIMUM_DRIVER = [
    (Version(13, 0), (580, 65)),
    (Version(12, 9), (575, 51)),
    (Version(12, 8), (570, 26)),
    (Version(12, 6), (560, 28)),
    (Version(12, 5), (555, 42)),
    (Version(12, 4), (550, 54)),
    (Version(12, 3), (545, 23)),
    (Version(12, 2), (535, 54)),
    (Version(12, 1), (530, 30)),
    (Version(12, 0), (525, 60)),
    (Version(11, 8), (520, 61)),
    (Version(11, 7), (515, 43)),
    (Version(11, 6), (510, 39)),
    (Version(11, 0), (450, 36)),
]


def max_cuda_for_driver(driver: str) -> Version | None:
    """The newest CUDA release that the driver '580.95.05' supports, or None if it predates CUDA 11."""
    numbers = tuple(int(part) for part in re.findall(r"\d+", driver)[:2])
    for cuda, minimum in MINIMUM_DRIVER:
        if numbers >= minimum:
            return cuda
    return None


def driver_can_run_toolkit(driver_cuda: Version, toolkit: Version) -> bool:
    """Can a driver whose CUDA version is `driver_cuda` (what nvidia-smi prints, or cuDriverGetVersion) run code
    built with the CUDA `toolkit`? Yes when the driver's version is at least the toolkit's: drivers are backward
    compatible, never forward."""
    return (driver_cuda.major, driver_cuda.minor) >= (toolkit.major, toolkit.minor)


def extension_build_compatible(torch_cuda: Version, nvcc: Version) -> bool:
    """torch.utils.cpp_extension refuses to build when nvcc's major version differs from torch's CUDA major."""
    return torch_cuda.major == nvcc.major


exercise_or_reference(sys.modules[__name__], "exercises/compat.py", ["driver_can_run_toolkit"])
