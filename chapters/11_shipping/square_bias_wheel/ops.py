"""The op's Python side: the public function, its fake (for torch.compile and meta tensors) and its autograd.

The forward runs in C++ (CPU: _C, CUDA: _C_cuda), which checks the inputs once. The backward is two ATen ops,
grad_x = 2 x grad_y and grad_b = grad_y summed down to b's shape: this chapter is about shipping the op, and the
backward rides on torch's own kernels, which every torch ships for every GPU it supports.
"""

import torch


def square_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = x*x + b; b a scalar, a row, or of x's shape. float32, float64 (CPU and CUDA), float16, bfloat16 (CUDA)."""
    return torch.ops.square_bias_wheel.square_bias(x, b)


@torch.library.register_fake("square_bias_wheel::square_bias")
def _(x, b):
    torch._check(x.dtype == b.dtype, lambda: f"x and b must have the same dtype, but x has {x.dtype} and b {b.dtype}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    x, b = inputs
    ctx.save_for_backward(x)
    ctx.b_shape = b.shape


def _backward(ctx, grad_y):
    (x,) = ctx.saved_tensors
    grad_x = 2 * x * grad_y if ctx.needs_input_grad[0] else None
    grad_b = grad_y.sum_to_size(ctx.b_shape) if ctx.needs_input_grad[1] else None
    return grad_x, grad_b


torch.library.register_autograd("square_bias_wheel::square_bias", _backward, setup_context=_setup_context)
