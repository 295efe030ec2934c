"""The chapter's demo (`make run`): the three ops on the CPU against torch, the online softmax's per-lane logic
emulated on the CPU, then every rung of the GPU ladder at one shape (skipped with a message when there is no GPU)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from course.gpu import gpu_skip_reason

from rowwise import RUNGS, describe, emulate, layer_norm, rms_norm, softmax


def error(result: torch.Tensor, expected: torch.Tensor) -> float:
    return (result.double() - expected).abs().max().item()


def cpu_part() -> None:
    print("== the ops on the CPU (C loops accumulated in double) against float64, beside torch's own error ==")
    torch.manual_seed(0)
    x64 = torch.randn(64, 1001, dtype=torch.float64) * 3
    w64, b64 = 1 + 0.5 * torch.randn(1001, dtype=torch.float64), torch.randn(1001, dtype=torch.float64)
    pairs = {  # name: (ours, torch's), each a function of (x, w, b)
        "softmax": (lambda x, w, b: softmax(x), lambda x, w, b: torch.softmax(x, -1)),
        "layer_norm": (lambda x, w, b: layer_norm(x, w, b), lambda x, w, b: F.layer_norm(x, (1001,), w, b)),
        "rms_norm": (lambda x, w, b: rms_norm(x, w, 1e-6), lambda x, w, b: F.rms_norm(x, (1001,), w, 1e-6)),
    }
    for dtype in (torch.float32, torch.bfloat16):
        x, w, b = (t.to(dtype) for t in (x64, w64, b64))
        for name, (ours, theirs) in pairs.items():
            exact = theirs(x.double(), w.double(), b.double())  # float64 from the same rounded inputs
            print(
                f"  {str(dtype):15} {name:10} max error: ours {error(ours(x, w, b), exact):.2e}, "
                f"torch {error(theirs(x, w, b), exact):.2e}"
            )

    print("\n== the online (max, sum) pairs of src/online_softmax.h, emulated (one POSIX thread per lane) ==")
    pair = (-np.inf, 0.0)
    for value in (1.0, 3.0, 2.0):
        pair = emulate.add(pair, value)
        print(f"  add {value}: (max, sum) = ({pair[0]:.0f}, {pair[1]:.6f})")
    print(f"  expected sum: exp(1-3) + exp(3-3) + exp(2-3) = {np.exp(-2) + 1 + np.exp(-1):.6f}")
    x = np.random.default_rng(0).standard_normal((3, 100)).astype(np.float32) * 4
    y = emulate.softmax(x)
    difference = np.abs(y - torch.softmax(torch.from_numpy(x), -1).numpy()).max()
    print(f"  warp-per-row softmax of 3 x 100: max error vs torch {difference:.1e}")


def gpu_part() -> None:
    print("\n== every rung on the GPU: 4096 x 4096 bf16 softmax ==")
    from course.timing import bandwidth_gbs, time_cuda

    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    expected = torch.softmax(x.double(), -1)
    bytes_moved = 2 * x.numel() * x.element_size()
    dst = torch.empty_like(x)
    copy = time_cuda(lambda: dst.copy_(x), repeat=20)
    print(f"  device copy {copy.median_us:8.1f} us  {bandwidth_gbs(bytes_moved, copy.median_ms):7.0f} GB/s")
    for rung in RUNGS:
        t = time_cuda(lambda r=rung: softmax(x, rung=r), repeat=20)
        err = error(softmax(x, rung=rung), expected)
        print(
            f"  {describe(x, 'softmax', rung=rung)[:48]:48} {t.median_us:8.1f} us  "
            f"{bandwidth_gbs(bytes_moved, t.median_ms):7.0f} GB/s  error {err:.1e}"
        )
    t = time_cuda(lambda: torch.softmax(x, -1), repeat=20)
    print(f"  {'torch.softmax':48} {t.median_us:8.1f} us  {bandwidth_gbs(bytes_moved, t.median_ms):7.0f} GB/s")


def main() -> None:
    cpu_part()
    reason = gpu_skip_reason()
    if reason:
        print(f"\n[skipped: every rung on the GPU — {reason}]")
        return
    gpu_part()


if __name__ == "__main__":
    main()
