"""Appendix: y = x*x + b (forward only) built against LibTorch's stable ABI and Python's limited API.

from square_bias_cuda_stable import square_bias
y = square_bias(x, b)            # or torch.ops.square_bias_cuda_stable.square_bias(x, b)
"""

import torch

try:  # always the reference build, also under EXERCISE=1 (the appendix is not an exercise)
    from square_bias_cuda_stable import _C  # noqa: F401  (loads the op into torch.ops)
except ImportError as error:
    raise ImportError(f"square_bias_cuda_stable._C is not built: run `make build` in the chapter. ({error})") from error


def square_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = x*x + b; b a scalar, a row or of x's shape. The C++ side checks the inputs with the stable ABI's
    STD_TORCH_CHECK: bad input raises RuntimeError (the stable headers have no TypeError/ValueError variant)."""
    return torch.ops.square_bias_cuda_stable.square_bias(x, b)


@torch.library.register_fake("square_bias_cuda_stable::square_bias")
def _(x, b):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


__all__ = ["square_bias"]
