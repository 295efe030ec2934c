"""Where one call's time goes at 2^10 elements, for each course op next to the PyTorch op it replaces.

At 2^10 the kernel runs for about a microsecond; the rest of a call is host work. Each row times one layer alone
(host time per call over 3000 back-to-back calls, median of 7, course.timing.time_host_loop), so the layers of a
call can be read off by difference:

  PyTorch op           what a user compares against (torch.add, x*x + b, torch.relu, torch.norm(a - b))
  course op            the public function: Python wrapper, the cheap common-case test, the op
  op, no wrapper       the registered op called directly (torch.ops.<ns>.<op>.default): dispatcher, autograd
                       kernel, binding, allocation, launch
  ... no autograd      the same under torch.inference_mode(): the autograd layer skipped
  full input checks    course.checks as the wrapper runs them when the cheap test fails (not on the fast path)
  empty_like           the output's allocation through PyTorch's caching allocator
  kernel (GPU)         the kernel alone: 100 calls captured in a CUDA graph, replay time / 100
"""

from __future__ import annotations

import torch
from course.checks import check_same, check_tensor
from course.graphs import capture
from course.report import Table
from course.timing import time_cuda, time_host_loop

N = 2**10


def _host_us(fn) -> float:
    return time_host_loop(fn, calls=3000, repeat=7).median_ms * 1e3


def _kernel_us(fn, reps: int = 100) -> float:
    graph, _ = capture(lambda: [fn() for _ in range(reps)])
    return time_cuda(graph.replay, repeat=20).median_ms * 1e3 / reps


def _no_grad_us(fn) -> float:
    with torch.inference_mode():
        return _host_us(fn)


def layers(square_bias, add2, relu, norm_diff) -> dict[str, dict[str, object]]:
    """op name -> layer -> zero-argument call, for the modules of chapters 03, 04, 05 and 06."""
    a, b = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    s = torch.randn((), device="cuda")
    dtypes = (torch.float32,)

    def full_checks():
        check_tensor("a", a, dtypes=dtypes)
        check_tensor("b", b, dtypes=dtypes)
        check_same(a=a, b=b)
        check_tensor("a", a, device="cuda")

    sq_op = torch.ops.square_bias_cuda.square_bias.default
    add_op = torch.ops.add2.add2.default
    norm_op = torch.ops.norm_diff.norm_diff.default
    return {
        "x*x + b (ch 03)": {
            "PyTorch op": lambda: a * a + s,
            "course op": lambda: square_bias.square_bias(a, s),
            "op, no wrapper": lambda: sq_op(a, s),
            "kernel (GPU)": lambda: sq_op(a, s),
        },
        "a + b (ch 04)": {
            "PyTorch op": lambda: torch.add(a, b),
            "course op": lambda: add2.add2(a, b),
            "op, no wrapper": lambda: add_op(a, b),
            "kernel (GPU)": lambda: add_op(a, b),
        },
        "relu (ch 05, NVRTC)": {
            "PyTorch op": lambda: torch.relu(a),
            "course op": lambda: relu.relu_forward(a),
            "op, no wrapper": lambda: relu.ops._relu_forward_checked(a),
            "kernel (GPU)": lambda: relu.ops._relu_forward_checked(a),
        },
        "‖a − b‖₂ (ch 06)": {
            "PyTorch op": lambda: torch.norm(a - b),
            "course op": lambda: norm_diff.norm_diff(a, b),
            "op, no wrapper": lambda: norm_op(a, b, 3),
            "kernel (GPU)": lambda: norm_op(a, b, 3),
        },
        "shared": {"full input checks": full_checks, "empty_like": lambda: torch.empty_like(a)},
    }


def overhead_table(modules: tuple, out) -> Table:
    table = Table(
        "one call at n = 2^10, host µs per call (kernel: GPU µs)",
        ["op", "PyTorch op", "course op", "op, no wrapper", "... no autograd", "kernel (GPU)", "course / PyTorch"],
    )
    calls = layers(*modules)
    shared = calls.pop("shared")
    for op, parts in calls.items():
        row = {"op": op}
        row["PyTorch op"] = _host_us(parts["PyTorch op"])
        row["course op"] = _host_us(parts["course op"])
        row["op, no wrapper"] = _host_us(parts["op, no wrapper"])
        row["... no autograd"] = _no_grad_us(parts["op, no wrapper"])
        row["kernel (GPU)"] = _kernel_us(parts["kernel (GPU)"])
        row["course / PyTorch"] = row["course op"] / row["PyTorch op"]
        table.add(**row)
    print(
        f"  full input checks (course.checks, off the fast path): {_host_us(shared['full input checks']):.2f} µs;"
        f" torch.empty_like: {_host_us(shared['empty_like']):.2f} µs"
    )
    table.save(out / "overhead_2p10")
    return table
