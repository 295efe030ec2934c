"""The public op, y = x*x + b, with its checks, autograd formula and fake (shape-only) implementation.

The compiled module registers `torch.ops.square_bias_cuda.*` with the dispatcher, with a CPU implementation
(chapter 01's C core) and a CUDA one (src/square_bias_kernels.cu). What is written here holds for both devices:

    square_bias(x, b)          checks the inputs, then calls torch.ops.square_bias_cuda.square_bias
    register_autograd          backward through square_bias_grad_x / square_bias_backward (fused kernels)
    register_fake              output shapes, so torch.compile and opcheck can trace without running kernels
"""

from __future__ import annotations

import torch
from course import check_same, check_tensor
from course.build import import_extension
from course.checks import call_below_autograd_if_no_grad, check_broadcastable_to

import_extension("square_bias_cuda")  # loads the ops into torch.ops.square_bias_cuda

ops = torch.ops.square_bias_cuda
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_DTYPE_SET = frozenset(DTYPES)
_square_bias = ops.square_bias.default  # the OpOverload, looked up once


def square_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = x*x + b, on x's device (CPU or CUDA). b broadcasts to x's shape; both have the same dtype and device."""
    if not (
        type(x) is torch.Tensor
        and type(b) is torch.Tensor
        and x.dtype is b.dtype
        and x.dtype in _DTYPE_SET
        and x.device == b.device
        and (b.dim() == 0 or b.shape == x.shape)
    ):  # not the common case (a scalar b, or one of x's shape): the full checks, which name the problem
        check_tensor("x", x, dtypes=DTYPES)
        check_tensor("b", b, dtypes=DTYPES)
        check_same(x=x, b=b, attributes=("device", "dtype"))
        check_broadcastable_to("b", b, "x", x)
    fast = call_below_autograd_if_no_grad(_square_bias, x, b)  # nothing to record: skip the Python autograd layer
    return _square_bias(x, b) if fast is None else fast


# ---- fake implementations: shapes, dtypes and devices of the outputs, no data ------------------------------------
@torch.library.register_fake("square_bias_cuda::square_bias")
def _(x, b):
    return x.new_empty(x.shape)


@torch.library.register_fake("square_bias_cuda::square_bias_grad_x")
def _(grad_y, x):
    return x.new_empty(x.shape)


@torch.library.register_fake("square_bias_cuda::square_bias_backward")
def _(grad_y, x, b_shape):
    return x.new_empty(x.shape), x.new_empty(b_shape)


# ---- autograd: written once, used by both devices ------------------------------------------------------------------
def _setup_context(ctx, inputs, output):
    x, b = inputs
    ctx.save_for_backward(x)
    ctx.b_shape = tuple(b.shape)


def _backward(ctx, grad_y):
    (x,) = ctx.saved_tensors
    need_x, need_b = ctx.needs_input_grad
    if ctx.b_shape == tuple(x.shape) or not need_b:
        # b of x's shape: d(x*x + b)/db is 1, so grad_b *is* grad_y, no copy (eager PyTorch does the same).
        grad_x = ops.square_bias_grad_x(grad_y, x) if need_x else None
        return grad_x, (grad_y if need_b else None)
    # A broadcast b: one fused pass writes grad_x and reduces grad_y into grad_b.
    grad_x, grad_b = ops.square_bias_backward(grad_y, x, list(ctx.b_shape))
    return (grad_x if need_x else None), grad_b


torch.library.register_autograd("square_bias_cuda::square_bias", _backward, setup_context=_setup_context)


class SquareBias(torch.nn.Module):
    """y = x*x + self.b, with a learnable b of the given shape (broadcast to x)."""

    def __init__(self, b_shape, *, device=None, dtype=None):
        super().__init__()
        self.b = torch.nn.Parameter(torch.zeros(b_shape, device=device, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return square_bias(x, self.b)
