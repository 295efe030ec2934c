"""add2's public API: c = a + b through the dispatcher ops registered by add2._C (src/add2_ops.cpp).

Each wrapper checks its inputs in Python first (messages name the argument), makes them contiguous, then calls
torch.ops.add2.*. The ops get fake implementations (for torch.compile and opcheck) here, and autograd formulas
(add2's is in C++, src/add2_ops.cpp).
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


def _check(a: object, b: object) -> tuple[torch.Tensor, torch.Tensor]:
    check_tensor("a", a, dtypes=DTYPES)
    check_tensor("b", b, dtypes=DTYPES)
    check_same(a=a, b=b, attributes=("dtype", "shape", "device"))
    check_tensor("a", a, device="cuda")
    return a.contiguous(), b.contiguous()


def add2(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a + b with the vectorized kernel (version 2). a and b: same shape, dtype and CUDA device."""
    if type(a) is torch.Tensor and type(b) is torch.Tensor and not torch.compiler.is_compiling():
        # The common case in one step: C++ checks the inputs (add2_torch::check_inputs) and calls the op through the
        # dispatcher. torch.ops' generic entry and checks repeated in Python would cost as much as a small kernel.
        try:
            return _C.call_add2(a, b)
        except RuntimeError:
            pass  # a check failed, or an input is not contiguous: the Python checks below name the problem
    # Tensor subclasses and torch.compile take the op as the dispatcher knows it (its fake impl, __torch_function__)
    a, b = _check(a, b)
    return _add2(a, b)


def add2_seed(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a + b with the seed's grid-stride kernel (version 1); n comes from the tensors."""
    a, b = _check(a, b)
    return _add2_seed(a, b)


def add2_capped(a: torch.Tensor, b: torch.Tensor, blocks_per_sm: int = 8) -> torch.Tensor:
    """Version 2 with the grid capped at `blocks_per_sm` blocks per SM (each thread loops): for the benchmark."""
    if not isinstance(blocks_per_sm, int) or not 1 <= blocks_per_sm <= 64:
        raise ValueError(f"blocks_per_sm must be an int in [1, 64], got {blocks_per_sm!r}")
    a, b = _check(a, b)
    return _add2_capped(a, b, blocks_per_sm)


def pitfall_seed_n(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, n: int) -> torch.Tensor:
    """PITFALL, kept to show it: the seed's interface, writing a + b into c for the first `n` elements.

    n is trusted, as the seed trusted it: n < a.numel() silently leaves c's tail unwritten, and n > a.numel()
    reads and writes out of bounds (never call it so). Use add2_seed(a, b), which takes n from the tensors."""
    a, b = _check(a, b)
    check_same(a=a, c=c, attributes=("dtype", "shape", "device"))
    if not c.is_contiguous():
        raise ValueError("c must be contiguous")
    torch.ops.add2.pitfall_seed_n(c, a, b, n)
    return c


def emulate_seed(
    a: torch.Tensor, b: torch.Tensor, *, grid: int, block: int = 1024, n: int | None = None
) -> torch.Tensor:
    """Run version 1's grid-stride loop on the CPU for every (block, thread) of a grid x block launch.

    float32 CPU tensors. The output starts as NaN, so elements no thread wrote stay NaN. n defaults to a.numel()
    (must not exceed it: the emulation, unlike the seed, stays in bounds)."""
    check_tensor("a", a, dtypes=(torch.float32,), device="cpu")
    check_tensor("b", b, dtypes=(torch.float32,), device="cpu")
    check_same(a=a, b=b, attributes=("shape",))
    a, b = a.contiguous(), b.contiguous()
    c = torch.full_like(a, float("nan"))
    torch.ops.add2.emulate_seed(c, a, b, a.numel() if n is None else n, grid, block)
    return c


# ---- fake implementations: shapes and dtypes only, for torch.compile, meta tensors and opcheck ----------------
@torch.library.register_fake("add2::add2")
def _(a, b):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("add2::add2_seed")
def _(a, b):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("add2::add2_capped")
def _(a, b, blocks_per_sm):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("add2::pitfall_seed_n")
def _(c, a, b, n):
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
