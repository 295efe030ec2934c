"""The peers a user would pick instead of CUDA C: Triton kernels (checked on the CPU through Triton's interpreter,
and on the GPU in the harness) and torch.compile compiled per size; and the agreement of chapters 06 and 07."""

import importlib.util
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from perf import implementations, run

CHAPTER = Path(__file__).resolve().parents[1]
COURSE = CHAPTER.parents[1]

INTERPRETER_CHECK = """
import torch
from perf.harness import make_inputs, reference
from perf.triton_kernels import run_untuned

for work in ("square_bias", "add", "relu", "norm"):
    for n in (0, 1, 1000, 4099):  # empty, one, not a multiple of the block, more than 4 blocks
        inputs = make_inputs(work, n, "cpu")
        got = run_untuned(work, *inputs).double()
        torch.testing.assert_close(got, reference(work, inputs), rtol=1e-5, atol=1e-5, msg=f"{work}, n = {n}")
print("ok")
"""


def test_triton_kernels_on_the_cpu_interpreter():
    pytest.importorskip("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(CHAPTER), str(COURSE / "common")])}
    result = subprocess.run(
        [sys.executable, "-c", INTERPRETER_CHECK], cwd=CHAPTER, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]


def test_peers_are_marked():
    impls = implementations(with_compile=True)
    assert {i.peer for i in impls if i.name == "torch.compile"} == {"torch.compile"}


@pytest.mark.gpu
@pytest.mark.slow
def test_torch_compile_per_size_is_at_least_half_as_fast_as_eager_from_2_24():
    """A sanity floor on what torch.compile generates: compiled with dynamic=True (one graph for every size) the
    norm once ran 100x slower than eager inside this harness. Compiled per size, every work's GPU time at 2^24 is
    near eager's or better (host overhead left out: perf.graphs.compiled_kernel_ratios says why)."""
    from perf.graphs import compiled_kernel_ratios

    ratios = {work: statistics.median(r) for work, r in compiled_kernel_ratios(rounds=3).items()}
    assert len(ratios) == 4 and all(r >= 0.5 for r in ratios.values()), ratios


@pytest.mark.gpu
@pytest.mark.slow
def test_triton_rows_are_checked_and_timed():
    impls = [
        i for i in implementations(with_compile=False) if i.device == "cuda" and (i.baseline or i.peer == "Triton")
    ]
    assert {i.workload for i in impls if i.peer == "Triton"} == {"square_bias", "add", "relu", "norm"}
    rows = run([2**12 + 3], devices=("cuda",), impls=impls, rounds=2, repeat=5, progress=lambda _: None)
    assert all(r["time_us"] > 0 for r in rows)


@pytest.mark.gpu
@pytest.mark.slow
def test_chapters_06_and_07_measure_each_rung_alike():
    """One number per kernel: chapter 06's bench and chapter 07's harness time the same rungs at 2^24 within 10 % of
    each other."""
    spec = importlib.util.spec_from_file_location("bench06", COURSE / "chapters/06_shared_memory_norm/bench.py")
    bench06 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench06)
    n = 2**24
    rungs = [f"ladder rung {v}" for v in (1, 2, 3, 4)]
    impls = [i for i in implementations(with_compile=False) if i.name in rungs]
    rows = {
        r["implementation"]: r["time_us"] for r in run([n], devices=("cuda",), impls=impls, progress=lambda _: None)
    }
    # Rounds taking turns between the two benches, so that other work on the GPU (make gpu-check runs several test
    # processes at once) falls on both alike; the verdict is on the median of the per-round times.
    ch06, ch07 = {v: [] for v in (1, 2, 3, 4)}, {v: [] for v in (1, 2, 3, 4)}
    for _ in range(5):
        measured = bench06.measure(n, rounds=1)
        rows = {
            r["implementation"]: r["time_us"] for r in run([n], devices=("cuda",), impls=impls, rounds=1, progress=str)
        }
        for v in ch06:
            ch06[v].append(measured[f"rung {v}"]["times_us"][0])
            ch07[v].append(rows[f"ladder rung {v}"])
    pairs = {v: (statistics.median(ch06[v]), statistics.median(ch07[v])) for v in ch06}
    shown = "; ".join(f"rung {v}: chapter 06 {a:.1f} us, chapter 07 {b:.1f} us" for v, (a, b) in pairs.items())
    assert all(abs(a - b) <= 0.10 * min(a, b) for a, b in pairs.values()), shown


@pytest.mark.gpu
@pytest.mark.slow
def test_the_chain_gives_the_same_result_every_way():
    """Eager, CUDA graph replay and torch.compile(mode="reduce-overhead") of ten x*x + b (checked inside ways)."""
    from course.notebook import use_chapter
    from perf.graphs import ways

    use_chapter("03_cuda_extension", build=False)
    from square_bias_cuda import square_bias

    assert set(ways(square_bias)) == {"eager", "CUDA graph replay", "torch.compile reduce-overhead"}
