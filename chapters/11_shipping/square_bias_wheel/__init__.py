"""y = x*x + b as a PyTorch op, shipped as one wheel (the course's chapter 11).

    import square_bias_wheel
    y = square_bias_wheel.square_bias(x, b)      # or torch.ops.square_bias_wheel.square_bias(x, b)

On import: check that this torch is one the wheel supports (_compat.py), load the CPU library, and the CUDA library
where torch is a CUDA build. Nothing is compiled here: the libraries come built in the wheel.
"""

import torch

from square_bias_wheel import _build_info, _compat

_HAS_CUDA_LIBRARY = _compat.check_torch(
    torch.__version__, torch.version.cuda, _build_info.TORCH_TARGET, _build_info.CUDA_MAJOR
)

from square_bias_wheel import _C  # noqa: E402, F401  (registers the op and its CPU kernel)

if _HAS_CUDA_LIBRARY:
    from square_bias_wheel import _C_cuda  # noqa: F401  (registers the CUDA kernel)

from square_bias_wheel.ops import square_bias  # noqa: E402

__version__ = _build_info.VERSION
__all__ = ["square_bias"]
