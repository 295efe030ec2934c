"""Benchmark (make bench): the NVRTC-compiled ReLU against torch.relu on one GPU.

1. the first call (NVRTC compile + module load) against a cached call;
2. forward and backward at n = 2^26 float32 through the registered ops (CUDA-event medians, GB/s, ratio to PyTorch
   in the same run);
3. host time per call at n = 32, where the work is all host time: the op, then each layer of one call;
4. faster launching: what building the argument array once (faster_launch.PackedLauncher) and launching from C
   (nvrtc_relu._c_launch) buy, as a whole relu_forward and as the launch alone; cuda.core's launch() and CuPy's
   RawKernel (when installed) for comparison.
Goals: forward and backward <= 1.02x torch's time at 2^26; the op's call overhead at n = 32 <= 1.2x torch.relu's.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import time
from pathlib import Path

import torch
from course.build import import_if_built
from course.checks import check_tensor
from course.report import Goals, Table
from course.timing import bandwidth_gbs, interleaved_rounds, time_cuda, time_host_loop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    args = parser.parse_args()

    import nvrtc_relu
    from cuda.bindings import driver as cu
    from nvrtc_relu import driver, faster_launch, launch
    from nvrtc_relu.cupy_side import cupy_skip_reason, relu_forward_cupy

    reason = nvrtc_relu.driver_skip_reason() if torch.cuda.is_available() else "no CUDA device visible"
    if reason:
        print(f"[05_nvrtc] bench needs a GPU: {reason}. Nothing measured.")
        return
    # the launch from C: left out, with a note, where it is not built; an error under COURSE_REQUIRE_BUILDS=1
    c_module = import_if_built("nvrtc_relu._c_launch")

    goals = Goals()

    # ---- 1. first call vs cached (first, so that nothing is compiled yet) ------------------------------------
    nvrtc_relu.clear_cache()
    x_small = torch.randn(32, device="cuda")
    torch.cuda.synchronize()
    # torch.library.custom_op's wrapper imports torch._dynamo on the op's first call in a process: timed apart
    start = time.perf_counter()
    importlib.import_module("torch._dynamo")

    dynamo_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    nvrtc_relu.relu(x_small)
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    nvrtc_relu.relu(x_small)
    torch.cuda.synchronize()
    cached_ms = (time.perf_counter() - start) * 1e3
    table = Table("05_nvrtc: first call (NVRTC compile + cuModuleLoadData) vs cached", ["call", "time_ms"])
    table.add(call="import torch._dynamo (custom_op's first call does it)", time_ms=dynamo_ms)
    table.add(call="first call (compile + load + launch)", time_ms=first_ms)
    table.add(call="cached", time_ms=cached_ms)
    table.save(args.out / "nvrtc_first_call")

    # ---- 2. throughput at 2^26 -----------------------------------------------------------------------------
    n = 1 << 26
    x = torch.randn(n, device="cuda")
    grad = torch.randn(n, device="cuda")
    y_torch = torch.relu(x)
    torch.testing.assert_close(nvrtc_relu.relu(x), y_torch)  # correct before fast
    torch.testing.assert_close(
        nvrtc_relu.relu_backward(grad, x), torch.ops.aten.threshold_backward(grad, y_torch, 0.0), rtol=0, atol=0
    )
    table = Table(
        "05_nvrtc: ReLU at n = 2^26 float32 (CUDA events, median of 50)",
        ["op", "impl", "time_us", "GB/s", "vs torch"],
    )
    cases = {
        "forward": (8 * n, lambda: torch.relu(x), lambda: nvrtc_relu.relu(x)),
        "backward": (
            12 * n,
            lambda: torch.ops.aten.threshold_backward(grad, y_torch, 0.0),  # what torch.relu's backward runs
            lambda: nvrtc_relu.relu_backward(grad, x),
        ),
    }
    for op, (bytes_moved, torch_fn, ours_fn) in cases.items():
        t_torch = time_cuda(torch_fn)
        t_ours = time_cuda(ours_fn)
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
            **{"GB/s": bandwidth_gbs(bytes_moved, t_ours.median_ms), "vs torch": t_ours.median_ms / t_torch.median_ms},
        )
        rounds = interleaved_rounds({"torch": torch_fn, "ours": ours_fn}, rounds=7, repeat=30)
        goals.check_rounds(
            f"{op} at 2^26, time / torch's", [o / t for o, t in zip(rounds["ours"], rounds["torch"])], "<=", 1.02, "x"
        )
    table.save(args.out / "nvrtc_relu_2p26")

    # ---- 3. and 4. host time per call at n = 32 -----------------------------------------------------------------
    xs = torch.randn(32, device="cuda")
    ys = torch.empty_like(xs)
    xs_grad = xs.clone().requires_grad_()
    function = nvrtc_relu.kernels(0)["relu_forward"]
    stream = torch.cuda.current_stream(0).cuda_stream
    packed = faster_launch.packed_launcher(0, "relu_forward")
    # every argument of the driver call prepared once, outside the timed loop
    prebuilt_params = packed.pack(ys.data_ptr(), xs.data_ptr(), 32)
    prebuilt_stream = cu.CUstream(stream)
    # the same driver call without cuda.bindings (ctypes straight into libcuda): is the time the binding's or the
    # driver's?
    libcuda_launch = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    libcuda_launch.restype = ctypes.c_int
    libcuda_launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    function_address = int(function)

    def in_primary_context():
        with driver.in_primary_context(0):
            pass

    def op_without_autograd():
        with torch.inference_mode():  # no Autograd key: the dispatcher goes straight to the implementation
            return nvrtc_relu.relu(xs)

    # The same implementation registered without custom_op's Python wrapper (torch.library.define + impl, no
    # autograd): what the wrapper itself costs.
    torch.library.define("nvrtc_relu_bench::relu", "(Tensor x) -> Tensor")
    torch.library.impl("nvrtc_relu_bench::relu", "cuda", nvrtc_relu.relu_forward)

    calls = {
        "torch.relu": lambda: torch.relu(xs),
        "nvrtc_relu.relu (the registered op)": lambda: nvrtc_relu.relu(xs),
        "torch.relu, x.requires_grad": lambda: torch.relu(xs_grad),
        "nvrtc_relu.relu, x.requires_grad": lambda: nvrtc_relu.relu(xs_grad),
        "nvrtc_relu.relu under torch.inference_mode() (no autograd layer)": op_without_autograd,
        "the implementation as torch.library.define + impl, no autograd": lambda: torch.ops.nvrtc_relu_bench.relu(xs),
        "nvrtc_relu.relu_forward (its implementation, no dispatcher)": lambda: nvrtc_relu.relu_forward(xs),
        # The layers of relu_forward, one by one:
        "part: check_tensor(x)": lambda: check_tensor("x", xs, dtypes=(torch.float32,), device="cuda", contiguous=True),
        "part: torch.empty_like(x)": lambda: torch.empty_like(xs),
        "part: torch.cuda.current_stream(0).cuda_stream": lambda: torch.cuda.current_stream(0).cuda_stream,
        "part: driver.in_primary_context (cuCtxGetCurrent)": in_primary_context,
        "part: launch.launch (grid, cuda.bindings packs the arguments, cuLaunchKernel)": lambda: launch.launch(
            function, "relu_forward", 32, stream, ys.data_ptr(), xs.data_ptr(), 32
        ),
        # Faster launching (faster_launch.py):
        "faster: relu_forward_packed (argument array built once)": lambda: faster_launch.relu_forward_packed(xs),
        "part: PackedLauncher (grid, pack_into, cuLaunchKernel)": lambda: packed(
            stream, 32, ys.data_ptr(), xs.data_ptr(), 32
        ),
        "part: cuda.bindings cuLaunchKernel alone, every argument prebuilt": lambda: cu.cuLaunchKernel(
            function, 1, 1, 1, launch.BLOCK, 1, 1, 0, prebuilt_stream, prebuilt_params, 0
        ),
        "part: libcuda cuLaunchKernel through ctypes, every argument prebuilt": lambda: libcuda_launch(
            function_address, 1, 1, 1, launch.BLOCK, 1, 1, 0, stream, prebuilt_params, None
        ),
    }
    if c_module is not None:
        calls["faster: relu_forward_c (the launch from C)"] = lambda: faster_launch.relu_forward_c(xs)
        calls["part: _c_launch.launch (grid, arguments, cuLaunchKernel in C)"] = lambda: c_module.launch(
            function_address,
            stream,
            32,
            launch.ITEMS_PER_THREAD["relu_forward"],
            launch.BLOCK,
            ys.data_ptr(),
            xs.data_ptr(),
            32,
        )
    calls["relu_forward via cuda.core launch()"] = lambda: nvrtc_relu.relu_forward_core(xs)
    why_no_cupy = cupy_skip_reason()
    if why_no_cupy:
        print(f"  CuPy RawKernel: not measured ({why_no_cupy})")
    else:
        calls["relu_forward via CuPy RawKernel"] = lambda: relu_forward_cupy(xs)
    table = Table("05_nvrtc: host time per call at n = 32 (2000 calls, median of 7)", ["call", "time_us", "vs torch"])
    results = {}
    for name, fn in calls.items():
        results[name] = time_host_loop(fn).median_us
        table.add(call=name, time_us=results[name], **{"vs torch": results[name] / results["torch.relu"]})
    table.save(args.out / "nvrtc_overhead_n32")

    # The goal, timed again in interleaved rounds: host time moves 10-15 % between runs.
    pair = {name: calls[name] for name in ("torch.relu", "nvrtc_relu.relu (the registered op)")}
    host = interleaved_rounds(pair, rounds=7, timer=time_host_loop, calls=2000, repeat=3)
    ratios = [o / t for o, t in zip(host["nvrtc_relu.relu (the registered op)"], host["torch.relu"])]
    goals.check_rounds("relu call overhead at n = 32, time / torch.relu's", ratios, "<=", 1.2, "x")
    # Where the op's time goes, by difference of the rows above (not goals)
    implementation = results["nvrtc_relu.relu_forward (its implementation, no dispatcher)"]
    no_autograd = results["nvrtc_relu.relu under torch.inference_mode() (no autograd layer)"]
    op = results["nvrtc_relu.relu (the registered op)"]
    goals.note(f"of the op's {op:.1f} µs: the Python autograd layer {op - no_autograd:.1f} µs, the dispatcher and")
    goals.note(f"custom_op's wrapper {no_autograd - implementation:.1f} µs, the implementation {implementation:.1f} µs")
    for name in (
        "faster: relu_forward_packed (argument array built once)",
        "faster: relu_forward_c (the launch from C)",
    ):
        if name in results:
            goals.note(f"{name}: {implementation - results[name]:.2f} µs a call less than relu_forward")
    goals.report(args.out / "goals.txt")


if __name__ == "__main__":
    main()
