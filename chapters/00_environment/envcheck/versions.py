"""CUDA version numbers and the facts NVIDIA publishes about them: the part of the rules that is a table, not a
decision. envcheck/compat.py (the rules) builds on it.

- Version: '12.4', 'V13.0.88' or the API's 12040, as (major, minor).
- max_cuda_for_driver: the newest CUDA a driver release supports, from NVIDIA's release notes.
- extension_build_compatible: torch.utils.cpp_extension's own rule about nvcc and torch's CUDA.
"""

from __future__ import annotations

import re
from typing import NamedTuple


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


def extension_build_compatible(torch_cuda: Version, nvcc: Version) -> bool:
    """torch.utils.cpp_extension refuses to build when nvcc's major version differs from torch's CUDA major."""
    return torch_cuda.major == nvcc.major
