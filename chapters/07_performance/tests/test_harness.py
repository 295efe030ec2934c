"""The harness: every implementation is checked before it is timed, the checks can fail, and the bench writes its
tables and plots."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from perf import WORKLOADS, Implementation, implementations, run
from perf.harness import EXTRA_IMPLEMENTATION, check, make_inputs, reference

CHAPTER = Path(__file__).resolve().parents[1]


def test_every_workload_has_cpu_implementations_and_a_baseline():
    impls = implementations(with_compile=False)
    for workload in WORKLOADS:
        cpu = [i for i in impls if i.workload == workload and i.device == "cpu"]
        assert len(cpu) >= 2 and sum(i.baseline for i in cpu) == 1, workload


def test_the_chapters_ops_are_in_the_harness():
    names = {i.name for i in implementations(with_compile=False)}
    assert {"C extension", "CUDA extension", "add2 vectorized", "add2 seed", "NVRTC ReLU", "ladder rung 3"} <= names


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_reference_is_float64(workload):
    assert reference(workload, make_inputs(workload, 5, "cpu")).dtype == torch.float64


def test_check_rejects_a_wrong_implementation():
    wrong = Implementation("square_bias", "x*x - b", "cpu", lambda x, b: lambda: x * x - b)
    with pytest.raises(AssertionError, match="x\\*x - b"):
        check(wrong, make_inputs("square_bias", 1000, "cpu"))


def test_check_rejects_a_float16_shortcut():
    rough = Implementation("add", "fp16 add", "cpu", lambda a, b: lambda: (a.half() + b.half()).float())
    with pytest.raises(AssertionError):
        check(rough, make_inputs("add", 4096, "cpu"))


def test_extra_implementation_is_correct():
    """The exercise: one more implementation of y = x*x + b, checked like every other."""
    check(EXTRA_IMPLEMENTATION, make_inputs("square_bias", 3001, "cpu"))


def test_cpu_run_at_tiny_sizes():
    rows = run([2**10, 2**11], devices=("cpu",), with_compile=False, repeat=3, progress=lambda _: None)
    cpu_impls = [i for i in implementations(with_compile=False) if i.device == "cpu"]
    assert len(rows) == 2 * len(cpu_impls)
    for row in rows:
        assert row["time_us"] > 0 and row["GB/s"] > 0
    eager = [r for r in rows if r["implementation"] == "eager"]
    assert all(r["speedup_vs_eager"] == 1.0 for r in eager)


def test_python_loop_is_capped():
    rows = run(
        [2**17],
        devices=("cpu",),
        with_compile=False,
        repeat=3,
        progress=lambda _: None,
        impls=[i for i in implementations(with_compile=False) if i.name in ("python loop", "eager")],
    )
    assert {r["implementation"] for r in rows} == {"eager"}


def test_bench_writes_tables_and_plots(tmp_path):
    result = subprocess.run(
        [sys.executable, "bench.py", "--quick", "--no-compile", "--out", str(tmp_path)],
        cwd=CHAPTER,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("perf.csv", "perf.md", "time_vs_size.png", "speedup_vs_eager.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "| square_bias | C extension | cpu | 2^10 |" in (tmp_path / "perf.md").read_text()


@pytest.mark.gpu
def test_gpu_run_at_small_sizes(small):
    sizes = [2**10] if small else [2**10, 2**14]
    rows = run(sizes, devices=("cuda",), with_compile=not small, repeat=3, progress=lambda _: None)
    names = {r["implementation"] for r in rows}
    assert {"device copy", "eager", "CUDA extension", "add2 vectorized", "NVRTC ReLU", "ladder rung 3"} <= names
    if not small:
        assert "torch.compile" in names


def test_plots_with_gpu_rows(tmp_path):
    """The GPU-only pictures (bandwidth under the copy roof, the roofline) from made-up rows: no GPU needed."""
    from perf.plots import plot_all

    rows = []
    for n in (2**20, 2**22):
        rows.append(
            {
                "workload": "copy",
                "implementation": "device copy",
                "device": "cuda",
                "n": n,
                "time_us": n * 8 / 2.9e3,
                "GB/s": 2900.0,
                "speedup_vs_eager": float("nan"),
            }
        )
        for workload, spec in WORKLOADS.items():
            for name, efficiency in (("eager", 0.5), ("kernel", 0.95)):
                seconds = n * spec["bytes"] / (2.9e12 * efficiency)
                rows.append(
                    {
                        "workload": workload,
                        "implementation": name,
                        "device": "cuda",
                        "n": n,
                        "time_us": seconds * 1e6,
                        "GB/s": 2900 * efficiency,
                        "speedup_vs_eager": efficiency / 0.5,
                    }
                )
    written = plot_all(rows, tmp_path, "made-up rows")
    assert {p.name for p in written} == {
        "time_vs_size.png",
        "bandwidth_vs_size.png",
        "speedup_vs_eager.png",
        "roofline.png",
    }
    assert all(p.stat().st_size > 10_000 for p in written)
