"""Chapter 05: ReLU compiled at run time with NVRTC and launched through the CUDA Driver API, from Python.

nvrtc_relu.relu(x)    the op torch.ops.nvrtc_relu.relu: differentiable, seen by opcheck and torch.compile
"""

from course.build import exercises_first

# Under EXERCISE=1, `import nvrtc_relu.launch` loads the student's exercises/launch.py (common/course/build.py).
exercises_first(__path__)

from .compiler import CompileError, compile_ptx, compile_source, kernels_source, nvrtc_version, ptx_entries  # noqa: E402
from .core_side import relu_forward_core  # noqa: E402
from .driver import DriverError, NoDriverError, driver_skip_reason  # noqa: E402
from .ops import (  # noqa: E402
    clear_cache,
    kernels,
    pitfall_relu_default_stream,
    relu,
    relu_backward,
    relu_forward,
    vector_add,
)

__all__ = [
    "CompileError",
    "DriverError",
    "NoDriverError",
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
