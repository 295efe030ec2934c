"""The public ops: torch.ops.rowwise.* with autograd (torch.library.register_autograd) and fake implementations.

The compiled extension defines the ops (TORCH_LIBRARY in src/rowwise_binding.cpp), with a CPU and a CUDA
implementation each, and checks their inputs; importing it is what makes torch.ops.rowwise.* exist. This module
adds what the dispatcher needs besides: the backward of each op and its fake (shape-only) version for torch.compile.

Autograd is registered in Python (register_autograd), not as a C++ autograd kernel. Its cost is host time: on the
H100 about 140 µs a forward+backward, which hides behind the kernels in fp32 but not quite in bf16 at 16384 × 4096
(the kernels take ~250 µs there; NOTES.md has the measurement). The C++ autograd kernel of chapters 03, 04 and 06 is
the way to remove it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from course.build import import_extension

_C = import_extension("rowwise")  # registers torch.ops.rowwise.*

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
VERSIONS = range(0, 6)
RUNGS = {
    0: "auto: the best version for the shape",
    1: "naive: a block per row, three passes over the row (softmax forward)",
    2: "warp online: a warp per row, online (max, sum), two passes (softmax forward)",
    3: "registers: the row held in registers, one read and one write",
    4: "cluster: a row over a thread-block cluster, statistics through DSMEM (sm_90)",
    5: "split: a row over blocks, statistics through global memory, two launches",
}
BACKWARD_VERSIONS = (0, 4, 5)  # 1 and 2 are forward kernels only; 3's backward holds fewer elements per thread
# than its forward (two rows in registers), so for versions 1-3 the backward is version 0's: 3 where the row fits

_ops = torch.ops.rowwise


def _backward_version(version: int) -> int:
    return version if version in BACKWARD_VERSIONS else 0


def softmax(x: torch.Tensor, *, version: int = 0, tune: Sequence[int] = ()) -> torch.Tensor:
    """softmax over the last dimension, like torch.softmax(x, -1). Differentiable."""
    return _ops.softmax(x, version, list(tune))


def layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
    *,
    version: int = 0,
    tune: Sequence[int] = (),
) -> torch.Tensor:
    """LayerNorm over the last dimension, like F.layer_norm(x, x.shape[-1:], weight, bias, eps). Differentiable in
    x, weight and bias."""
    return _ops.layer_norm(x, weight, bias, eps, version, list(tune))[0]


def rms_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None = None,
    eps: float | None = None,
    *,
    version: int = 0,
    tune: Sequence[int] = (),
) -> torch.Tensor:
    """RMSNorm over the last dimension, like F.rms_norm(x, x.shape[-1:], weight, eps); eps=None means
    torch.finfo(x.dtype).eps, as there. Differentiable in x and weight."""
    if eps is None:
        eps = torch.finfo(x.dtype).eps if isinstance(x, torch.Tensor) and x.dtype.is_floating_point else 1e-6
    return _ops.rms_norm(x, weight, eps, version, list(tune))[0]


def describe(x: torch.Tensor, op: str, *, backward: bool = False, version: int = 0, tune: Sequence[int] = ()) -> str:
    """The launch the op would make for x on its device, e.g. "registers: 128 threads per row, ..."."""
    return _ops.describe(x, op, backward, version, list(tune))


# ---- fake implementations: shapes and dtypes only (torch.compile, meta tensors) ----------------------------------
def _acc(x: torch.Tensor) -> torch.dtype:
    return torch.float64 if x.dtype == torch.float64 else torch.float32


@torch.library.register_fake("rowwise::softmax")
def _(x, version=0, tune=()):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("rowwise::softmax_backward")
def _(y, dy, version=0, tune=()):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


@torch.library.register_fake("rowwise::layer_norm")
def _(x, weight, bias, eps, version=0, tune=()):
    stats = x.new_empty(x.shape[:-1], dtype=_acc(x))
    return torch.empty_like(x, memory_format=torch.contiguous_format), stats, torch.empty_like(stats)


@torch.library.register_fake("rowwise::layer_norm_backward")
def _(dy, x, weight, mean, rstd, grads, version=0, tune=()):
    n = x.shape[-1]
    return (
        torch.empty_like(x, memory_format=torch.contiguous_format),
        x.new_empty((n if grads[0] else 0,)),
        x.new_empty((n if grads[1] else 0,)),
    )


@torch.library.register_fake("rowwise::rms_norm")
def _(x, weight, eps, version=0, tune=()):
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty(x.shape[:-1], dtype=_acc(x))


@torch.library.register_fake("rowwise::rms_norm_backward")
def _(dy, x, weight, rstd, want_dweight, version=0, tune=()):
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty(
        (x.shape[-1] if want_dweight else 0,)
    )


# ---- autograd ----------------------------------------------------------------------------------------------------
def _softmax_setup(ctx, inputs, output):
    ctx.version = _backward_version(inputs[1])
    ctx.save_for_backward(output)  # dx = y (dy - sum(y dy)): the output is all the backward needs


def _softmax_backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return _ops.softmax_backward(y, grad, ctx.version, []), None, None


torch.library.register_autograd("rowwise::softmax", _softmax_backward, setup_context=_softmax_setup)


def _layer_norm_setup(ctx, inputs, output):
    x, weight, bias, _eps, version, _tune = inputs
    _y, mean, rstd = output
    ctx.mark_non_differentiable(mean, rstd)
    # No zero-filled gradients for mean and rstd, which nothing differentiates: autograd would otherwise allocate
    # and fill two tensors on every backward (measured on the H100: ~95 µs of host time a call, as much as the
    # kernels' own time at 16384 × 4096 bf16).
    ctx.set_materialize_grads(False)
    ctx.version = _backward_version(version)
    ctx.save_for_backward(x, weight, mean, rstd)


def _layer_norm_backward(ctx, grad, _grad_mean, _grad_rstd):
    if grad is None:  # y was not used (set_materialize_grads(False) passes None): nothing flows back
        return None, None, None, None, None, None
    x, weight, mean, rstd = ctx.saved_tensors
    want_w, want_b = ctx.needs_input_grad[1], ctx.needs_input_grad[2]
    dx, dw, db = _ops.layer_norm_backward(grad, x, weight, mean, rstd, [want_w, want_b], ctx.version, [])
    return dx, dw if want_w else None, db if want_b else None, None, None, None


torch.library.register_autograd("rowwise::layer_norm", _layer_norm_backward, setup_context=_layer_norm_setup)


def _rms_norm_setup(ctx, inputs, output):
    x, weight, _eps, version, _tune = inputs
    _y, rstd = output
    ctx.mark_non_differentiable(rstd)
    ctx.set_materialize_grads(False)  # as layer_norm: no zero-filled gradient for rstd
    ctx.version = _backward_version(version)
    ctx.save_for_backward(x, weight, rstd)


def _rms_norm_backward(ctx, grad, _grad_rstd):
    if grad is None:
        return None, None, None, None, None
    x, weight, rstd = ctx.saved_tensors
    want_w = ctx.needs_input_grad[1]
    dx, dw = _ops.rms_norm_backward(grad, x, weight, rstd, want_w, ctx.version, [])
    return dx, dw if want_w else None, None, None, None


torch.library.register_autograd("rowwise::rms_norm", _rms_norm_backward, setup_context=_rms_norm_setup)
