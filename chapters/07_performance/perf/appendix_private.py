"""APPENDIX — what skipping the dispatcher buys. The only file of the course that uses torch._C (a private API).

The course's ops are built one way, with public APIs only (docs/how-an-op-is-built.md): a public Python function
calls the op registered with TORCH_LIBRARY through torch.ops, and the dispatcher runs its autograd kernel, then its
CUDA kernel. At small sizes a call's time is that host work, not the kernel. This module measures, for each course
op at n = 2^5 ... 2^14 on the GPU, what each layer of a call costs, and what a private shortcut would save:

  public call       the course's public function, as a user calls it (square_bias(x, b), add2(a, b), ...)
  Python wrapper    public call - the registered op called directly (torch.ops.<ns>.<op>.default(...))
  autograd key      the op - the same op with autograd's dispatch key skipped for the whole timed loop
                    (torch._C._AutoDispatchBelowAutograd, private: what the autograd layer costs when nothing needs
                    a gradient)
  torch.ops entry   torch.ops.aten.empty_like.default(x) - torch.empty_like(x): the same ATen op through torch.ops'
                    generic Python entry (schema matching, boxing) and through its generated binding; both below
                    autograd. Every torch.ops call pays this entry; PyTorch's own ops (torch.add) do not.
  checks + launch   the op below autograd - torch.ops.aten.empty_like.default(x) below autograd: what the op's C++
                    side costs beyond an allocation through the same entry (its input checks, the stream, the launch)
  kernel (GPU)      the kernel alone: 100 calls captured in a CUDA graph, replay time / 100
  PyTorch op        the PyTorch op the course's op replaces (x*x + b, torch.add, torch.relu, torch.norm(a - b))
  shortcut call     the op called below autograd, the private guard entered on every call: what a public function
                    taking the shortcut would pay (course.checks.call_below_autograd_if_no_grad did this, before
                    issue 22)
  shortcut saves    public call - shortcut call

Host µs per call over back-to-back calls (course.timing.time_host_loop), every layer of one op and size taking turns
in interleaved rounds (median of the rounds), so that a slow moment of the machine falls on all of them alike.
Differences of two medians can come out slightly negative where a layer costs nothing: read them as zero.

    python -m perf.appendix_private --out DIR      # make bench runs it on a GPU; DIR/appendix_private.{md,csv}
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from course.graphs import capture
from course.report import Table
from course.timing import time_cuda, time_host_loop

SIZES = [2**5, 2**8, 2**11, 2**14]
COLUMNS = [
    "op",
    "n",
    "public call",
    "Python wrapper",
    "autograd key",
    "torch.ops entry",
    "checks + launch",
    "kernel (GPU)",
    "PyTorch op",
    "public vs PyTorch",
    "shortcut call",
    "shortcut saves",
    "shortcut vs PyTorch",
]


def _below_autograd():
    """The private guard: while it is held, the dispatcher skips the Autograd keys (and records no graph)."""
    guard = getattr(torch._C, "_AutoDispatchBelowAutograd", None)
    if guard is None:
        raise RuntimeError(
            f"torch {torch.__version__} has no torch._C._AutoDispatchBelowAutograd: the appendix needs it"
        )
    return guard()


def shortcut(op: Callable, *args):
    """The private shortcut, as a public function would take it: the op below autograd, on every call."""
    with _below_autograd():
        return op(*args)


@dataclass
class Case:
    """One course op: its public function, the registered op that function calls, and the PyTorch op it replaces."""

    name: str
    workload: str  # the harness's name for the work (perf.harness.WORKLOADS)
    public: Callable  # public(*inputs)
    op: Callable  # the OpOverload: op(*inputs, *extra)
    pytorch: Callable  # pytorch(*inputs)
    make_inputs: Callable[[int], tuple]  # n -> CUDA inputs
    extra: tuple = ()  # the op's arguments after the inputs (a version number, ...)


def cases(square_bias_cuda=None, add2=None, nvrtc_relu=None, norm_diff=None) -> list[Case]:
    """The cases for the chapters' packages given (None: left out)."""

    def pair(n):
        return torch.randn(n, device="cuda"), torch.randn(n, device="cuda")

    found = []
    if square_bias_cuda is not None:
        found.append(
            Case(
                "x*x + b (ch 03)",
                "square_bias",
                square_bias_cuda.square_bias,
                torch.ops.square_bias_cuda.square_bias.default,
                lambda x, b: x * x + b,
                lambda n: (torch.randn(n, device="cuda"), torch.randn((), device="cuda")),
            )
        )
    if add2 is not None:
        found.append(Case("a + b (ch 04)", "add", add2.add2, torch.ops.add2.add2.default, torch.add, pair))
    if nvrtc_relu is not None:
        found.append(
            Case(
                "relu (ch 05)",
                "relu",
                nvrtc_relu.relu,
                torch.ops.nvrtc_relu.relu.default,
                torch.relu,
                lambda n: (torch.randn(n, device="cuda"),),
            )
        )
    if norm_diff is not None:
        found.append(
            Case(
                "‖a − b‖₂ (ch 06)",
                "norm",
                norm_diff.norm_diff,
                torch.ops.norm_diff.norm_diff.default,
                lambda a, b: torch.norm(a - b),
                pair,
                extra=(norm_diff.ops.BEST_VERSION,),
            )
        )
    return found


def _host_us(fn: Callable, below_autograd: bool, calls: int, repeat: int) -> float:
    if below_autograd:
        with _below_autograd():  # held around the whole timed loop: the layer's cost without the guard's own
            return time_host_loop(fn, calls=calls, repeat=repeat, warmup=50).median_ms * 1e3
    return time_host_loop(fn, calls=calls, repeat=repeat, warmup=50).median_ms * 1e3


def _kernel_us(fn: Callable, reps: int = 100) -> float:
    graph, _ = capture(lambda: [fn() for _ in range(reps)])
    return time_cuda(graph.replay, repeat=20).median_ms * 1e3 / reps


def layer_costs(t: dict[str, float], kernel_us: float) -> dict[str, float]:
    """One row's layers from the host times (µs per call) of one op at one size; see the module's docstring."""
    return {
        "public call": t["public"],
        "Python wrapper": t["public"] - t["op"],
        "autograd key": t["op"] - t["op below autograd"],
        "torch.ops entry": t["empty_like via torch.ops"] - t["empty_like"],
        "checks + launch": t["op below autograd"] - t["empty_like via torch.ops"],
        "kernel (GPU)": kernel_us,
        "PyTorch op": t["PyTorch"],
        "public vs PyTorch": t["PyTorch"] / t["public"],
        "shortcut call": t["shortcut"],
        "shortcut saves": t["public"] - t["shortcut"],
        "shortcut vs PyTorch": t["PyTorch"] / t["shortcut"],
    }


def measure(case: Case, n: int, *, rounds: int = 3, calls: int = 500, repeat: int = 5, kernel: bool = True) -> dict:
    """The row of one op at one size: every layer timed in interleaved rounds, the median of each."""
    inputs = case.make_inputs(n)
    args = (*inputs, *case.extra)
    x = inputs[0]
    expected = case.public(*inputs)  # correct before fast: the shortcut computes what the public call does
    torch.testing.assert_close(shortcut(case.op, *args), expected, msg=lambda m: f"{case.name}, shortcut: {m}")
    timed = {  # name -> (zero-argument call, below autograd for the whole loop?)
        "public": (lambda: case.public(*inputs), False),
        "op": (lambda: case.op(*args), False),
        "op below autograd": (lambda: case.op(*args), True),
        "shortcut": (lambda: shortcut(case.op, *args), False),
        "PyTorch": (lambda: case.pytorch(*inputs), False),
        "empty_like": (lambda: torch.empty_like(x), True),
        "empty_like via torch.ops": (lambda: torch.ops.aten.empty_like.default(x), True),
    }
    per_round: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(rounds):
        for name, (fn, below) in timed.items():
            per_round[name].append(_host_us(fn, below, calls, repeat))
    medians = {name: statistics.median(values) for name, values in per_round.items()}
    kernel_us = _kernel_us(lambda: case.op(*args)) if kernel else float("nan")
    row = {"op": case.name, "n": f"2^{n.bit_length() - 1}", **layer_costs(medians, kernel_us)}
    return {**row, "workload": case.workload, "n_elements": n}  # the last two for bench.py, not shown


def appendix_table(
    all_cases: list[Case], out: Path | None, *, sizes: list[int] = SIZES, kernel: bool = True, **timing
) -> Table:
    """Measure every case at every size, print the table as it is measured, save it as out/appendix_private.*"""
    table = Table("APPENDIX (private API): what each layer of one call costs, host µs per call", COLUMNS)
    for case in all_cases:
        for n in sizes:
            table.add(**measure(case, n, kernel=kernel, **timing))
    if out is not None:
        table.save(Path(out) / "appendix_private")
    return table


def main() -> int:
    from perf.harness import _chapter

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    parser.add_argument("--all-sizes", action="store_true", help="every power of 2 from 2^5 to 2^14")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("appendix: no CUDA device visible, nothing to measure")
        return 0
    modules = {
        "square_bias_cuda": _chapter("03_cuda_extension", "square_bias_cuda"),
        "add2": _chapter("04_jit", "add2"),
        "nvrtc_relu": _chapter("05_nvrtc", "nvrtc_relu"),
        "norm_diff": _chapter("06_shared_memory_norm", "norm_diff"),
    }
    sizes = [2**e for e in range(5, 15)] if args.all_sizes else SIZES
    appendix_table(cases(**modules), args.out, sizes=sizes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
