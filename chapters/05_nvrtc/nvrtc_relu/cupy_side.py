"""The same ReLU through CuPy's RawKernel, side by side (optional: CuPy may be absent).

RawKernel does NVRTC + module load + launch in one object and caches the compiled code on disk
(~/.cupy/kernel_cache). Torch tensors become CuPy arrays without a copy through DLPack, and ExternalStream makes
CuPy launch on torch's current stream.
"""

from __future__ import annotations

import torch

from . import compiler, launch, ops


def cupy_skip_reason() -> str:
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "CuPy is not installed (pip install cupy-cuda13x to run this part)"
    return ""


_kernels: dict[str, object] = {}


def relu_forward_cupy(x: torch.Tensor) -> torch.Tensor:
    import cupy

    ops.check_input("x", x)
    kernel = _kernels.get("relu_forward")
    if kernel is None:
        kernel = _kernels["relu_forward"] = cupy.RawKernel(
            compiler.kernels_source(), "relu_forward", options=compiler.DEFAULT_OPTIONS
        )
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        grid = launch.grid_for(n, launch.ITEMS_PER_THREAD["relu_forward"], launch.BLOCK)
        with cupy.cuda.ExternalStream(torch.cuda.current_stream(x.device).cuda_stream):
            kernel((grid,), (launch.BLOCK,), (cupy.from_dlpack(y), cupy.from_dlpack(x), cupy.int64(n)))
    return y
