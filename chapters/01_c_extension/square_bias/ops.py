"""The Python side of the op: autograd, the fake implementation, and an nn.Module wrapper.

Importing this module loads the compiled extension, whose TORCH_LIBRARY block registers
torch.ops.square_bias.square_bias and torch.ops.square_bias.square_bias_backward with the dispatcher. The inputs
are checked once, in the C++ implementation (src/binding.cpp); check_inputs below says the same in Python for the
fake implementation, which runs instead of the C++ code under torch.compile and for meta tensors.
"""

from __future__ import annotations

import torch
from course.build import import_extension
from course.checks import check_broadcastable_to, check_same, check_tensor

import_extension("square_bias")  # loads _C (or _C_exercise): the import registers the ops

DTYPES = (torch.float32, torch.float64)


def square_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = x*x + b. x: a float32/float64 CPU tensor of any shape; b: the same dtype, broadcastable to x's shape
    (a scalar, a row, x's shape, ...). Differentiable in x and b; works under torch.compile. A wrong dtype raises
    TypeError, a wrong device or shape ValueError (from the op's C++ checks)."""
    return torch.ops.square_bias.square_bias(x, b)


def square_bias_backward(grad_y: torch.Tensor, x: torch.Tensor, b_shape) -> tuple[torch.Tensor, torch.Tensor]:
    """(2*x*grad_y, grad_y summed down to b_shape), computed in one pass by the C core."""
    return torch.ops.square_bias.square_bias_backward(grad_y, x, list(b_shape))


def check_inputs(x: torch.Tensor, b: torch.Tensor) -> None:
    """The op's input checks in Python, in the C++ order and with the same messages and exception types."""
    check_tensor("x", x, dtypes=DTYPES, device="cpu")
    check_tensor("b", b, dtypes=DTYPES, device="cpu")
    check_same(x=x, b=b, attributes=("dtype",))
    check_broadcastable_to("b", b, "x", x)


# --- autograd: the way PyTorch recommends for custom ops ---------------------------------------------------------
# The forward saves x (the input; nothing extra is computed or written) and remembers b's shape; the backward op
# computes both gradients in one pass. Registration (instead of an autograd.Function around the op) keeps the op
# one node that torch.compile, torch.export and opcheck understand.
def _setup_context(ctx, inputs, output):
    x, b = inputs
    ctx.save_for_backward(x)
    ctx.b_shape = b.shape


def _backward(ctx, grad_y):
    (x,) = ctx.saved_tensors
    grad_x, grad_b = torch.ops.square_bias.square_bias_backward(grad_y, x, list(ctx.b_shape))
    return (grad_x if ctx.needs_input_grad[0] else None, grad_b if ctx.needs_input_grad[1] else None)


torch.library.register_autograd("square_bias::square_bias", _backward, setup_context=_setup_context)


# --- fake ("meta") implementations: shapes and dtypes only, so torch.compile can trace without running C --------
@torch.library.register_fake("square_bias::square_bias")
def _square_bias_fake(x, b):
    check_inputs(x, b)  # the C++ checks do not run here: the same ones in Python
    return x.new_empty(x.shape)  # the C++ side returns a contiguous tensor of x's shape


@torch.library.register_fake("square_bias::square_bias_backward")
def _square_bias_backward_fake(grad_y, x, b_shape):
    return x.new_empty(x.shape), x.new_empty(b_shape)


# --- the seed's way, for comparison: an autograd.Function calling the op ------------------------------------------
class _SquareBiasFunction(torch.autograd.Function):
    """The seed wrapped its extension in an autograd.Function like this. It works in eager mode, but it is opaque
    to torch.library.opcheck and to torch.compile, which must run its Python forward/backward (a graph break unless
    dynamo can trace it), and every user must call .apply. Prefer register_autograd on the op (above)."""

    @staticmethod
    def forward(ctx, x, b):
        ctx.save_for_backward(x)
        ctx.b_shape = b.shape
        return torch.ops.square_bias.square_bias(x, b)

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return torch.ops.square_bias.square_bias_backward(grad_y, x, list(ctx.b_shape))


def square_bias_autograd_function(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The same op through the seed-style autograd.Function (kept for the lesson and its test)."""
    return _SquareBiasFunction.apply(x, b)


class SquareBias(torch.nn.Module):
    """y = x*x + bias with a learnable bias of shape `bias_shape` (default: a scalar), as in the seed's Test module."""

    def __init__(self, bias_shape: tuple[int, ...] = (), dtype: torch.dtype = torch.float32):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(bias_shape, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return square_bias(x, self.bias)
