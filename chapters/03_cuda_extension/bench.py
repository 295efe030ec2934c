"""Benchmark: eager PyTorch autograd vs the extension for y = x*x + b (b of x's shape), on the GPU.

    python bench.py --out DIR        (make bench)

For n = 2^20, 2^24, 2^26 elements, float32 and bfloat16:
  forward            eager `x**2 + b` (two kernels: pow, add) vs square_bias (one kernel)
  forward+backward   torch.autograd.grad(y, (x, b), grad_y): no .grad accumulation. The extension's backward is one
                     fused kernel (grad_x = 2 x grad_y; grad_b is grad_y itself), eager runs several.
  .backward()        the same, through y.backward(grad_y) into existing .grad tensors: what accumulation adds
  copy               dst.copy_(src) of n elements: the device's copy bandwidth, measured in the same run
Bandwidth counts the bytes the op must move (forward: read x, b, write y = 3n elements; forward+backward: plus read
x, grad_y, write grad_x = 6n), so a kernel that moves more than it must shows a lower figure. L2 is flushed before
every timed call. Goals (n = 2^26, float32) are checked at the end.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))

from course.report import Goals, Table  # noqa: E402
from course.timing import bandwidth_gbs, interleaved_rounds, time_cuda  # noqa: E402

SIZES = [2**20, 2**24, 2**26]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench.py: this benchmark needs a CUDA GPU (none visible); nothing measured.")
        return 0

    from square_bias_cuda import square_bias

    def eager(x, b):
        return x**2 + b

    table = Table(
        "y = x*x + b: eager autograd vs the extension (b of x's shape)",
        ["n", "dtype", "pass", "impl", "time_us", "GB/s", "% of copy", "speed-up"],
    )
    results = {}

    def timed(fn):
        return time_cuda(fn, repeat=args.repeat, flush_l2=True).median_us

    def measure(name, dtype, n):
        size = torch.finfo(dtype).bits // 8
        x = torch.randn(n, device="cuda", dtype=dtype, requires_grad=True)
        b = torch.randn(n, device="cuda", dtype=dtype, requires_grad=True)
        grad_y = torch.randn(n, device="cuda", dtype=dtype)
        dst = torch.empty_like(grad_y)

        copy_us = timed(lambda: dst.copy_(grad_y))
        copy_gbs = bandwidth_gbs(2 * n * size, copy_us / 1e3)
        row = {"n": n, "dtype": name, "pass": "copy", "impl": "copy_", "time_us": copy_us, "GB/s": copy_gbs}
        table.add(**row, **{"% of copy": 100.0, "speed-up": float("nan")})

        # correct before fast: compared with eager once, and the warm-up runs double as more of the same code
        with torch.no_grad():  # against float32 math rounded once (eager bf16 rounds twice: after pow, after add)
            reference = (x.float() ** 2 + b.float()).to(dtype)
            torch.testing.assert_close(square_bias(x, b), reference)
        passes = {
            "forward": (3, lambda f: lambda: f(x, b)),
            "fwd+bwd": (6, lambda f: lambda: torch.autograd.grad(f(x, b), (x, b), grad_y)),
            # accumulates into x.grad and b.grad, which exist after the first call
            ".backward()": (6, lambda f: lambda: f(x, b).backward(grad_y)),
        }
        for pass_name, (elements, make) in passes.items():
            times = {}
            for impl, f in (("eager", eager), ("extension", square_bias)):
                x.grad = b.grad = None
                times[impl] = timed(make(f))
                gbs = bandwidth_gbs(elements * n * size, times[impl] / 1e3)
                results[(name, n, pass_name, impl)] = (times[impl], gbs, gbs / copy_gbs)
                row = {"n": n, "dtype": name, "pass": pass_name, "impl": impl, "time_us": times[impl], "GB/s": gbs}
                table.add(**row, **{"% of copy": 100 * gbs / copy_gbs, "speed-up": times["eager"] / times[impl]})

    for name, dtype in DTYPES.items():
        for n in SIZES:
            measure(name, dtype, n)
            torch.cuda.empty_cache()
    table.save(args.out / "square_bias_cuda")

    # A broadcast b: a scalar (chapter 07's workload) and a row. The forward reads x and writes y (b is tiny).
    broadcast = Table(
        "forward with a broadcast b, n = 2^26 fp32", ["b", "impl", "time_us", "GB/s", "% of copy", "speed-up"]
    )
    n = 2**26
    x = torch.randn(n // 1024, 1024, device="cuda")
    dst, src = torch.empty_like(x), torch.randn_like(x)
    copy_gbs = bandwidth_gbs(8 * n, timed(lambda: dst.copy_(src)) / 1e3)
    for label, b in (("scalar", torch.randn((), device="cuda")), ("row of 1024", torch.randn(1024, device="cuda"))):
        with torch.no_grad():
            torch.testing.assert_close(square_bias(x, b), x * x + b)
            eager_us = timed(lambda b=b: eager(x, b))
            for impl, us in (("eager", eager_us), ("extension", timed(lambda b=b: square_bias(x, b)))):
                gbs = bandwidth_gbs(8 * n, us / 1e3)
                broadcast.add(
                    b=label,
                    impl=impl,
                    time_us=us,
                    **{"GB/s": gbs, "% of copy": 100 * gbs / copy_gbs},
                    **{"speed-up": eager_us / us},
                )
    broadcast.save(args.out / "square_bias_cuda_broadcast")

    print("\n## what .backward() accumulation into .grad adds (fwd+bwd through .backward() minus autograd.grad)")
    for name in DTYPES:
        for n in SIZES:
            for impl in ("eager", "extension"):
                extra = results[(name, n, ".backward()", impl)][0] - results[(name, n, "fwd+bwd", impl)][0]
                print(f"  {name} n=2^{n.bit_length() - 1} {impl:>9}: {extra:+8.1f} us")

    # The goals, timed again over interleaved rounds (each round: copy, eager and extension, forward and
    # forward+backward), so that one slow moment of the machine cannot decide a PASS or a MISS.
    n = 2**26
    x = torch.randn(n, device="cuda", requires_grad=True)
    b = torch.randn(n, device="cuda", requires_grad=True)
    grad_y = torch.randn(n, device="cuda")
    dst = torch.empty_like(grad_y)
    calls = {"copy": lambda: dst.copy_(grad_y)}
    for impl, f in (("eager", eager), ("extension", square_bias)):
        calls[f"{impl} forward"] = lambda f=f: f(x, b)
        calls[f"{impl} fwd+bwd"] = lambda f=f: torch.autograd.grad(f(x, b), (x, b), grad_y)
    times = interleaved_rounds(calls, rounds=7, repeat=args.repeat, flush_l2=True)

    def per_round(numerator, denominator, scale=1.0):
        return [scale * a / b for a, b in zip(times[numerator], times[denominator])]

    goals = Goals("Goals at n = 2^26, float32")
    goals.check_rounds(
        "forward+backward speed-up over eager autograd", per_round("eager fwd+bwd", "extension fwd+bwd"), ">=", 2.1, "x"
    )
    goals.check_rounds("forward speed-up over eager", per_round("eager forward", "extension forward"), ">=", 1.6, "x")
    # % of copy: the bytes each moves (6n for forward+backward, 3n forward, 2n the copy) per unit of time
    goals.check_rounds(
        "forward+backward bandwidth, % of device copy",
        per_round("copy", "extension fwd+bwd", 100 * 6 / 2),
        ">=",
        90,
        "%",
    )
    goals.check_rounds(
        "forward bandwidth, % of device copy", per_round("copy", "extension forward", 100 * 3 / 2), ">=", 90, "%"
    )
    goals.report(args.out / "goals.txt")
    print(f"tables in {args.out}/square_bias_cuda.{{csv,md}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
