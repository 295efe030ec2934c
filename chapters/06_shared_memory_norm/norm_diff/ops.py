"""The public op: calls torch.ops.norm_diff.norm_diff; the fake (meta) registrations.

The compiled extension defines the ops (TORCH_LIBRARY in src/norm_diff_binding.cpp) with a CPU and a CUDA
implementation each, which check their inputs (TypeError for a dtype, ValueError for a device, shape or version,
the messages of course.checks), and their autograd kernels, in C++: a call runs no Python of this file beyond the
function that calls the op. Importing the extension is what makes torch.ops.norm_diff.* exist.
"""

from __future__ import annotations

import torch
from course.build import import_extension
from course.checks import check_same, check_tensor

_C = import_extension("norm_diff")  # registers torch.ops.norm_diff.norm_diff, .norm_diff_backward, ...

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
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


def norm_diff(a: torch.Tensor, b: torch.Tensor, version: int = BEST_VERSION) -> torch.Tensor:
    """‖a − b‖₂ over all elements, as a 0-dim tensor of a's dtype (like torch.norm(a - b)), differentiable in a and
    b. On CUDA, `version` picks the rung of the ladder (0-4, see RUNGS); the CPU has one implementation."""
    return _norm_diff(a, b, version)


def sum_squares_diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Σ (a − b)² over all elements as a 0-dim float64 tensor on a's device: ‖a − b‖₂ before its square root, summed
    by the best rung and kept in the double it accumulates in. Pieces of a and b held by several GPUs add their
    sums; chapter 08 does that with one all_reduce. Differentiable in a and b."""
    return _sum_squares(a, b)


# ---- fake implementations: shapes and dtypes only, for torch.compile, meta tensors and opcheck ----------------
# They run instead of the C++ impls, so they check what those check, with the same messages (course.checks is the
# Python side of the same family). The device type is not checked: a meta tensor stands for any device.
def _check_pair(a: torch.Tensor, b: torch.Tensor) -> None:
    check_tensor("a", a, dtypes=DTYPES)
    check_tensor("b", b, dtypes=DTYPES)
    check_same(a=a, b=b)  # device, then dtype, then shape


@torch.library.register_fake("norm_diff::norm_diff")
def _(a, b, version=BEST_VERSION):
    _check_pair(a, b)
    if version not in VERSIONS:
        raise ValueError(f"version must be in {VERSIONS[0]}..{VERSIONS[-1]}, got {version}")
    return a.new_empty(())


@torch.library.register_fake("norm_diff::norm_diff_sum_squares")
def _(a, b):
    _check_pair(a, b)
    return a.new_empty((), dtype=torch.float64)


@torch.library.register_fake("norm_diff::norm_diff_backward")
def _(grad, a, b, norm):
    _check_pair(a, b)
    return torch.empty_like(a, memory_format=torch.contiguous_format)
