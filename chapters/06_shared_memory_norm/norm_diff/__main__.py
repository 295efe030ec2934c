"""The chapter's demo (`make run`): ‖a − b‖₂ on the CPU, the block sums emulated on the CPU, fp32 rounding, then
every rung of the ladder on the GPU and the JIT build (skipped with a message when there is no GPU)."""

from __future__ import annotations

import numpy as np
import torch
from course.gpu import gpu_skip_reason

from norm_diff import RUNGS, emulate, norm_diff


def relative_error(value: float, exact: float) -> float:
    return abs(value - exact) / exact if exact else abs(value)


def cpu_part() -> None:
    print("== the op on the CPU (a C loop with double accumulation) ==")
    torch.manual_seed(0)
    a, b = torch.randn(4097), torch.randn(4097)
    exact = torch.linalg.vector_norm(a.double() - b.double()).item()
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x, y = a.to(dtype), b.to(dtype)
        ours, theirs = norm_diff(x, y), torch.norm(x - y)
        print(f"  {str(dtype):15} norm_diff = {ours.item():.7f}   torch.norm(a - b) = {theirs.item():.7f}")
    print(f"  float64 reference      {exact:.7f}")

    x = a.clone().requires_grad_()
    norm_diff(x, a).backward()
    print(f"  gradient where a == b (norm 0): max |grad| = {x.grad.abs().max().item()} (torch.norm gives 0 too)")

    print("\n== the block sums of norm_blocks.h, emulated on the CPU (one POSIX thread per CUDA thread) ==")
    values = np.arange(1.0, 257.0)
    print(
        f"  256 threads holding 1..256: tree sum = {emulate.tree_sum(values):.0f}, "
        f"shuffle sum = {emulate.shuffle_sum(values):.0f}, expected {values.sum():.0f}"
    )
    print(f"  one warp holding 0..31: warp sum = {emulate.warp_sum(np.arange(32.0)):.0f}, expected 496")

    print("\n== why sum in a tree: fp32 rounding over 2^22 squared differences ==")
    rng = np.random.default_rng(0)
    d = (rng.standard_normal(1 << 22) - rng.standard_normal(1 << 22)).astype(np.float32)
    squares = d * d
    exact_sum = float(np.sum(squares.astype(np.float64)))
    sequential = float(np.cumsum(squares, dtype=np.float32)[-1])
    tree = squares
    while len(tree) > 1:
        tree = tree[0::2] + tree[1::2]
    print(f"  one running fp32 sum: relative error {relative_error(sequential, exact_sum):.1e}")
    print(f"  fp32 tree (pairs):    relative error {relative_error(float(tree[0]), exact_sum):.1e}")


def gpu_part() -> None:
    print("\n== every rung on the GPU, fp32 ==")
    for n in (4097, 1 << 24):
        a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        exact = torch.linalg.vector_norm(a.double() - b.double()).item()
        print(f"  n = {n}")
        for version, what in RUNGS.items():
            value = norm_diff(a, b, version=version).item()
            print(f"    rung {version} ({what:45}) {value:.7f}  relative error {relative_error(value, exact):.1e}")
        print(f"    torch.norm(a - b){'':37} {torch.norm(a - b).item():.7f}")
    print("  (rung 0 only ever reads 4096 elements: the seed's fixed 64×64 shared buffer)")

    print("\n== the JIT build of the same sources (torch.utils.cpp_extension.load; a minute the first time) ==")
    from norm_diff.jit import load_jit

    ops = load_jit()
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    print(
        f"  torch.ops.norm_diff_jit.norm_diff = {ops.norm_diff(a, b, 3).item():.7f}, "
        f"setuptools build = {norm_diff(a, b).item():.7f}"
    )


def main() -> None:
    cpu_part()
    reason = gpu_skip_reason()
    if reason:
        print(f"\n[skipped: every rung on the GPU, and the JIT build — {reason}]")
        return
    gpu_part()


if __name__ == "__main__":
    main()
