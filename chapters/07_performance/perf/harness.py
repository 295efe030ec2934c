"""One harness, every implementation the course built, the same inputs and the same timer.

Four workloads, each done several ways:

  square_bias   y = x² + b (b a scalar)   Python loop, NumPy, eager CPU, C extension (ch01), eager GPU,
                                          CUDA extension (ch03), torch.compile
  add           c = a + b                 Python loop, NumPy, eager CPU, eager GPU, add2 seed and vectorized
                                          (ch04, JIT/AOT-built), torch.compile
  relu          y = max(x, 0)             NumPy, eager CPU, eager GPU, NVRTC ReLU (ch05), torch.compile
  norm          ‖a − b‖₂                  NumPy, eager CPU, torch.norm(a - b) on the GPU, the ch06 ladder, torch.compile

and, on a GPU, each work written in Triton (perf/triton_kernels.py, autotuned): the peer many users would pick
instead of CUDA C. torch.compile is compiled for each size (course.compiled.compile_per_shape), as its users run
it; the first call at each size (compilation, autotuning, module loading) is timed on its own, in its own column.

Every implementation is checked against a float64 reference before it is timed (correct before fast). GPU work
is timed with CUDA events after warm-up (course.timing.time_cuda), in ROUNDS interleaved rounds over all the GPU
implementations of a work (course.timing.interleaved_rounds), so that a slow moment of the machine falls on all of
them alike: a row gives the median over rounds and its min and max, and its speed-up over eager is the median of
the per-round ratios. CPU work is timed with a monotonic clock.

The course's ops are called through their public functions, as a user calls them; the chapters are imported as
their reference builds (course.build.import_reference_chapter), also under EXERCISE=1, where only this chapter's
exercise (perf/extra_implementation.py) is the student's. A chapter that is not built leaves its rows out and says
so; under COURSE_REQUIRE_BUILDS=1 (make gpu-check, CI) that is an error (_chapter).
"""

from __future__ import annotations

import functools
import importlib
import math
import statistics
import sys
from collections.abc import Callable

import torch
from course.build import builds_required, import_reference_chapter
from course.compiled import compile_per_shape, first_call_seconds
from course.timing import bandwidth_gbs, interleaved_rounds, rotating, rotation_count, time_cpu

from perf.extra_implementation import EXTRA_IMPLEMENTATION
from perf.implementation import Implementation

# Bytes each workload must move per element in float32 (each input read once, each output written once) and the
# floating-point operations per element: the two numbers that place it on a roofline.
WORKLOADS = {
    "square_bias": {"bytes": 8, "flops": 2, "what": "y = x*x + b"},
    "add": {"bytes": 12, "flops": 1, "what": "c = a + b"},
    "relu": {"bytes": 8, "flops": 1, "what": "y = max(x, 0)"},
    "norm": {"bytes": 8, "flops": 3, "what": "||a - b||_2"},
}
PYTHON_LOOP_MAX = 2**16  # a Python loop at 2**28 would take minutes
CPU_MAX = 2**22  # the CPU rows stop here: past it they only take longer, the story is told
ROUNDS = 5  # interleaved timing rounds per GPU implementation and size
# On the GPU each implementation takes turns over several input sets (course.timing.rotation_count), so that
# repeated calls read device memory, not the 50 MB L2 cache that one small set would sit in. Chapter 06's bench
# does the same, and a test checks that both give each rung the same time.


def _left_out(what: str, error: ImportError) -> None:
    """Under COURSE_REQUIRE_BUILDS=1 (make gpu-check, CI) a missing build is an error; elsewhere its rows are left
    out, and the run says so."""
    if builds_required():
        raise error
    print(f"  (leaving out {what}: {str(error).splitlines()[0][:200]})", file=sys.stderr)


def _chapter(chapter: str, package: str):
    """Another chapter's package, always its reference build (course.build.import_reference_chapter), or None where
    it is not built here. Only ImportError (a build that is missing, or made for another torch) is caught: any other
    error while importing is a real one and stops the run."""
    try:
        return import_reference_chapter(chapter, package)
    except ImportError as error:
        _left_out(chapter, error)
        return None


def _numpy(fn):
    """The tensors become NumPy arrays once, outside the timed call."""

    def prepare(*tensors):
        arrays = [t.numpy() for t in tensors]
        return lambda: fn(*arrays)

    return prepare


def _python(fn):
    """The tensors become Python lists (a 0-d tensor a float) once, outside the timed call."""

    def prepare(*tensors):
        values = [t.tolist() for t in tensors]
        return lambda: fn(*values)

    return prepare


def _triton():
    """perf.triton_kernels, or None where there is no GPU, or no Triton (an ImportError, left out as a missing build
    is: see _left_out)."""
    if not torch.cuda.is_available():
        return None
    try:
        return importlib.import_module("perf.triton_kernels")
    except ImportError as error:
        _left_out("Triton", error)
        return None


def implementations(*, with_compile: bool = True) -> list[Implementation]:
    impls: list[Implementation] = []
    add = impls.append

    # --- y = x*x + b ---------------------------------------------------------------------------------------------
    add(
        Implementation(
            "square_bias",
            "python loop",
            "cpu",
            _python(lambda xs, b: [v * v + b for v in xs]),
            max_n=PYTHON_LOOP_MAX,
        )
    )
    add(Implementation("square_bias", "numpy", "cpu", _numpy(lambda x, b: x * x + b)))
    add(Implementation("square_bias", "eager", "cpu", lambda x, b: lambda: x * x + b, baseline=True))
    sq = _chapter("01_c_extension", "square_bias")
    if sq is not None:
        add(
            Implementation("square_bias", "C extension", "cpu", lambda x, b: lambda: sq.square_bias(x, b), chapter="01")
        )
    add(Implementation("square_bias", "eager", "cuda", lambda x, b: lambda: x * x + b, baseline=True))
    sqc = _chapter("03_cuda_extension", "square_bias_cuda")
    if sqc is not None:
        add(
            Implementation(
                "square_bias", "CUDA extension", "cuda", lambda x, b: lambda: sqc.square_bias(x, b), chapter="03"
            )
        )
    if with_compile:
        fused = compile_per_shape(lambda x, b: x * x + b)
        add(
            Implementation(
                "square_bias", "torch.compile", "cuda", lambda x, b: lambda: fused(x, b), peer="torch.compile"
            )
        )

    # --- c = a + b -----------------------------------------------------------------------------------------------
    add(
        Implementation(
            "add",
            "python loop",
            "cpu",
            _python(lambda a, b: [p + q for p, q in zip(a, b)]),
            max_n=PYTHON_LOOP_MAX,
        )
    )
    add(Implementation("add", "numpy", "cpu", _numpy(lambda a, b: a + b)))
    add(Implementation("add", "eager", "cpu", lambda a, b: lambda: a + b, baseline=True))
    add(Implementation("add", "eager", "cuda", lambda a, b: lambda: a + b, baseline=True))
    add2 = _chapter("04_jit", "add2")
    if add2 is not None:
        add(Implementation("add", "add2 vectorized", "cuda", lambda a, b: lambda: add2.add2(a, b), chapter="04"))
        add(Implementation("add", "add2 seed", "cuda", lambda a, b: lambda: add2.add2_seed(a, b), chapter="04"))
    if with_compile:
        compiled_add = compile_per_shape(lambda a, b: a + b)
        add(
            Implementation(
                "add", "torch.compile", "cuda", lambda a, b: lambda: compiled_add(a, b), peer="torch.compile"
            )
        )

    # --- y = relu(x) ---------------------------------------------------------------------------------------------
    add(Implementation("relu", "numpy", "cpu", _numpy(lambda x: x.clip(min=0))))
    add(Implementation("relu", "eager", "cpu", lambda x: lambda: torch.relu(x), baseline=True))
    add(Implementation("relu", "eager", "cuda", lambda x: lambda: torch.relu(x), baseline=True))
    relu = _chapter("05_nvrtc", "nvrtc_relu")
    if relu is not None:
        add(Implementation("relu", "NVRTC ReLU", "cuda", lambda x: lambda: relu.relu(x), chapter="05"))
    if with_compile:
        compiled_relu = compile_per_shape(torch.relu)
        add(Implementation("relu", "torch.compile", "cuda", lambda x: lambda: compiled_relu(x), peer="torch.compile"))

    # --- ||a - b|| -----------------------------------------------------------------------------------------------
    add(Implementation("norm", "numpy", "cpu", _numpy(lambda a, b: float(((a - b) ** 2).sum() ** 0.5))))
    add(Implementation("norm", "eager", "cpu", lambda a, b: lambda: torch.norm(a - b), baseline=True))
    add(Implementation("norm", "eager", "cuda", lambda a, b: lambda: torch.norm(a - b), baseline=True))
    norm = _chapter("06_shared_memory_norm", "norm_diff")
    if norm is not None:
        for version in sorted(norm.VERSIONS):
            if version == 0:
                continue  # the seed's single-block design is wrong past 4096 elements (ch06's pitfall)
            add(
                Implementation(
                    "norm",
                    f"ladder rung {version}",
                    "cuda",
                    lambda a, b, v=version: lambda: norm.norm_diff(a, b, version=v),
                    chapter="06",
                )
            )
    if with_compile:
        compiled_norm = compile_per_shape(lambda a, b: torch.linalg.vector_norm(a - b))
        add(
            Implementation(
                "norm", "torch.compile", "cuda", lambda a, b: lambda: compiled_norm(a, b), peer="torch.compile"
            )
        )

    tk = _triton()
    if tk is not None:
        for workload, fn in [
            ("square_bias", tk.square_bias),
            ("add", tk.add),
            ("relu", tk.relu),
            ("norm", tk.norm_diff),
        ]:
            add(Implementation(workload, "Triton", "cuda", lambda *t, fn=fn: lambda: fn(*t), peer="Triton"))

    add(EXTRA_IMPLEMENTATION)
    return impls


def make_inputs(workload: str, n: int, device: str, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """float32 inputs for one workload, drawn on `device` itself (drawing 2^28 numbers on the CPU and copying them
    over takes seconds; on the GPU, milliseconds)."""
    generator = torch.Generator(device=device).manual_seed(seed + n)
    first = torch.randn(n, generator=generator, device=device)
    if workload == "square_bias":
        return (first, torch.randn((), generator=generator, device=device))
    if workload == "relu":
        return (first,)
    return (first, torch.randn(n, generator=generator, device=device))


def input_sets(workload: str, n: int, device: str) -> list[tuple[torch.Tensor, ...]]:
    """Inputs for one workload: one set on the CPU; on the GPU enough sets (views of one larger draw) to cover
    course.timing.ROTATE_BYTES. A 0-dim b is shared by all sets."""
    count = 1 if device == "cpu" else rotation_count(WORKLOADS[workload]["bytes"] * n)
    if count == 1:
        return [make_inputs(workload, n, device)]
    whole = make_inputs(workload, n * count, device)
    return [tuple(t[i * n : (i + 1) * n] if t.dim() else t for t in whole) for i in range(count)]


def reference(workload: str, inputs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The float64 answer, computed on the inputs' device."""
    x = [t.detach().double() for t in inputs]
    if workload == "square_bias":
        return x[0] * x[0] + x[1]
    if workload == "add":
        return x[0] + x[1]
    if workload == "relu":
        return torch.relu(x[0])
    return torch.linalg.vector_norm(x[0] - x[1])


def check(impl: Implementation, inputs: tuple[torch.Tensor, ...], expected: torch.Tensor | None = None) -> None:
    """Raise AssertionError unless impl's result equals the float64 reference (`expected`, computed from `inputs`
    when not given) to float32 accuracy."""
    if expected is None:
        expected = reference(impl.workload, inputs)
    _check_result(impl, impl.prepare(*inputs)(), expected)


def _check_result(impl: Implementation, result: object, expected: torch.Tensor) -> None:
    result = torch.as_tensor(result).detach().to(device=expected.device, dtype=torch.float64)
    result = result.reshape(expected.shape)
    # The norm sums n squares; its error grows with the summation order, so it gets a relative tolerance.
    rtol = 1e-4 if impl.workload == "norm" else 1.3e-6
    torch.testing.assert_close(result, expected, rtol=rtol, atol=1e-5, msg=lambda m: f"{impl.name}: {m}")


def run(
    sizes: list[int],
    *,
    devices: tuple[str, ...] = ("cpu", "cuda"),
    with_compile: bool = True,
    repeat: int = 20,
    rounds: int = ROUNDS,
    progress: Callable[[str], None] = print,
    impls: list[Implementation] | None = None,
) -> list[dict[str, object]]:
    """Check, then time, every implementation at every size; returns one row per (implementation, size)."""
    if "cuda" in devices and not torch.cuda.is_available():
        devices = tuple(d for d in devices if d != "cuda")
    impls = [
        i for i in (impls or implementations(with_compile=with_compile and "cuda" in devices)) if i.device in devices
    ]
    groups: dict[tuple[str, str], list[Implementation]] = {}
    for impl in sorted(impls, key=lambda i: not i.baseline):  # the baseline first in each group
        groups.setdefault((impl.workload, impl.device), []).append(impl)
    rows: list[dict[str, object]] = []
    for count, n in enumerate(sizes, 1):
        progress(f"[{count}/{len(sizes)}] n = 2^{int(math.log2(n))} = {n:,}")
        if "cuda" in devices:
            src, dst = torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
            copy = interleaved_rounds({"copy": functools.partial(dst.copy_, src)}, rounds=rounds, repeat=repeat)
            rows.append(_row("copy", "device copy", "cuda", n, copy["copy"], 8 * n, None, float("nan")))
            del src, dst
        for (workload, device), group in groups.items():
            group = [i for i in group if n <= (i.max_n or (CPU_MAX if device == "cpu" else n))]
            if not group:
                continue
            # Every implementation of a work on a device gets the same inputs and the same float64 answer, made
            # once per size (at 2^28 each costs a second or more) and freed before the next.
            sets = input_sets(workload, n, device)
            expected = reference(workload, sets[0])
            fns, first_s = {}, {}
            for impl in group:
                fn = impl.prepare(*sets[0])
                first_s[impl.name] = first_call_seconds(fn)  # compiles and autotunes, for torch.compile and Triton
                _check_result(impl, fn(), expected)
                fns[impl.name] = rotating([fn] + [impl.prepare(*inputs) for inputs in sets[1:]])
            if device == "cuda":
                times = interleaved_rounds(fns, rounds=rounds, repeat=repeat)
            else:
                times = {
                    name: [time_cpu(fn, repeat=max(3, repeat // 4), budget_s=2.0).median_ms] for name, fn in fns.items()
                }
            base = times[group[0].name] if group[0].baseline else None
            for impl in group:
                rows.append(
                    _row(
                        workload,
                        impl.name,
                        device,
                        n,
                        times[impl.name],
                        WORKLOADS[workload]["bytes"] * n,
                        base,
                        first_s[impl.name],
                    )
                )
                row = rows[-1]
                progress(
                    f"    {workload:<11} {device:<4} {impl.name:<22} {row['time_us']:>12.1f} us"
                    f"  (min {row['min_us']:.1f}, max {row['max_us']:.1f}; first call {row['first_call_ms']:.1f} ms)"
                )
            del sets, expected, fns
    order = {w: i for i, w in enumerate(["copy", *WORKLOADS])}
    rows.sort(key=lambda r: (order[r["workload"]], r["device"], r["implementation"], r["n"]))
    return rows


def _row(workload, name, device, n, times_ms, nbytes, base_ms, first_s):
    """One table row from the per-round times (ms); base_ms: the eager baseline's, round by round."""
    median_ms = statistics.median(times_ms)
    speedups = [b / t for b, t in zip(base_ms, times_ms)] if base_ms else []
    return {
        "workload": workload,
        "implementation": name,
        "device": device,
        "n": n,
        "time_us": median_ms * 1e3,
        "min_us": min(times_ms) * 1e3,
        "max_us": max(times_ms) * 1e3,
        "GB/s": bandwidth_gbs(nbytes, median_ms),
        "speedup_vs_eager": statistics.median(speedups) if speedups else float("nan"),
        "first_call_ms": first_s * 1e3,
        "_speedups": speedups,  # per round, for the goals (not written to the CSV)
    }
