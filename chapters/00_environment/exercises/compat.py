"""Exercise (chapter 00): decide whether an NVIDIA driver can run code built with a given CUDA toolkit.

Under EXERCISE=1 this file replaces envcheck/compat.py (envcheck/__init__.py puts exercises/ first on the
package's path), so it has that module's whole API; only driver_can_run_toolkit is yours to write.

`driver_cuda` is the highest CUDA version the driver supports: what `nvidia-smi` prints as "CUDA Version", or
cuDriverGetVersion() read as major.minor. `toolkit` is the CUDA version the code was built with (nvcc --version,
or torch.version.cuda). Both are envcheck.Version(major, minor) tuples.

The rule (see the chapter README): drivers are backward compatible. A driver runs code from its own CUDA version
and from every older one, but not from a newer one. Compare major first, then minor.

Check your answer with:  EXERCISE=1 make test
"""

from __future__ import annotations

from envcheck.versions import MINIMUM_DRIVER, Version, extension_build_compatible, max_cuda_for_driver

__all__ = ["MINIMUM_DRIVER", "Version", "driver_can_run_toolkit", "extension_build_compatible", "max_cuda_for_driver"]


def driver_can_run_toolkit(driver_cuda: Version, toolkit: Version) -> bool:
    # TODO: return True when the driver's CUDA version is at least the toolkit's (about 1 line).
    raise NotImplementedError("exercise: driver_can_run_toolkit is not written yet")
