"""The four works written in Triton, as a Triton user would write them: one program per block of elements, the
block size and warps per program left to the autotuner (it times each config once per new n, then caches the
winner).

    y = square_bias(x, b)     # x*x + b, b a 0-dim tensor
    c = add(a, b)
    y = relu(x)
    r = norm_diff(a, b)       # ||a - b||_2: each program sums its block's squares, one atomic add per program

Compare with the CUDA C of chapters 03-06: no grid-stride loop, no vector types, no shared memory or warp shuffles
(tl.sum does the block's reduction), no launcher, no binding; the price is what the compiler chooses for you.
Without a GPU the kernels still run through Triton's interpreter (TRITON_INTERPRET=1, NumPy on the CPU), with a
fixed config since the autotuner needs a GPU to time configs: see `run_untuned` and the chapter's tests.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Block sizes and warps the autotuner tries: 8 configs, each timed once per new n (part of the "first call" column).
CONFIGS = [triton.Config({"BLOCK": block}, num_warps=warps) for block in (1024, 2048, 4096, 8192) for warps in (4, 8)]


def _quick_bench(kernel_call, quantiles):
    """The autotuner's timer with shorter runs than its default (25 ms warm-up, 100 ms of repeats per config), so
    that tuning 8 configs at each of 10 sizes takes seconds, not a minute; plenty for kernels of at most 1 ms."""
    return triton.testing.do_bench(kernel_call, warmup=5, rep=25, quantiles=quantiles)


UNTUNED = {"BLOCK": 1024}  # the interpreter's config


@triton.jit
def _square_bias_kernel(x_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    tl.store(y_ptr + offsets, x * x + tl.load(b_ptr), mask=inside)


@triton.jit
def _add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    tl.store(
        c_ptr + offsets, tl.load(a_ptr + offsets, mask=inside) + tl.load(b_ptr + offsets, mask=inside), mask=inside
    )


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    tl.store(y_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=inside), 0.0), mask=inside)


@triton.jit
def _norm_squares_kernel(a_ptr, b_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    d = tl.load(a_ptr + offsets, mask=inside, other=0.0) - tl.load(b_ptr + offsets, mask=inside, other=0.0)
    tl.atomic_add(sum_ptr, tl.sum(d * d, axis=0))  # float atomics: the order, so the last bits, vary by run


_tuned = {
    name: triton.autotune(configs=CONFIGS, key=["n"], do_bench=_quick_bench, **extra)(kernel)
    for name, kernel, extra in [
        ("square_bias", _square_bias_kernel, {}),
        ("add", _add_kernel, {}),
        ("relu", _relu_kernel, {}),
        # The autotuner runs the kernel once per config: the sum must restart from 0 before each.
        ("norm", _norm_squares_kernel, {"reset_to_zero": ["sum_ptr"]}),
    ]
}


def _grid(n: int):
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


def square_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    if x.numel():  # no programs to launch for an empty tensor
        _tuned["square_bias"][_grid(x.numel())](x, b, y, x.numel())
    return y


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    c = torch.empty_like(a)
    if a.numel():  # no programs to launch for an empty tensor
        _tuned["add"][_grid(a.numel())](a, b, c, a.numel())
    return c


def relu(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    if x.numel():  # no programs to launch for an empty tensor
        _tuned["relu"][_grid(x.numel())](x, y, x.numel())
    return y


def norm_diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    total = torch.zeros((), dtype=torch.float32, device=a.device)
    if a.numel():  # no programs to launch for an empty tensor
        _tuned["norm"][_grid(a.numel())](a, b, total, a.numel())
    return total.sqrt()


def run_untuned(work: str, *tensors: torch.Tensor) -> torch.Tensor:
    """One work with the fixed config UNTUNED, bypassing the autotuner: for Triton's CPU interpreter."""
    n = tensors[0].numel()
    grid = (triton.cdiv(n, UNTUNED["BLOCK"]),)
    kernel = _tuned[work].fn
    if work == "norm":
        total = torch.zeros((), dtype=torch.float32, device=tensors[0].device)
        kernel[grid](*tensors, total, n, **UNTUNED)
        return total.sqrt()
    out = torch.empty_like(tensors[0])
    kernel[grid](*tensors, out, n, **UNTUNED)
    return out
