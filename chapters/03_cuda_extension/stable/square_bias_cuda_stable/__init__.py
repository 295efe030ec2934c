"""Appendix: y = x*x + b (forward only) built against LibTorch's stable ABI and Python's limited API.

from square_bias_cuda_stable import square_bias
y = square_bias(x, b)            # or torch.ops.square_bias_cuda_stable.square_bias(x, b)
"""

import torch
from course import check_same, check_tensor

try:  # always the reference build, also under EXERCISE=1 (the appendix is not an exercise)
    from square_bias_cuda_stable import _C  # noqa: F401  (loads the op into torch.ops)
except ImportError as error:
    raise ImportError(f"square_bias_cuda_stable._C is not built: run `make build` in the chapter. ({error})") from error
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def square_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Checked in Python first, as in the main op: with torch 2.11 an error raised inside a stable-ABI kernel
    crashed the interpreter in our tests, so bad input should never reach the C++ checks."""
    check_tensor("x", x, dtypes=DTYPES)
    check_tensor("b", b, dtypes=DTYPES)
    check_same(x=x, b=b, attributes=("device", "dtype"))
    stripped = list(b.shape)
    while stripped and stripped[0] == 1:
        stripped.pop(0)
    if x.numel() and (len(stripped) > x.dim() or list(x.shape[x.dim() - len(stripped) :]) != stripped):
        raise ValueError(f"the stable variant takes a b that is a scalar, a row or of x's shape, not {tuple(b.shape)}")
    return torch.ops.square_bias_cuda_stable.square_bias(x, b)


@torch.library.register_fake("square_bias_cuda_stable::square_bias")
def _(x, b):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


__all__ = ["square_bias"]
