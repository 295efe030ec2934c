"""The peer: a Triton matmul written the way Triton's tutorial writes it ("Matrix Multiplication", tutorial 03),
autotuned over the tutorial's configs for CUDA, in real fp32, and in bf16/fp16 for part 2 (the tensor cores).

    c = triton_matmul(a, b)      # a (M, K), b (K, N) float32, bfloat16 or float16 CUDA tensors, any strides

One program computes a BLOCK_SIZE_M × BLOCK_SIZE_N tile of C, walking K in steps of BLOCK_SIZE_K; programs are
taken in groups of GROUP_SIZE_M tile rows (the tutorial's "L2 cache optimization", rung 7's grouped order too).
tl.dot with input_precision="ieee" multiplies in full fp32 on the CUDA cores: Triton's default for fp32 inputs is
"tf32" (tensor cores, 10-bit mantissas), which would not be the same arithmetic as the chapter's kernels or as
cuBLAS with TF32 off. The autotuner times every config once per new (M, N, K), then caches the winner.
In bf16/fp16 (part 2) tl.dot runs on the tensor cores with fp32 sums and C is stored in the inputs' dtype, as the
tutorial's fp16 kernel does; that kernel has its own autotuner, so its winners are cached apart from fp32's.

Without a GPU the kernel runs in Triton's interpreter (TRITON_INTERPRET=1, NumPy on the CPU) with one fixed config
(run_untuned): that is how the CPU tests check it (fp32 and fp16: NumPy has no bfloat16).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


def get_cuda_autotune_config():
    """The tutorial's configs for CUDA GPUs (its fp8-only configs left out). Those that need more shared memory than
    a block may have in fp32 (4 bytes per element, twice the tutorial's fp16) fail to compile, and the autotuner
    skips them."""
    return [
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}, num_stages=3, num_warps=8
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=5, num_warps=2
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=5, num_warps=2
        ),
    ]


UNTUNED = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 4}  # the interpreter's config


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, IEEE: tl.constexpr,
):  # fmt: skip
    """C = A·B for one BLOCK_SIZE_M × BLOCK_SIZE_N tile of C per program (the tutorial's kernel). IEEE: fp32 inputs
    multiplied in real fp32; otherwise 16-bit inputs on the tensor cores. fp32 sums; C in its own dtype."""
    # The program's tile, in grouped order.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Pointers to the first K-block of A's rows and B's columns (rows and columns past M, N wrap around: their
    # products land in rows and columns of C that the masked store leaves out).
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # Walk K; the masks fill the last, partial K-block with zeros.
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        if IEEE:
            accumulator = tl.dot(a, b, accumulator, input_precision="ieee")  # real fp32, not tf32
        else:
            accumulator = tl.dot(a, b, accumulator)  # bf16/fp16 on the tensor cores, fp32 sums
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, accumulator.to(c_ptr.dtype.element_ty), mask=c_mask)


autotuned_kernel = triton.autotune(configs=get_cuda_autotune_config(), key=["M", "N", "K"])(matmul_kernel)
autotuned_kernel_16bit = triton.autotune(configs=get_cuda_autotune_config(), key=["M", "N", "K"])(matmul_kernel)
DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _launch(kernel, a: torch.Tensor, b: torch.Tensor, **config) -> torch.Tensor:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"triton_matmul takes (M, K) and (K, N) matrices, got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype not in DTYPES or b.dtype != a.dtype:
        raise TypeError(f"triton_matmul takes two float32, bfloat16 or float16 matrices, got {a.dtype} and {b.dtype}")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)

    kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                 IEEE=a.dtype == torch.float32, **config)  # fmt: skip
    return c


def triton_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = a @ b by the autotuned Triton kernel (float32, bfloat16 or float16 CUDA tensors)."""
    return _launch(autotuned_kernel if a.dtype == torch.float32 else autotuned_kernel_16bit, a, b)


def run_untuned(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The same kernel with the fixed config UNTUNED, bypassing the autotuner: for Triton's CPU interpreter."""
    return _launch(matmul_kernel, a, b, **UNTUNED)
