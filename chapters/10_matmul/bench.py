"""C = A·B on the GPU: every rung of the ladder against cuBLAS, Triton and torch.compile; fp32 (part 1) and bf16/fp16
on the tensor cores (part 2).

    python bench.py --out build/logs [--copy-to results/h100] [--part fp32|tensor|all] [--no-compile]
    make bench                       (both parts)
    make bench PART=tensor           (part 2 alone: ~4 minutes on an H100, ~2 of them torch.compile's autotuning;
                                      NO_COMPILE=1 leaves torch.compile out)

Part 1, fp32:

Sizes: 1024³, 4096³, 8192³ and an odd one, 3001³ (square, row-major, random normal inputs); then thin shapes where
the output has too few tiles to fill the GPU (rung 7 against rung 8's split K). Methods:
  rung 0 … rung 8    this chapter's kernels (matmul(a, b, rung))
  cuBLAS             torch.mm with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False): real fp32
  Triton             matmul/triton_matmul.py, the tutorial's kernel, autotuned, input_precision="ieee"
  torch.compile      torch.compile(lambda a, b: a @ b, mode="max-autotune"), compiled per shape; the table names the
                     kernel it runs (from the profiler): it may pick cuBLAS
Correct before fast: each method's result is compared with a float64 product first (rel_error, and its ratio to
cuBLAS's error on the same inputs). Then CUDA events in ROUNDS interleaved rounds (course.timing), the median per
round, min and max across rounds. Two roofs, measured here, not taken from a datasheet: the fp32 FMA rate (a kernel
of 8 independent FMA chains per thread, matmul_fma_chains_cuda) and the device-copy bandwidth.

Writes OUT/matmul.{csv,md}, OUT/matmul_thin.{csv,md}, OUT/matmul_tflops.png (TFLOP/s per rung), OUT/matmul_roofline.png
(each rung on chapter 07's roofline) and OUT/goals_fp32.txt.

Part 2, the tensor cores (bf16 inputs unless the name says fp16; fp32 sums; output in the inputs' dtype), at 1024³,
4096³, 8192³ and 3000³ (not a multiple of any tile; rows of 3000 elements are 16-byte multiples, so rung 11 runs):
  rung 9 … rung 11   this chapter's tensor-core kernels, bf16; "rung 11 fp16" the same kernel on fp16 inputs
  cuBLAS bf16/fp16   torch.mm
  Triton bf16        matmul/triton_matmul.py's tutorial kernel, autotuned, bf16 (tl.dot on the tensor cores)
  torch.compile      max-autotune in bf16, at 4096³ and 8192³ only (its autotuning takes about a minute per size)
Each method's result is checked against float64 first, as in part 1. Writes OUT/matmul_tensor.{csv,md},
OUT/matmul_tensor_tflops.png, OUT/matmul_tensor_roofline.png and OUT/goals_tensor.txt.

OUT/goals.txt is the two parts' goals one after the other: a part this run did not measure is taken from the
--copy-to folder's previous goals_<part>.txt. --copy-to DIR copies everything there (make bench: results/<gpu>/).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from course.compiled import compile_per_shape, first_call_seconds
from course.report import Goals, Table, copy_results, environment_line
from course.timing import bandwidth_gbs, interleaved_rounds, time_cuda

SQUARES = [1024, 4096, 8192]
ODD = (3001, 3001, 3001)
# torch.compile's max-autotune compiles and times a dozen candidates per shape: 12 s at 1024³, 45-70 s at the
# larger sizes on the H100. It runs where the goals are judged and at 1024³; the odd size leaves it out (no row).
COMPILE_AT = {1024, 4096, 8192}
GOAL_SIZES = [4096, 8192]
THIN = [(7, 7, 4095), (127, 33, 4095), (1000, 1000, 4095), (64, 64, 65536), (4095, 127, 1000)]
ROUNDS = 5
ROUND_SECONDS = 0.25  # each method's share of one round: repeats are chosen to fill about this much GPU time
MOST_SECONDS_PER_CALL = 1.0  # slower calls (rung 0 at 8192³: ~2 s) are timed once per round, with fewer rounds


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def rel_error(c: torch.Tensor, ref: torch.Tensor) -> float:
    return ((c.double() - ref).norm() / ref.norm()).item()


def kernel_names(fn) -> str:
    """The CUDA kernels one call of fn runs, from the profiler (how we learn what torch.compile picked)."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = []
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and event.name not in names:
            names.append(event.name)
    # torch.compile's CUDA graph first copies the inputs into its own buffers (an elementwise copy kernel): the
    # matrix product is the other kernel.
    products = [n for n in names if "Copy<" not in n and not n.startswith("Memset")]
    return "; ".join(products or names) or "(no kernel)"


def fma_rate_tflops() -> float:
    """The fp32 FMA rate: 8 independent chains of FMAs per thread, several waves of threads, nearly no memory."""
    import matmul  # noqa: F401 (registers torch.ops.matmul)

    n, iterations = 132 * 2048 * 8, 4096
    x = torch.randn(n, device="cuda")
    t = time_cuda(lambda: torch.ops.matmul.fma_chains(x, iterations), warmup=3, repeat=10)
    return 16.0 * iterations * n / (t.median_ms * 1e-3) / 1e12


def copy_bandwidth_gbs() -> float:
    """A device-to-device copy of 1 GiB, counting bytes read and written (chapter 07's memory roof)."""
    src = torch.empty(1 << 28, device="cuda")
    dst = torch.empty_like(src)
    t = time_cuda(lambda: dst.copy_(src), warmup=3, repeat=10)
    return bandwidth_gbs(2 * src.numel() * 4, t.median_ms)


def methods_for(shape, compiled, rungs, triton=True) -> dict:
    """name -> callable(a, b) for every method at this shape."""
    from matmul import matmul
    from matmul.triton_matmul import triton_matmul

    out = {f"rung {r}": (lambda a, b, r=r: matmul(a, b, r)) for r in rungs}
    out["cuBLAS"] = torch.mm
    if triton:
        out["Triton (autotuned, ieee)"] = triton_matmul
    if compiled is not None:
        out["torch.compile max-autotune"] = compiled
    return out


def measure(shape, compiled, rungs, rounds=ROUNDS, triton=True) -> dict[str, dict]:
    """Check, then time, every method at one shape: name -> {times_ms, rel_error, error_vs_cublas, first_call_s}."""
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(M, K, device="cuda", generator=g)
    b = torch.randn(K, N, device="cuda", generator=g)
    ref = a.double() @ b.double()
    results, calls, per_call_s = {}, {}, {}
    for name, fn in methods_for(shape, compiled, rungs, triton).items():
        first = first_call_seconds(fn, a, b)  # for Triton and torch.compile: autotuning and compiling
        start = time.perf_counter()
        c = fn(a, b)  # correct before fast: the error is measured on this result
        torch.cuda.synchronize()
        per_call_s[name] = time.perf_counter() - start
        results[name] = {"rel_error": rel_error(c, ref), "first_call_s": first}
        calls[name] = lambda fn=fn: fn(a, b)
        if name == "torch.compile max-autotune":
            results[name]["kernel"] = kernel_names(calls[name])
        if name == "cuBLAS":
            results[name]["kernel"] = kernel_names(calls[name])
        del c
    for name in results:
        results[name]["error_vs_cublas"] = results[name]["rel_error"] / results["cuBLAS"]["rel_error"]
    # Slow methods get fewer repeats (at least one per round); the interleaving is kept.
    fast = {n: f for n, f in calls.items() if per_call_s[n] < MOST_SECONDS_PER_CALL / 4}
    slow = {n: f for n, f in calls.items() if n not in fast}
    if fast:
        repeat = max(3, min(50, int(ROUND_SECONDS / max(per_call_s[n] for n in fast))))
        for name, times in interleaved_rounds(fast, rounds=rounds, warmup=2, repeat=repeat).items():
            results[name]["times_ms"] = times
    if slow:
        for name, times in interleaved_rounds(slow, rounds=min(rounds, 3), warmup=0, repeat=1).items():
            results[name]["times_ms"] = times
    return results


def plot_tflops(
    rows: list[dict],
    out: Path,
    name: str = "matmul_tflops.png",
    ylabel: str = "TFLOP/s (fp32)",
    title: str = "C = A·B, fp32, per rung",
) -> Path:
    """Bars of TFLOP/s: one group per method, one bar per size (part 1's fp32 table, part 2's tensor-core table)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(dict.fromkeys(r["size"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig, ax = plt.subplots(figsize=(12, 5))
    width = 0.8 / len(sizes)
    for i, size in enumerate(sizes):
        values = [next((r["TFLOP/s"] for r in rows if r["size"] == size and r["method"] == m), 0) for m in methods]
        ax.bar([x + i * width for x in range(len(methods))], values, width, label=size)
    ax.set_xticks([x + width * (len(sizes) - 1) / 2 for x in range(len(methods))])
    ax.set_xticklabels(
        [m.replace(" (autotuned, ieee)", "").replace(" max-autotune", "") for m in methods], rotation=30, ha="right"
    )
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} — {environment_line()}", fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / name
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


# FLOP per byte a rung's loads ask of global memory: a BM×BN block tile loads (BM + BN)·BK floats for BM·BN·BK FMAs,
# so 2·BM·BN / (4·(BM + BN)) = BM·BN / (2·(BM + BN)). Rungs 0-1 reuse nothing in the block (BM = BN = 1).
BLOCK_TILES = {
    0: (1, 1),
    1: (1, 1),
    2: (32, 32),
    3: (64, 64),
    4: (128, 128),
    5: (128, 128),
    6: (128, 128),
    7: (64, 256),
    8: (64, 256),
}


def tile_intensity(rung: int) -> float:
    bm, bn = BLOCK_TILES[rung]
    return bm * bn / (2.0 * (bm + bn))


def plot_roofline(rows: list[dict], fma_tflops: float, copy_gbs: float, size: str, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peak = fma_tflops * 1e3  # GFLOP/s
    ridge = peak / copy_gbs
    fig, ax = plt.subplots(figsize=(8, 6))
    xs = [0.05, ridge, 2000]
    roof = f"roof: {copy_gbs:,.0f} GB/s device copy, {fma_tflops:.1f} TFLOP/s FMA rate (both measured)"
    ax.loglog(xs, [min(peak, x * copy_gbs) for x in xs], "k-", label=roof)
    for r in rows:
        if r["size"] == size and r["method"].startswith("rung "):
            rung = int(r["method"].split()[1])
            ax.loglog(tile_intensity(rung), r["TFLOP/s"] * 1e3, "o", label=f"{r['method']}: {r['TFLOP/s']:.1f} TFLOP/s")
    for r in rows:
        if r["size"] == size and r["method"] == "cuBLAS":
            ax.axhline(r["TFLOP/s"] * 1e3, color="gray", ls="--", lw=1, label=f"cuBLAS: {r['TFLOP/s']:.1f} TFLOP/s")
    n = int(size.split("x")[0])
    ax.axvline(
        2 * n**3 / (4 * 3 * n * n),
        color="gray",
        ls=":",
        lw=1,
        label=f"{size} if every byte came from DRAM once: {n / 6:.0f} FLOP/B",
    )
    ax.set(
        xlabel="FLOP per byte loaded from global memory (the block tile's reuse)",
        ylabel="GFLOP/s",
        title=f"Each rung on the roofline, {size}, fp32 (ridge at {ridge:.0f} FLOP/B)",
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path = out / "matmul_roofline.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def fp32_part(args) -> list[str]:
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS and torch.compile in real fp32, as the kernels
    from matmul import RUNG_COUNT, RUNGS

    print("# Part 1: fp32 on the CUDA cores")
    rungs = list(range(RUNG_COUNT))
    print("rungs: " + "; ".join(f"{r}: {RUNGS[r]}" for r in rungs))
    fma_tflops, copy_gbs = fma_rate_tflops(), copy_bandwidth_gbs()
    print(f"roofs, measured: fp32 FMA rate {fma_tflops:.1f} TFLOP/s, device copy {copy_gbs:,.0f} GB/s")
    compiled = compile_per_shape(lambda a, b: a @ b, mode="max-autotune")

    columns = [
        "size",
        "method",
        "time_ms",
        "min_ms",
        "max_ms",
        "TFLOP/s",
        "% of cuBLAS",
        "% of FMA rate",
        "rel_error",
        "error / cuBLAS's",
        "first_call_s",
    ]
    table = Table("C = A·B, fp32 (median of rounds)", columns, echo=True)
    at_goal, kernels = {}, {}
    for shape in [(n, n, n) for n in SQUARES] + [ODD]:
        size = "x".join(map(str, shape))
        measured = measure(shape, compiled if shape[0] in COMPILE_AT else None, rungs)
        cublas_rounds = measured["cuBLAS"]["times_ms"]
        median_cublas = statistics.median(cublas_rounds)
        for name, m in measured.items():
            median = statistics.median(m["times_ms"])
            tflops = flops(*shape) / (median * 1e-3) / 1e12
            table.add(
                size=size,
                method=name,
                time_ms=median,
                min_ms=min(m["times_ms"]),
                max_ms=max(m["times_ms"]),
                **{
                    "TFLOP/s": tflops,
                    "% of cuBLAS": 100 * median_cublas / median,
                    "% of FMA rate": 100 * tflops / fma_tflops,
                    "rel_error": m["rel_error"],
                    "error / cuBLAS's": m["error_vs_cublas"],
                    "first_call_s": m["first_call_s"],
                },
            )
            if "kernel" in m:
                kernels[(size, name)] = m["kernel"]
        if shape[0] in GOAL_SIZES and shape[0] == shape[1] == shape[2]:
            at_goal[shape[0]] = measured
        torch.cuda.empty_cache()
    table.save(args.out / "matmul")
    for (size, name), kernel in kernels.items():
        print(f"{size} {name} runs: {kernel}")

    thin = Table(
        "Thin shapes: rung 7 against rung 8's split K (median of rounds)",
        ["size", "method", "time_ms", "TFLOP/s", "% of cuBLAS", "rel_error", "error / cuBLAS's"],
    )
    for shape in THIN:
        size = "x".join(map(str, shape))
        measured = measure(shape, None, [7, 8], triton=False)  # Triton would autotune again for every shape
        median_cublas = statistics.median(measured["cuBLAS"]["times_ms"])
        for name in ["rung 7", "rung 8", "cuBLAS"]:
            m = measured[name]
            median = statistics.median(m["times_ms"])
            thin.add(
                size=size,
                method=name,
                time_ms=median,
                **{
                    "TFLOP/s": flops(*shape) / (median * 1e-3) / 1e12,
                    "% of cuBLAS": 100 * median_cublas / median,
                    "rel_error": m["rel_error"],
                    "error / cuBLAS's": m["error_vs_cublas"],
                },
            )
    thin.save(args.out / "matmul_thin")

    plots = [
        plot_tflops(table.rows, args.out),
        plot_roofline(table.rows, fma_tflops, copy_gbs, "4096x4096x4096", args.out),
    ]
    print("\nplots: " + ", ".join(str(p) for p in plots))

    # ---- goals: the fastest rung at 4096³ and 8192³, judged on the median of per-round ratios -----------------
    goals = Goals("Goals, fp32, TF32 off")
    for n in GOAL_SIZES:
        measured = at_goal[n]
        rung_names = [k for k in measured if k.startswith("rung ")]
        best = min(rung_names, key=lambda k: statistics.median(measured[k]["times_ms"]))
        ours = measured[best]["times_ms"]
        vs_cublas = [c / o for c, o in zip(measured["cuBLAS"]["times_ms"], ours)]
        vs_triton = [t / o for t, o in zip(measured["Triton (autotuned, ieee)"]["times_ms"], ours)]
        goals.check_rounds(f"{best} / cuBLAS fp32 at {n}³", vs_cublas, ">=", 0.90)
        goals.check_rounds(f"{best} / Triton autotuned fp32 (ieee) at {n}³", vs_triton, ">=", 1.0)
        compiled_ms = statistics.median(measured["torch.compile max-autotune"]["times_ms"])
        cublas_ms = statistics.median(measured["cuBLAS"]["times_ms"])
        picked = kernels.get((f"{n}x{n}x{n}", "torch.compile max-autotune"), "?")
        goals.note(f"{n}³: torch.compile max-autotune at {cublas_ms / compiled_ms:.3f}× cuBLAS, running: {picked}")
        goals.note(
            f"{n}³: {best} error {measured[best]['rel_error']:.2e} = "
            f"{measured[best]['error_vs_cublas']:.2f}× cuBLAS's ({measured['cuBLAS']['rel_error']:.2e})"
        )
    goals.note(f"roofs, measured: fp32 FMA rate {fma_tflops:.1f} TFLOP/s, device copy {copy_gbs:,.0f} GB/s")
    goals.report(args.out / "goals_fp32.txt")
    return [
        "matmul.csv",
        "matmul.md",
        "matmul_thin.csv",
        "matmul_thin.md",
        "matmul_tflops.png",
        "matmul_roofline.png",
        "goals_fp32.txt",
    ]


# ---- part 2: the tensor cores -------------------------------------------------------------------------------------
TENSOR_SIZES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192), (3000, 3000, 3000)]
TENSOR_COMPILE_AT = {4096, 8192}  # torch.compile max-autotune: about a minute of autotuning per size
TENSOR_RUNGS = [9, 10, 11]
CUBLAS_BF16 = "cuBLAS bf16"
TRITON_BF16 = "Triton bf16 (autotuned)"
COMPILED_BF16 = "torch.compile max-autotune bf16"
# The tile each rung's block computes (rows, columns): the reuse of a tile's loads, BM·BN/(BM + BN) flops per byte of
# 16-bit elements (rung 11: one block of two consumer warpgroups).
TENSOR_BLOCK_TILES = {9: (64, 64), 10: (128, 128), 11: (128, 256)}


def tensor_methods(compiled) -> dict:
    """name -> (callable(a, b), dtype of its inputs)."""
    from matmul import matmul
    from matmul.triton_matmul import triton_matmul

    out = {f"rung {r}": ((lambda a, b, r=r: matmul(a, b, r)), torch.bfloat16) for r in TENSOR_RUNGS}
    out["rung 11 fp16"] = ((lambda a, b: matmul(a, b, 11)), torch.float16)
    out[CUBLAS_BF16] = (torch.mm, torch.bfloat16)
    out["cuBLAS fp16"] = (torch.mm, torch.float16)
    out[TRITON_BF16] = (triton_matmul, torch.bfloat16)
    if compiled is not None:
        out[COMPILED_BF16] = (compiled, torch.bfloat16)
    return out


def measure_tensor(shape, compiled, rounds=ROUNDS) -> dict[str, dict]:
    """Check, then time, every tensor-core method at one shape: name -> {times_ms, rel_error, error_vs_cublas,
    first_call_s, ran}. The error ratio compares with cuBLAS in the same dtype, on the same inputs."""
    from matmul import rung_used

    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(0)
    inputs = {dtype: None for dtype in (torch.bfloat16, torch.float16)}
    for dtype in inputs:
        a = torch.randn(M, K, device="cuda", generator=g).to(dtype)
        b = torch.randn(K, N, device="cuda", generator=g).to(dtype)
        inputs[dtype] = (a, b, a.double() @ b.double())
    results, calls, per_call_s = {}, {}, {}
    for name, (fn, dtype) in tensor_methods(compiled).items():
        a, b, ref = inputs[dtype]
        first = first_call_seconds(fn, a, b)
        start = time.perf_counter()
        c = fn(a, b)
        torch.cuda.synchronize()
        per_call_s[name] = time.perf_counter() - start
        results[name] = {"rel_error": rel_error(c, ref), "first_call_s": first, "dtype": dtype}
        if name.startswith("rung "):
            results[name]["ran"] = rung_used(a, b, int(name.split()[1]))
        if name in (COMPILED_BF16, CUBLAS_BF16):
            results[name]["kernel"] = kernel_names(lambda fn=fn, a=a, b=b: fn(a, b))
        calls[name] = lambda fn=fn, a=a, b=b: fn(a, b)
        del c
    for m in results.values():
        cublas = CUBLAS_BF16 if m["dtype"] == torch.bfloat16 else "cuBLAS fp16"
        m["error_vs_cublas"] = m["rel_error"] / results[cublas]["rel_error"]
    repeat = max(3, min(50, int(ROUND_SECONDS / max(per_call_s.values()))))
    for name, times in interleaved_rounds(calls, rounds=rounds, warmup=2, repeat=repeat).items():
        results[name]["times_ms"] = times
    return results


def tensor_rows(measured: dict, shape) -> list[dict]:
    """The table's rows at one shape: median, min and max time, TFLOP/s, % of cuBLAS (the same dtype's)."""
    rows = []
    size = "x".join(map(str, shape))
    for name, m in measured.items():
        cublas = CUBLAS_BF16 if m["dtype"] == torch.bfloat16 else "cuBLAS fp16"
        median, cublas_median = statistics.median(m["times_ms"]), statistics.median(measured[cublas]["times_ms"])
        rows.append(
            {
                "size": size,
                "method": name,
                "ran": f"rung {m['ran']}" if "ran" in m else "",
                "time_ms": median,
                "min_ms": min(m["times_ms"]),
                "max_ms": max(m["times_ms"]),
                "TFLOP/s": flops(*shape) / (median * 1e-3) / 1e12,
                "% of cuBLAS": 100 * cublas_median / median,
                "rel_error": m["rel_error"],
                "error / cuBLAS's": m["error_vs_cublas"],
                "first_call_s": m["first_call_s"],
            }
        )
    return rows


def tensor_goals(at_size: dict, kernels: dict) -> Goals:
    """The issue's goals, judged on per-round ratios (median; min and max shown), then every method's TFLOP/s and %
    of cuBLAS at every size as notes. at_size: shape -> measure_tensor's result."""
    goals = Goals("Goals, bf16 on the tensor cores (fp32 sums)")

    def ratios(measured, ours, theirs):
        return [t / o for t, o in zip(measured[theirs]["times_ms"], measured[ours]["times_ms"])]

    big, mid = (8192, 8192, 8192), (4096, 4096, 4096)
    if big in at_size:
        goals.check_rounds("rung 10 (mma.sync) / cuBLAS bf16 at 8192³", ratios(at_size[big], "rung 10", CUBLAS_BF16),
                           ">=", 0.60)  # fmt: skip
    for shape in (mid, big):
        if shape in at_size:
            n = shape[0]
            goals.check_rounds(f"rung 11 (wgmma) / Triton bf16 autotuned at {n}³",
                               ratios(at_size[shape], "rung 11", TRITON_BF16), ">=", 1.0)  # fmt: skip
    if big in at_size:
        goals.check_rounds("stretch: rung 11 (wgmma) / cuBLAS bf16 at 8192³", ratios(at_size[big], "rung 11",
                           CUBLAS_BF16), ">=", 1.0)  # fmt: skip
    for shape, measured in at_size.items():
        size = "x".join(map(str, shape))
        cublas_rounds = measured[CUBLAS_BF16]["times_ms"]
        goals.note(f"{size} (TFLOP/s min / median / max over rounds; % of cuBLAS in the same dtype, median):")
        for name, m in measured.items():
            tflops = sorted(flops(*shape) / (t * 1e-3) / 1e12 for t in m["times_ms"])
            cublas = cublas_rounds if m["dtype"] == torch.bfloat16 else measured["cuBLAS fp16"]["times_ms"]
            percent = 100 * statistics.median(cublas) / statistics.median(m["times_ms"])
            ran = f" (ran rung {m['ran']})" if "ran" in m and f"rung {m['ran']}" != name.split(" fp16")[0] else ""
            goals.note(
                f"  {name}{ran}: {tflops[0]:.1f} / {statistics.median(tflops):.1f} / {tflops[-1]:.1f} TFLOP/s, "
                f"{percent:.1f} % of cuBLAS, error {m['rel_error']:.2e} = {m['error_vs_cublas']:.2f}× cuBLAS's"
            )
        picked = kernels.get((size, COMPILED_BF16))
        if picked is not None:
            goals.note(f"  torch.compile max-autotune runs: {picked}")
    return goals


def plot_tensor_tflops(rows: list[dict], out: Path) -> Path:
    return plot_tflops(
        rows,
        out,
        name="matmul_tensor_tflops.png",
        ylabel="TFLOP/s",
        title="C = A·B on the tensor cores, bf16 (fp16 where named)",
    )


def plot_tensor_roofline(rows: list[dict], copy_gbs: float, shape, out: Path) -> Path:
    """Chapter 07's roofline for bf16: the memory roof is the measured device copy, the compute roof cuBLAS's measured
    rate (no datasheet number). Each rung sits at the problem's intensity (A, B read and C written once: 2MNK flops
    on 2(MK + KN + MN) bytes), far right of the ridge; its block tile's own reuse is printed in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = "x".join(map(str, shape))
    at = {r["method"]: r for r in rows if r["size"] == size}
    peak = at[CUBLAS_BF16]["TFLOP/s"] * 1e3  # GFLOP/s
    ridge = peak / copy_gbs
    M, N, K = shape
    intensity = 2 * M * N * K / (2 * (M * K + K * N + M * N))
    fig, ax = plt.subplots(figsize=(8, 6))
    xs = [0.1, ridge, 10 * intensity]
    label = f"roof: {copy_gbs:,.0f} GB/s device copy, cuBLAS bf16 {peak / 1e3:.0f} TFLOP/s (both measured)"
    ax.loglog(xs, [min(peak, x * copy_gbs) for x in xs], "k-", label=label)
    ax.axvline(ridge, color="gray", ls=":", lw=1, label=f"ridge: {ridge:.0f} FLOP/B")
    for i, rung in enumerate(TENSOR_RUNGS):
        r = at.get(f"rung {rung}")
        if r is None:
            continue
        bm, bn = TENSOR_BLOCK_TILES[rung]
        ax.loglog(intensity * (1 + 0.08 * i), r["TFLOP/s"] * 1e3, "o",
                  label=f"rung {rung}: {r['TFLOP/s']:.0f} TFLOP/s (block tile {bm}×{bn}: {bm * bn / (bm + bn):.0f} "
                  "FLOP/B from L2)")  # fmt: skip
    ax.set(
        xlabel=f"FLOP per byte of device memory ({size}: A and B read, C written, once: {intensity:.0f} FLOP/B)",
        ylabel="GFLOP/s",
        title=f"The tensor-core rungs on the roofline, {size}, bf16",
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path = out / "matmul_tensor_roofline.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def tensor_part(args) -> list[str]:
    from matmul import RUNGS

    print("\n# Part 2: the tensor cores, bf16 (fp16 where named)")
    print("rungs: " + "; ".join(f"{r}: {RUNGS[r]}" for r in TENSOR_RUNGS))
    copy_gbs = copy_bandwidth_gbs()
    compiled = None if args.no_compile else compile_per_shape(lambda a, b: a @ b, mode="max-autotune")
    columns = ["size", "method", "ran", "time_ms", "min_ms", "max_ms", "TFLOP/s", "% of cuBLAS", "rel_error",
               "error / cuBLAS's", "first_call_s"]  # fmt: skip
    table = Table("C = A·B on the tensor cores (median of rounds)", columns, echo=True)
    at_size, kernels = {}, {}
    for shape in TENSOR_SIZES:
        measured = measure_tensor(shape, compiled if shape[0] in TENSOR_COMPILE_AT else None)
        for row in tensor_rows(measured, shape):
            table.add(**row)
        size = "x".join(map(str, shape))
        for name, m in measured.items():
            if "kernel" in m:
                kernels[(size, name)] = m["kernel"]
        at_size[shape] = measured
        torch.cuda.empty_cache()
    table.save(args.out / "matmul_tensor")
    for (size, name), kernel in kernels.items():
        print(f"{size} {name} runs: {kernel}")
    plots = [
        plot_tensor_tflops(table.rows, args.out),
        plot_tensor_roofline(table.rows, copy_gbs, (4096, 4096, 4096), args.out),
    ]
    print("\nplots: " + ", ".join(str(p) for p in plots))
    goals = tensor_goals(at_size, kernels)
    if args.no_compile:
        goals.note("torch.compile max-autotune left out (--no-compile)")
    goals.note(f"device copy, measured: {copy_gbs:,.0f} GB/s")
    goals.report(args.out / "goals_tensor.txt")
    return ["matmul_tensor.csv", "matmul_tensor.md", "matmul_tensor_tflops.png", "matmul_tensor_roofline.png",
            "goals_tensor.txt"]  # fmt: skip


def combined_goals(out: Path, copy_to: Path | None) -> Path:
    """OUT/goals.txt: part 1's goals, then part 2's, each from this run or else from copy_to (the last run's)."""
    sections = []
    for name in ("goals_fp32.txt", "goals_tensor.txt"):
        for folder in (out, copy_to):
            if folder is not None and (folder / name).exists():
                sections.append((folder / name).read_text().rstrip("\n"))
                break
    path = out / "goals.txt"
    path.write_text("\n\n".join(sections) + "\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    parser.add_argument("--copy-to", type=Path, help="also copy the tables, plots and goals here (results/<gpu>)")
    parser.add_argument("--part", choices=["fp32", "tensor", "all"], default="all", help="which part to measure")
    parser.add_argument("--no-compile", action="store_true", help="part 2 without torch.compile (saves ~2 minutes)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench.py needs a CUDA GPU: none is visible here, so there is nothing to measure (exit 0).")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    names = []
    if args.part in ("fp32", "all"):
        names += fp32_part(args)
    if args.part in ("tensor", "all"):
        names += tensor_part(args)
    combined_goals(args.out, args.copy_to)
    print("\n" + (args.out / "goals.txt").read_text())
    if args.copy_to:
        copy_results(args.out, args.copy_to, [*names, "goals.txt"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
