"""The public op, y = x*x + b, and its fake (shape-only) implementation.

The compiled module registers `torch.ops.square_bias_cuda.*` with the dispatcher (src/binding.cpp): a CPU
implementation (chapter 01's C core), a CUDA one (src/square_bias_kernels.cu), and an Autograd kernel in C++ that
records the backward (square_bias_grad_x / square_bias_backward, fused kernels) for both devices. What is left for
Python:

    square_bias(x, b)          calls torch.ops.square_bias_cuda.square_bias once; the C++ side checks the inputs
    register_fake              output shapes, so torch.compile and opcheck can trace without running kernels
"""

from __future__ import annotations

import torch
from course.build import import_extension
from course.checks import check_broadcastable_to, check_same, check_tensor

import_extension("square_bias_cuda")  # loads the ops into torch.ops.square_bias_cuda

ops = torch.ops.square_bias_cuda
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_square_bias = ops.square_bias.default  # the OpOverload, looked up once


def square_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = x*x + b, on x's device (CPU or CUDA). b broadcasts to x's shape; both have the same dtype (float32,
    float64, float16 or bfloat16) and device. A wrong dtype raises TypeError, a wrong device or shape ValueError."""
    return _square_bias(x, b)


def check_inputs(x: torch.Tensor, b: torch.Tensor) -> None:
    """The op's input checks in Python (binding.cpp's check_square_bias_inputs): the same order, messages and
    exception types. The fake implementation runs them, since it runs instead of the C++ code."""
    check_tensor("x", x, dtypes=DTYPES)
    check_tensor("b", b, dtypes=DTYPES)
    check_same(x=x, b=b, attributes=("device", "dtype"))
    check_broadcastable_to("b", b, "x", x)


# ---- fake implementations: shapes, dtypes and devices of the outputs, no data ------------------------------------
@torch.library.register_fake("square_bias_cuda::square_bias")
def _(x, b):
    check_inputs(x, b)
    return x.new_empty(x.shape)


@torch.library.register_fake("square_bias_cuda::square_bias_grad_x")
def _(grad_y, x):
    return x.new_empty(x.shape)


@torch.library.register_fake("square_bias_cuda::square_bias_backward")
def _(grad_y, x, b_shape):
    return x.new_empty(x.shape), x.new_empty(b_shape)


class SquareBias(torch.nn.Module):
    """y = x*x + self.b, with a learnable b of the given shape (broadcast to x)."""

    def __init__(self, b_shape, *, device=None, dtype=None):
        super().__init__()
        self.b = torch.nn.Parameter(torch.zeros(b_shape, device=device, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return square_bias(x, self.b)
