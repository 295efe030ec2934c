"""Chapter 05: ReLU compiled at run time with NVRTC and launched through the CUDA Driver API, from Python."""

from .compiler import CompileError, compile_ptx, compile_source, kernels_source, nvrtc_version, ptx_entries
from .driver import DriverError, NoDriverError, driver_skip_reason
from .ops import (
    ReLUFunction,
    clear_cache,
    kernels,
    pitfall_relu_default_stream,
    relu,
    relu_backward,
    relu_forward,
    relu_forward_core,
    vector_add,
)

__all__ = [
    "CompileError",
    "DriverError",
    "NoDriverError",
    "ReLUFunction",
    "clear_cache",
    "compile_ptx",
    "compile_source",
    "driver_skip_reason",
    "kernels",
    "kernels_source",
    "nvrtc_version",
    "pitfall_relu_default_stream",
    "ptx_entries",
    "relu",
    "relu_backward",
    "relu_forward",
    "relu_forward_core",
    "vector_add",
]
