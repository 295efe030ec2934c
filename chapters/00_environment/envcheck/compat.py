"""The compatibility rules between the NVIDIA driver, the CUDA toolkit and PyTorch, as plain functions.

- A driver runs CUDA code built with toolkits up to its own CUDA version (newer drivers run older toolkits).
- An extension must be compiled by an nvcc whose major version matches the CUDA that torch was built with.
- A GPU runs a kernel only if the binary holds machine code for its architecture (or PTX the driver can JIT).

The chapter's exercise is this module: under EXERCISE=1, exercises/compat.py replaces it (envcheck/__init__.py
puts exercises/ first on the package's path). Both take the version numbers and tables from envcheck/versions.py.
"""

from __future__ import annotations

from envcheck.versions import MINIMUM_DRIVER, Version, extension_build_compatible, max_cuda_for_driver

__all__ = ["MINIMUM_DRIVER", "Version", "driver_can_run_toolkit", "extension_build_compatible", "max_cuda_for_driver"]


def driver_can_run_toolkit(driver_cuda: Version, toolkit: Version) -> bool:
    """Can a driver whose CUDA version is `driver_cuda` (what nvidia-smi prints, or cuDriverGetVersion) run code
    built with the CUDA `toolkit`? Yes when the driver's version is at least the toolkit's: drivers are backward
    compatible, never forward."""
    return (driver_cuda.major, driver_cuda.minor) >= (toolkit.major, toolkit.minor)
