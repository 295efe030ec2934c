"""The public ops: torch.ops.rowwise.* and their fake implementations.

The compiled extension defines the ops (TORCH_LIBRARY in src/rowwise_binding.cpp) with a CPU and a CUDA
implementation each, checks their inputs, and registers their autograd (in C++, for the Autograd key: a call runs no
Python beyond the line that makes it); importing it is what makes torch.ops.rowwise.* exist. This module adds the
fake (shape-only) implementations that torch.compile and meta tensors use, and the Python functions that call the ops.
"""

from __future__ import annotations

import torch
from course.build import import_extension

_C = import_extension("rowwise")  # registers torch.ops.rowwise.*

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
BEST = -1  # the top rung this GPU runs: 5 where thread-block clusters exist (sm_90), else 4
RUNGS = {
    1: "naive: a block per row, three passes over global memory (softmax forward)",
    2: "warp: a warp per row, the online (max, sum), x read twice (softmax forward)",
    3: "registers: the row held in registers in 16-byte packs, one read and one write; rows that fit a block",
    4: "split: + rows longer than a block over several blocks, statistics through global memory, two launches",
    5: "cluster: + those blocks as a thread-block cluster, statistics through its shared memory (sm_90)",
}

_ops = torch.ops.rowwise


def softmax(x: torch.Tensor, *, rung: int = BEST) -> torch.Tensor:
    """softmax over the last dimension, like torch.softmax(x, -1). Differentiable. On a GPU `rung` picks a kernel
    of the ladder (RUNGS; -1, the default, the top rung the GPU runs)."""
    return _ops.softmax(x, rung)


def layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
    *,
    rung: int = BEST,
) -> torch.Tensor:
    """LayerNorm over the last dimension, like F.layer_norm(x, x.shape[-1:], weight, bias, eps). Differentiable in
    x, weight and bias."""
    return _ops.layer_norm(x, weight, bias, eps, rung)[0]


def rms_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None = None,
    eps: float | None = None,
    *,
    rung: int = BEST,
) -> torch.Tensor:
    """RMSNorm over the last dimension, like F.rms_norm(x, x.shape[-1:], weight, eps); eps=None means
    torch.finfo(x.dtype).eps, as there. Differentiable in x and weight."""
    if eps is None:
        eps = torch.finfo(x.dtype).eps if isinstance(x, torch.Tensor) and x.dtype.is_floating_point else 1e-6
    return _ops.rms_norm(x, weight, eps, rung)[0]


def describe(x: torch.Tensor, op: str, *, backward: bool = False, rung: int = BEST) -> str:
    """The launch the op would make for x on its device, e.g. "rung 5: 128 threads a row, 4 packs of 16 bytes a
    thread, 256-thread blocks, 8192 blocks"."""
    return _ops.describe(x, op, backward, rung)


# ---- fake implementations: shapes and dtypes only (torch.compile, meta tensors) ----------------------------------
def _acc(x: torch.Tensor) -> torch.dtype:
    return torch.float64 if x.dtype == torch.float64 else torch.float32


@torch.library.register_fake("rowwise::softmax")
def _(x, rung=BEST):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("rowwise::softmax_backward")
def _(y, dy, rung=BEST):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


@torch.library.register_fake("rowwise::layer_norm")
def _(x, weight, bias, eps, rung=BEST):
    stats = x.new_empty(x.shape[:-1], dtype=_acc(x))
    return torch.empty_like(x, memory_format=torch.contiguous_format), stats, torch.empty_like(stats)


@torch.library.register_fake("rowwise::layer_norm_backward")
def _(dy, x, weight, mean, rstd, grads, rung=BEST):
    n = x.shape[-1]
    return (
        torch.empty_like(x, memory_format=torch.contiguous_format),
        x.new_empty((n if grads[0] else 0,)),
        x.new_empty((n if grads[1] else 0,)),
    )


@torch.library.register_fake("rowwise::rms_norm")
def _(x, weight, eps, rung=BEST):
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty(x.shape[:-1], dtype=_acc(x))


@torch.library.register_fake("rowwise::rms_norm_backward")
def _(dy, x, weight, rstd, want_dweight, rung=BEST):
    return torch.empty_like(x, memory_format=torch.contiguous_format), x.new_empty(
        (x.shape[-1] if want_dweight else 0,)
    )
