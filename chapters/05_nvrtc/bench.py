"""Benchmark (make bench): NVRTC-compiled ReLU against torch.relu on one GPU.

1. forward and backward at n = 2^26 float32 (CUDA-event medians, GB/s, ratio to PyTorch in the same run);
2. the first call (NVRTC compile + module load) against a cached call;
3. host overhead per call at n = 32: our op, its launch paths (cuda.bindings with arguments packed once, cuda.core,
   CuPy when present) against torch.relu.
Goals (issue 8): forward and backward <= 1.02x torch's time at 2^26; the op's call overhead at n = 32 <= 1.2x
torch.relu's.
"""

from __future__ import annotations

import argparse
import ctypes
import time
from pathlib import Path

import torch
from course.report import Goals, Table
from course.timing import bandwidth_gbs, interleaved_rounds, time_cuda, time_host_loop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    args = parser.parse_args()

    import nvrtc_relu
    from nvrtc_relu import ops
    from nvrtc_relu.cupy_side import cupy_skip_reason, relu_forward_cupy

    reason = nvrtc_relu.driver_skip_reason() if torch.cuda.is_available() else "no CUDA device visible"
    if reason:
        print(f"[05_nvrtc] bench needs a GPU: {reason}. Nothing measured.")
        return

    goals = Goals()

    # ---- 2. first call vs cached (first, so that nothing is compiled yet) ------------------------------------
    nvrtc_relu.clear_cache()
    x_small = torch.randn(32, device="cuda")
    torch.cuda.synchronize()
    start = time.perf_counter()
    nvrtc_relu.relu_forward(x_small)
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    nvrtc_relu.relu_forward(x_small)
    torch.cuda.synchronize()
    cached_ms = (time.perf_counter() - start) * 1e3
    table = Table("05_nvrtc: first call (NVRTC compile + cuModuleLoadData) vs cached", ["call", "time_ms"])
    table.add(call="first (compile + load)", time_ms=first_ms)
    table.add(call="cached", time_ms=cached_ms)
    table.save(args.out / "nvrtc_first_call")

    # ---- 1. throughput at 2^26 -----------------------------------------------------------------------------
    n = 1 << 26
    x = torch.randn(n, device="cuda")
    grad = torch.randn(n, device="cuda")
    y_torch = torch.relu(x)
    torch.testing.assert_close(nvrtc_relu.relu_forward(x), y_torch)  # correct before fast
    torch.testing.assert_close(
        nvrtc_relu.relu_backward(grad, x), torch.ops.aten.threshold_backward(grad, y_torch, 0.0), rtol=0, atol=0
    )
    table = Table(
        "05_nvrtc: ReLU at n = 2^26 float32 (CUDA events, median of 50)",
        ["op", "impl", "time_us", "GB/s", "vs torch"],
    )
    cases = {
        "forward": (
            8 * n,
            lambda: torch.relu(x),
            lambda: nvrtc_relu.relu_forward(x),
        ),
        "backward": (
            12 * n,
            lambda: torch.ops.aten.threshold_backward(grad, y_torch, 0.0),  # what torch.relu's backward runs
            lambda: nvrtc_relu.relu_backward(grad, x),
        ),
    }
    for op, (bytes_moved, torch_fn, ours_fn) in cases.items():
        t_torch = time_cuda(torch_fn)
        t_ours = time_cuda(ours_fn)
        ratio = t_ours.median_ms / t_torch.median_ms
        table.add(
            op=op,
            impl="torch",
            time_us=t_torch.median_us,
            **{"GB/s": bandwidth_gbs(bytes_moved, t_torch.median_ms), "vs torch": 1.0},
        )
        table.add(
            op=op,
            impl="nvrtc",
            time_us=t_ours.median_us,
            **{"GB/s": bandwidth_gbs(bytes_moved, t_ours.median_ms), "vs torch": ratio},
        )
        rounds = interleaved_rounds({"torch": torch_fn, "ours": ours_fn}, rounds=7, repeat=30)
        goals.check_rounds(
            f"{op} at 2^26, time / torch's", [o / t for o, t in zip(rounds["ours"], rounds["torch"])], "<=", 1.02, "x"
        )
    table.save(args.out / "nvrtc_relu_2p26")

    # ---- 3. host overhead at n = 32 ---------------------------------------------------------------------------
    xs = torch.randn(32, device="cuda")
    ys = torch.empty_like(xs)
    launcher = ops.kernels(0)["relu_forward"]
    handle = ops.current_stream_handle(0)
    xs_grad = xs.clone().requires_grad_()
    from cuda.bindings import driver

    prebuilt_params = launcher.pack(ys.data_ptr(), xs.data_ptr(), 32)
    prebuilt_stream = driver.CUstream(handle)
    # The same driver call without cuda.bindings (ctypes straight into libcuda): is the time the binding's or the
    # driver's?
    libcuda_launch = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    libcuda_launch.restype = ctypes.c_int
    libcuda_launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    function_address = int(launcher.function)
    from nvrtc_relu._c_launch import launch as c_launch

    calls = {
        "torch.relu": lambda: torch.relu(xs),
        "nvrtc_relu.relu": lambda: nvrtc_relu.relu(xs),
        "torch.relu, x.requires_grad": lambda: torch.relu(xs_grad),
        "nvrtc_relu.relu, x.requires_grad (autograd.Function)": lambda: nvrtc_relu.relu(xs_grad),
        "nvrtc_relu.relu_forward (no autograd)": lambda: nvrtc_relu.relu_forward(xs),
        # Where the time of one call goes, piece by piece:
        "part: torch.empty_like(x)": lambda: torch.empty_like(xs),
        "part: torch.cuda.current_stream().cuda_stream": lambda: torch.cuda.current_stream(0).cuda_stream,
        "part: ops.current_stream_handle (raw int)": lambda: ops.current_stream_handle(0),
        "part: Launcher (grid, pack, cuLaunchKernel)": lambda: launcher(
            handle, 32, ops.BLOCK, ys.data_ptr(), xs.data_ptr(), 32
        ),
        "part: driver.cuLaunchKernel alone (all arguments prebuilt)": lambda: driver.cuLaunchKernel(
            launcher.function, 1, 1, 1, ops.BLOCK, 1, 1, 0, prebuilt_stream, prebuilt_params, 0
        ),
        "part: libcuda cuLaunchKernel through ctypes (all arguments prebuilt)": lambda: libcuda_launch(
            function_address, 1, 1, 1, ops.BLOCK, 1, 1, 0, handle, prebuilt_params, None
        ),
        # The launch the op makes (ops.c_launch): grid and arguments in C, then the same driver call
        "part: C launch (_c_launch.launch: grid, arguments, cuLaunchKernel)": lambda: c_launch(
            launcher.handle, handle, 32, 4, ops.BLOCK, ys.data_ptr(), xs.data_ptr(), 32
        ),
        "relu_forward via cuda.core launch()": lambda: nvrtc_relu.relu_forward_core(xs),
    }
    if not cupy_skip_reason():
        calls["relu_forward via CuPy RawKernel"] = lambda: relu_forward_cupy(xs)
    table = Table("05_nvrtc: host time per call at n = 32 (2000 calls, median of 7)", ["call", "time_us", "vs torch"])
    base = None
    results = {}
    for name, fn in calls.items():
        try:
            t = time_host_loop(fn)
        except Exception as error:  # an API difference in another cuda.core/CuPy version must not stop the bench
            print(f"  {name}: not measured ({type(error).__name__}: {error})")
            continue
        base = base or t.median_us
        results[name] = t.median_us
        table.add(call=name, time_us=t.median_us, **{"vs torch": t.median_us / base})
    table.save(args.out / "nvrtc_overhead_n32")
    # The goal, timed again in interleaved rounds: host time moves 10-15 % between runs.
    pair = {name: calls[name] for name in ("torch.relu", "nvrtc_relu.relu")}
    host = interleaved_rounds(pair, rounds=7, timer=time_host_loop, calls=2000, repeat=3)
    ratios = [o / t for o, t in zip(host["nvrtc_relu.relu"], host["torch.relu"])]
    goals.check_rounds("relu call overhead at n = 32, time / torch.relu's", ratios, "<=", 1.2, "x")
    grad_ratio = (
        results["nvrtc_relu.relu, x.requires_grad (autograd.Function)"] / results["torch.relu, x.requires_grad"]
    )
    print(f"  (with x.requires_grad, recording the graph: {grad_ratio:.2f}x torch.relu's; not a goal)")

    goals.report(args.out / "goals.txt")


if __name__ == "__main__":
    main()
