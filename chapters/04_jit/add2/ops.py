"""add2's public API: c = a + b through the dispatcher ops registered by add2._C (src/add2_ops.cpp).

Each wrapper calls its op once. The op's C++ implementation checks the inputs (src/add2_torch.h: TypeError for a
dtype, ValueError for a device or shape, the messages of course.checks), so a call through torch.ops.add2.* directly
gets the same errors; nothing is checked twice, and no error is caught here. The ops get fake implementations (for
torch.compile, meta tensors and opcheck) here, and autograd formulas (add2's is in C++, src/add2_ops.cpp).
"""

from __future__ import annotations

import torch
from course import check_same, check_tensor
from course.build import import_extension

_C = import_extension("add2")  # loading the module runs TORCH_LIBRARY(add2, ...): torch.ops.add2.* appear

DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)

# OpOverloads, looked up once: calling .default skips the overload resolution of torch.ops.add2.add2(...)
_add2 = torch.ops.add2.add2.default
_add2_seed = torch.ops.add2.add2_seed.default
_add2_capped = torch.ops.add2.add2_capped.default
_pitfall_seed_n = torch.ops.add2.pitfall_seed_n.default
_emulate_seed = torch.ops.add2.emulate_seed.default


def add2(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a + b with the vectorized kernel (version 2). a and b: same shape, dtype and CUDA device, any layout
    (inputs that are not contiguous are copied first); c is contiguous."""
    return _add2(a, b)


def add2_seed(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a + b with the seed's grid-stride kernel (version 1); n comes from the tensors."""
    return _add2_seed(a, b)


def add2_capped(a: torch.Tensor, b: torch.Tensor, blocks_per_sm: int = 8) -> torch.Tensor:
    """Version 2 with the grid capped at `blocks_per_sm` blocks per SM, 1 to 64 (each thread loops): for the
    benchmark."""
    return _add2_capped(a, b, blocks_per_sm)


def pitfall_seed_n(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, n: int) -> torch.Tensor:
    """PITFALL, kept to show it: the seed's interface, writing a + b into c for the first `n` elements.

    n is trusted, as the seed trusted it: n < a.numel() silently leaves c's tail unwritten, and n > a.numel()
    reads and writes out of bounds (never call it so). Use add2_seed(a, b), which takes n from the tensors."""
    _pitfall_seed_n(c, a, b, n)
    return c


def emulate_seed(
    a: torch.Tensor, b: torch.Tensor, *, grid: int, block: int = 1024, n: int | None = None
) -> torch.Tensor:
    """Run version 1's grid-stride loop on the CPU for every (block, thread) of a grid x block launch.

    float32 CPU tensors. The output starts as NaN, so elements no thread wrote stay NaN. n defaults to a.numel()
    (must not exceed it: the emulation, unlike the seed, stays in bounds)."""
    c = torch.full_like(a, float("nan"), dtype=torch.float32, memory_format=torch.contiguous_format)
    _emulate_seed(c, a, b, a.numel() if n is None else n, grid, block)
    return c


def _check_fake(a: torch.Tensor, b: torch.Tensor) -> None:
    """What the C++ impl checks, for fake and meta tensors, which never reach it (the device type is not checked:
    meta tensors stand for CUDA ones). The same messages: course.checks is the Python side of one family."""
    check_tensor("a", a, dtypes=DTYPES)
    check_tensor("b", b, dtypes=DTYPES)
    check_same(a=a, b=b, attributes=("dtype", "shape", "device"))


# ---- fake implementations: shapes and dtypes only, for torch.compile, meta tensors and opcheck ----------------
@torch.library.register_fake("add2::add2")
def _(a, b):
    _check_fake(a, b)
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("add2::add2_seed")
def _(a, b):
    _check_fake(a, b)
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("add2::add2_capped")
def _(a, b, blocks_per_sm):
    if not 1 <= blocks_per_sm <= 64:
        raise ValueError(f"blocks_per_sm must be in [1, 64], got {blocks_per_sm}")
    _check_fake(a, b)
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("add2::pitfall_seed_n")
def _(c, a, b, n):
    _check_fake(a, b)
    return None


@torch.library.register_fake("add2::emulate_seed")
def _(c, a, b, n, grid, block):
    return None


# ---- autograd: d(a + b)/da = d(a + b)/db = 1 ------------------------------------------------------------------
# add2's autograd is registered in C++ (src/add2_ops.cpp); these two run a Python function on every call, which
# the benchmark's call-overhead table shows next to it.
def _backward_ab(ctx, grad):
    return grad, grad


def _backward_ab_cap(ctx, grad):
    return grad, grad, None


torch.library.register_autograd("add2::add2_seed", _backward_ab)
torch.library.register_autograd("add2::add2_capped", _backward_ab_cap)
