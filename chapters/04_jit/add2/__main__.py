"""The chapter's demo: `make run` (python -m add2).

Without a GPU it runs the CPU parts — the JIT building and caching a small C++ extension, and the seed's
grid-stride loop emulated on the CPU — and says what it skipped.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch
from course.gpu import gpu_skip_reason

import add2
from add2 import jit


def section(title: str) -> None:
    print(f"\n=== {title} ===")


def jit_on_the_cpu() -> None:
    section("1. torch.utils.cpp_extension.load_inline on the CPU: build, cache, call")
    print(f"TORCH_EXTENSIONS_DIR = {jit.extensions_dir()}")
    start = time.perf_counter()
    demo = jit.load_cpu_demo(verbose=True)
    print(f"load_inline returned after {time.perf_counter() - start:.2f} s (a second run says 'no work to do')")
    build = Path(demo.path).parent
    print(f"build directory {build.name}/: {', '.join(sorted(p.name for p in build.iterdir()))}")
    a, b = torch.arange(5.0), torch.full((5,), 0.5)
    print(f"add2_cpu({a.tolist()}, {b.tolist()}) = {demo.add2(a, b).tolist()}")


def seed_loop_on_the_cpu() -> None:
    section("2. the seed's grid-stride loop, emulated on the CPU (the same C function the kernel calls)")
    a, b = torch.arange(10.0), torch.full((10,), 100.0)
    c = add2.emulate_seed(a, b, grid=2, block=3)
    print("n = 10, grid = 2 blocks x 3 threads = 6 threads: thread t handles t, t + 6, ...")
    print(f"  c = {c.tolist()}")
    c = add2.emulate_seed(a, b, grid=2, block=3, n=7)
    print("PITFALL: the seed passes n separately; n = 7 for 10-element tensors leaves the tail unwritten (NaN):")
    print(f"  c = {c.tolist()}")


def gpu_parts() -> None:
    section("3. add2 on the GPU: the ops, both kernels, every dtype")
    for dtype in add2.DTYPES:
        a = torch.randn(1_000_003, device="cuda", dtype=dtype)
        b = torch.randn(1_000_003, device="cuda", dtype=dtype)
        for name, op in [("add2 (vectorized)", add2.add2), ("add2_seed", add2.add2_seed)]:
            err = (op(a, b).float() - (a + b).float()).abs().max().item()
            print(f"  {name:18s} {str(dtype):15s} max |error| vs torch.add = {err:.3g}")
        err = (add2.add2(a[1:], b[1:]).float() - (a[1:] + b[1:]).float()).abs().max().item()
        print(f"  {'misaligned view':18s} {str(dtype):15s} max |error| vs torch.add = {err:.3g} (scalar path)")

    section("4. the same kernels, JIT-built from files (load) and from strings (load_inline)")
    for name, loader in [("load (files)", jit.load_from_files), ("load_inline (strings)", jit.load_from_strings)]:
        start = time.perf_counter()
        module = loader()
        print(f"  {name:22s} {time.perf_counter() - start:6.2f} s  -> {module.__file__}")
    a = torch.randn(4099, device="cuda")
    torch.testing.assert_close(jit.load_from_files().add2(a, a), a + a)
    torch.testing.assert_close(jit.load_from_strings().add2_seed(a, a), a + a)
    print("  both agree with torch.add")

    section("5. honest timing: the same call timed three ways")
    from add2.lesson import timing_lesson

    timing_lesson()
    print("time.time() without a synchronize stops the clock when the launch is queued, long before the kernel ends.")


def main() -> None:
    jit_on_the_cpu()
    seed_loop_on_the_cpu()
    reason = gpu_skip_reason()
    if reason:
        section("3-5. skipped")
        print(f"[skipped: {reason}] the GPU parts (add2 on CUDA tensors, the JIT builds of the CUDA modules, the")
        print("timing lesson) run on a machine with an NVIDIA GPU: `make run` there.")
        return
    gpu_parts()


if __name__ == "__main__":
    main()
