"""The chapter's demo (`make run`): the op on the CPU, rung 2 emulated on the CPU, rung 0's pitfall in sectors, the
C loop against torch's CPU matmul; then every rung on the GPU (skipped with a message when there is none)."""

from __future__ import annotations

import time

import torch
from course.gpu import gpu_skip_reason

from matmul import RUNG_COUNT, RUNGS, TENSOR_RUNGS, Linear, matmul, rung_used
from matmul.coalescing import sectors_per_request


def rel_error(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> float:
    ref = a.double() @ b.double()
    return ((c.double() - ref).norm() / ref.norm()).item()


def gflops(fn, flop: float, repeat: int = 3) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return flop * repeat / (time.perf_counter() - start) / 1e9


def cpu_part() -> None:
    print("== the op on the CPU (a cache-blocked C loop) ==")
    torch.manual_seed(0)
    a, b = torch.randn(300, 200), torch.randn(200, 100)
    print(f"  matmul(a, b)        relative error vs float64: {rel_error(matmul(a, b), a, b):.1e}")
    print(f"  a @ b (torch)       relative error vs float64: {rel_error(a @ b, a, b):.1e}")
    print(f"  matmul(b.t(), a.t()) reads the transposes in place: {rel_error(matmul(b.t(), a.t()), b.t(), a.t()):.1e}")
    x = a.clone().requires_grad_()
    matmul(x, b).sum().backward()
    print(f"  gradient of sum(A·B) w.r.t. A = ones·Bᵀ: max error {(x.grad - b.sum(1)).abs().max().item():.1e}")
    layer = Linear(200, 10)
    print(f"  Linear(200, 10) on a (300, 200) batch: output {tuple(layer(a).shape)}")

    print("\n== rung 2 (shared-memory tiles) emulated on the CPU, phase by phase ==")
    e = torch.ops.matmul.emulate_shared_tiles(a, b)
    print(f"  the kernel's per-thread code on every thread of its grid: relative error {rel_error(e, a, b):.1e}")

    print("\n== rung 0's pitfall: 32-byte sectors one warp touches per access (A, B, C row-major, 4096 wide) ==")
    for rung in (0, 1):
        print(f"  rung {rung}: {sectors_per_request(rung)}")

    print("\n== the C loop against torch's CPU matmul (a BLAS), float32, 512³ ==")
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    flop = 2 * 512**3
    ours = gflops(lambda: matmul(a, b), flop)
    threads = torch.get_num_threads()
    theirs = gflops(lambda: a @ b, flop)
    torch.set_num_threads(1)
    theirs_one = gflops(lambda: a @ b, flop)
    torch.set_num_threads(threads)
    print(f"  ours, 1 thread:          {ours:7.1f} GFLOP/s")
    print(f"  torch, 1 thread:         {theirs_one:7.1f} GFLOP/s")
    print(f"  torch, {threads} threads:        {theirs:7.1f} GFLOP/s   (timings on a shared machine move a lot)")


def gpu_part() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    print("\n== every rung on the GPU, fp32, 2048³ ==")
    n = 2048
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    from course.timing import time_cuda

    t = time_cuda(lambda: torch.mm(a, b), repeat=10)
    print(f"  cuBLAS (TF32 off): {2 * n**3 / t.median_ms / 1e9:6.1f} TFLOP/s")
    for rung, what in [(r, w) for r, w in RUNGS.items() if r < RUNG_COUNT]:
        error = rel_error(matmul(a, b, rung), a, b)
        t = time_cuda(lambda r=rung: matmul(a, b, r), warmup=1, repeat=3 if rung < 2 else 10)
        print(f"  rung {rung}: {2 * n**3 / t.median_ms / 1e9:6.1f} TFLOP/s  error {error:.1e}  ({what})")

    print("\n== a small output with a long K: rung 8 splits K ==")
    a, b = torch.randn(64, 65536, device="cuda"), torch.randn(65536, 64, device="cuda")
    for rung in (7, 8):
        t = time_cuda(lambda r=rung: matmul(a, b, r), repeat=10)
        print(f"  rung {rung}: {t.median_ms:6.3f} ms, error {rel_error(matmul(a, b, rung), a, b):.1e}")
    print(f"  cuBLAS: error {rel_error(a @ b, a, b):.1e}")

    print("\n== the tensor-core rungs, bf16 inputs, fp32 sums, bf16 output, 4096³ ==")
    n = 4096
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    t = time_cuda(lambda: torch.mm(a, b), repeat=10)
    print(f"  cuBLAS bf16: {2 * n**3 / t.median_ms / 1e9:6.1f} TFLOP/s  error {rel_error(a @ b, a, b):.1e}")
    for rung in TENSOR_RUNGS:
        ran = rung_used(a, b, rung)
        error = rel_error(matmul(a, b, rung), a, b)
        t = time_cuda(lambda r=rung: matmul(a, b, r), warmup=1, repeat=10)
        print(f"  rung {rung} (ran rung {ran}): {2 * n**3 / t.median_ms / 1e9:6.1f} TFLOP/s  error {error:.1e}")


def main() -> None:
    cpu_part()
    reason = gpu_skip_reason()
    if reason:
        print(f"\n[skipped: every rung on the GPU — {reason}]")
        return
    gpu_part()


if __name__ == "__main__":
    main()
