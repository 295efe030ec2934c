"""Is there a GPU to run on, and if not, why not (one sentence a student can act on)."""

from __future__ import annotations

import functools
import os
import shutil

NO_GPU_REASON = "no CUDA device visible"


@functools.cache
def gpu_available() -> bool:
    import torch

    return torch.cuda.is_available()


def gpu_skip_reason() -> str:
    """The reason GPU work is skipped here, or '' when a GPU is visible."""
    return "" if gpu_available() else NO_GPU_REASON


def find_cuda_tool(name: str) -> str | None:
    """A program of the CUDA toolkit (nvcc, cuobjdump, ...) from CUDA_HOME when set, else from PATH."""
    cuda_home = os.environ.get("CUDA_HOME")
    if cuda_home and os.path.exists(os.path.join(cuda_home, "bin", name)):
        return os.path.join(cuda_home, "bin", name)
    return shutil.which(name)


def find_nvcc() -> str | None:
    """nvcc from CUDA_HOME when set, else from PATH."""
    return find_cuda_tool("nvcc")


NO_NVCC_REASON = (
    "nvcc not found: install the CUDA toolkit (it provides nvcc) and set CUDA_HOME to it, e.g. /usr/local/cuda"
)


def small_sizes() -> bool:
    """True under compute-sanitizer (COURSE_SANITIZE=1), where tests should use small inputs."""
    return os.environ.get("COURSE_SANITIZE") == "1"
