"""The public op: input checks, then torch.ops.norm_diff.norm_diff; autograd and fake (meta) registrations.

The compiled extension defines the ops (TORCH_LIBRARY in src/norm_diff_binding.cpp) with a CPU and a CUDA
implementation each; importing it is what makes torch.ops.norm_diff.* exist.
"""

from __future__ import annotations

import torch
from course.build import import_extension
from course.checks import call_below_autograd_if_no_grad, check_same, check_tensor, same_plain_tensors

_C = import_extension("norm_diff")  # registers torch.ops.norm_diff.norm_diff and .norm_diff_backward

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_DTYPE_SET = frozenset(DTYPES)
_norm_diff = torch.ops.norm_diff.norm_diff.default  # the OpOverload, looked up once
_sum_squares = torch.ops.norm_diff.norm_diff_sum_squares.default
VERSIONS = range(0, 5)
BEST_VERSION = 3
RUNGS = {
    0: "seed: one block, 64x64 shared buffer (pitfall)",
    1: "shared-memory tree, two passes",
    2: "warp shuffles, two passes",
    3: "16-byte loads, one pass, last block done",
    4: "CUB BlockReduce, one pass",
}


def _check_pair(a: torch.Tensor, b: torch.Tensor) -> None:
    """The full checks, which name the problem."""
    check_tensor("a", a, dtypes=DTYPES)
    check_tensor("b", b, dtypes=DTYPES)
    check_same(a=a, b=b)  # device, then dtype, then shape
    if a.device.type not in ("cpu", "cuda"):
        raise ValueError(f"a and b must be on the CPU or a CUDA device, but they are on {a.device}")


def norm_diff(a: torch.Tensor, b: torch.Tensor, version: int = BEST_VERSION) -> torch.Tensor:
    """‖a − b‖₂ over all elements, as a 0-dim tensor of a's dtype (like torch.norm(a - b)), differentiable in a and
    b. On CUDA, `version` picks the rung of the ladder (0-4, see RUNGS); the CPU has one implementation."""
    if not (same_plain_tensors(a, b, _DTYPE_SET) and a.is_cuda and type(version) is int and version in VERSIONS):
        _check_pair(a, b)  # not the common case: the full checks (the fast test above costs far less)
        if isinstance(version, bool) or not isinstance(version, int) or version not in VERSIONS:
            raise ValueError(f"version must be one of {list(VERSIONS)}, got {version!r}")
    fast = call_below_autograd_if_no_grad(_norm_diff, a, b, extra=(version,))  # nothing to record: skip autograd
    return _norm_diff(a, b, version) if fast is None else fast


def sum_squares_diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Σ (a − b)² over all elements as a 0-dim float64 tensor on a's device: ‖a − b‖₂ before its square root, summed
    by the best rung and kept in the double it accumulates in. Pieces of a and b held by several GPUs add their
    sums; chapter 08 does that with one all_reduce. Differentiable in a and b."""
    if not (same_plain_tensors(a, b, _DTYPE_SET) and a.is_cuda):
        _check_pair(a, b)
    return _sum_squares(a, b)


@torch.library.register_fake("norm_diff::norm_diff")
def _(a, b, version=BEST_VERSION):
    torch._check(a.shape == b.shape, lambda: "a and b must have the same shape")
    return a.new_empty(())


@torch.library.register_fake("norm_diff::norm_diff_sum_squares")
def _(a, b):
    torch._check(a.shape == b.shape, lambda: "a and b must have the same shape")
    return a.new_empty((), dtype=torch.float64)


@torch.library.register_fake("norm_diff::norm_diff_backward")
def _(grad, a, b, norm):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    a, b, _version = inputs
    ctx.save_for_backward(a, b, output)


def _backward(ctx, grad):
    a, b, norm = ctx.saved_tensors
    grad_a = torch.ops.norm_diff.norm_diff_backward(grad, a, b, norm)
    return grad_a, -grad_a, None  # d‖a − b‖/db = −d‖a − b‖/da; no gradient for the version number


torch.library.register_autograd("norm_diff::norm_diff", _backward, setup_context=_setup_context)


def _sum_squares_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _sum_squares_backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = (2 * grad) * (a - b)  # d Σ(a − b)²/da = 2(a − b): one element-wise expression, PyTorch's own kernels
    return grad_a.to(a.dtype), (-grad_a).to(b.dtype)


torch.library.register_autograd(
    "norm_diff::norm_diff_sum_squares", _sum_squares_backward, setup_context=_sum_squares_setup_context
)
