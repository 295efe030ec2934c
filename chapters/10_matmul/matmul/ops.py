"""The public op: torch.ops.matmul.matmul with autograd and fake (meta) implementations, and a Linear layer on it.

The compiled extension defines the ops (TORCH_LIBRARY in src/matmul_binding.cpp) with a CPU and a CUDA
implementation, and checks their inputs once, in C++. This module registers what PyTorch needs around them:
  - autograd: dA = dC·Bᵀ and dB = Aᵀ·dC, through the same op (Bᵀ and Aᵀ are views: the kernels read them through
    their strides, nothing is copied), so the backward runs the same kernels and is itself differentiable;
  - fake implementations, for torch.compile and meta tensors (shapes and dtypes only; the same checks in Python).
"""

from __future__ import annotations

import torch
from course.build import import_extension
from course.checks import check_same, check_tensor

import_extension("matmul")  # loads _C (or _C_exercise): the import registers torch.ops.matmul.*

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
TENSOR_CORE_DTYPES = (torch.float16, torch.bfloat16)
# "the fastest rung for the dtype": rung 8 for float32, rung 4 for float64; for float16/bfloat16 the GPU's best
# (11 on a Hopper GPU when TMA can read the operands, else 10): rung_used() says which.
BEST = -1
RUNG_COUNT = 9  # the fp32 CUDA-core ladder; part 2 of the chapter (tensor cores) numbers its rungs from here
FLOAT64_RUNGS = range(0, 5)
TENSOR_RUNGS = range(9, 12)  # float16 and bfloat16: fp32 accumulation, output in the inputs' dtype
RUNGS = {
    0: "naive: one thread per output, threadIdx.x walks rows (pitfall)",
    1: "coalesced: threadIdx.x walks columns",
    2: "shared-memory tiles, 32x32",
    3: "1-D register blocking: 8 outputs per thread",
    4: "2-D register blocking: 8x8 outputs per thread",
    5: "16-byte loads, A transposed in shared memory",
    6: "warp tiling: 2x2 blocks of 4x4 per thread",
    7: "pipelined: next tiles load during the arithmetic (3 stages)",
    8: "rung 7 + split-K when the output is too small",
    9: "tensor cores: WMMA 16x16x16 fragments (fp16/bf16)",
    10: "tensor cores: mma.sync m16n8k16, ldmatrix, swizzle, 4-stage cp.async (fp16/bf16)",
    11: "tensor cores: Hopper wgmma + TMA + mbarrier, producer/consumer warpgroups (fp16/bf16, sm_90a)",
}


def matmul(a: torch.Tensor, b: torch.Tensor, rung: int = BEST) -> torch.Tensor:
    """C = a @ b for 2-D float32/float64/float16/bfloat16 tensors of shapes (M, K) and (K, N), on the CPU or a GPU.

    Any strides: a.t(), b.t() and sliced views are read in place (rung 11 copies operands whose columns are not
    contiguous). On CUDA `rung` picks the kernel of the ladder (0-8 for float32, 0-4 for float64, 9-11 for float16
    and bfloat16, see RUNGS; -1, the default, the fastest); rung_used(a, b, rung) says which runs. The CPU has one
    implementation (a cache-blocked C loop; float16/bfloat16 through float32 copies). Differentiable in a and b;
    works under torch.compile. A wrong dtype raises TypeError, a wrong device, shape or rung ValueError."""
    return torch.ops.matmul.matmul(a, b, rung)


def matmul_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, rung: int = BEST) -> torch.Tensor:
    """matmul(a, b, rung) written into `out` (shape (M, N), a's dtype and device, rows contiguous; its row stride may
    exceed N). Every element of out is written. Not differentiable (out= ops never are). Returns out."""
    torch.ops.matmul.matmul_out(a, b, out, rung)
    return out


# --- the checks of the C++ implementation, in Python: for the fake implementations, which run instead of it ------
def _check_inputs(a: torch.Tensor, b: torch.Tensor) -> None:
    check_tensor("a", a, dtypes=DTYPES)
    check_tensor("b", b, dtypes=DTYPES)
    check_same(a=a, b=b, attributes=("dtype", "device"))
    check_tensor("a", a, ndim=2)
    check_tensor("b", b, ndim=2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            "a's columns must match b's rows (the inner dimension K), "
            f"but a has shape {tuple(a.shape)} and b has shape {tuple(b.shape)}"
        )


def rung_used(a: torch.Tensor, b: torch.Tensor, rung: int = BEST) -> int:
    """The rung that matmul(a, b, rung) runs for these CUDA tensors on their GPU: for float16/bfloat16, rung 11 (and
    BEST) become rung 10 where rung 11 cannot run (not a Hopper GPU, or operands TMA cannot read)."""
    return torch.ops.matmul.rung_used(a, b, rung)


def _check_rung(rung: int, dtype: torch.dtype) -> None:
    last = TENSOR_RUNGS[-1]
    if rung != BEST and not 0 <= rung <= last:
        raise ValueError(f"rung must be -1 (the best for the dtype) or 0..{last}, got {rung}")
    rungs = {torch.float32: range(RUNG_COUNT), torch.float64: FLOAT64_RUNGS}.get(dtype, TENSOR_RUNGS)
    if rung != BEST and rung not in rungs:
        raise ValueError(
            f"rung {rung} has no {str(dtype).removeprefix('torch.')} kernel: float32 runs rungs 0-{RUNG_COUNT - 1}, "
            f"float64 rungs 0-{FLOAT64_RUNGS[-1]}, float16 and bfloat16 rungs {TENSOR_RUNGS[0]}-{last}"
        )


@torch.library.register_fake("matmul::matmul")
def _matmul_fake(a, b, rung=BEST):
    _check_inputs(a, b)
    _check_rung(rung, a.dtype)
    return a.new_empty((a.shape[0], b.shape[1]))  # the C++ side returns a new contiguous (M, N) tensor


@torch.library.register_fake("matmul::matmul_out")
def _matmul_out_fake(a, b, out, rung=BEST):
    _check_inputs(a, b)
    _check_rung(rung, a.dtype)


@torch.library.register_fake("matmul::fma_chains")
def _fma_chains_fake(x, iterations):
    return torch.empty_like(x)


# --- autograd ------------------------------------------------------------------------------------------------------
# C = A·B, so dA = dC·Bᵀ (M×N · N×K) and dB = Aᵀ·dC (K×M · M×N). b.mT and a.mT are views with the two strides
# swapped: the op reads them in place (the fast rungs pick the kernel variant for that layout). The gradients use
# the forward's rung, so a test of rung r's gradient tests rung r's kernels.
def _setup_context(ctx, inputs, output):
    a, b, rung = inputs
    ctx.save_for_backward(a, b)
    ctx.rung = rung


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = torch.ops.matmul.matmul(grad, b.mT, ctx.rung) if ctx.needs_input_grad[0] else None
    grad_b = torch.ops.matmul.matmul(a.mT, grad, ctx.rung) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None


torch.library.register_autograd("matmul::matmul", _backward, setup_context=_setup_context)


# --- a drop-in for torch.nn.Linear -----------------------------------------------------------------------------------
class Linear(torch.nn.Linear):
    """torch.nn.Linear whose matrix product is this chapter's op: y = x·Wᵀ + b.

    Same parameters, initialisation and state_dict as torch.nn.Linear (it is one), so it replaces it in a model and
    loads its weights. x may have any number of leading dimensions, as for nn.Linear; they are flattened into the
    rows of one matrix (a view when x is contiguous). Wᵀ is a view of the weight: no copy. `rung` picks the GPU
    kernel (-1: the fastest)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None, rung=BEST):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.rung = rung

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x if x.dim() == 2 else x.reshape(-1, self.in_features)
        y = matmul(rows, self.weight.mT, self.rung)
        if self.bias is not None:
            y = y + self.bias
        return y if x.dim() == 2 else y.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, rung={self.rung}"
