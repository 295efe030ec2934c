"""The block sums of norm_blocks.h — the exercises — run on the CPU, one POSIX thread per CUDA thread.

These run without a GPU: they compile the same header that the kernels of rungs 1-4 use."""

from __future__ import annotations

import numpy as np
import pytest
from norm_diff import emulate

SIZES = [32, 64, 256, 1024]


def values(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n) ** 2 + np.arange(n)


@pytest.mark.parametrize("nthreads", SIZES)
def test_tree_sum(nthreads):
    x = values(nthreads)
    assert emulate.tree_sum(x) == pytest.approx(np.sum(x), rel=1e-13)


def test_warp_sum():
    x = values(32, seed=1)
    assert emulate.warp_sum(x) == pytest.approx(np.sum(x), rel=1e-13)
    assert emulate.warp_sum(np.arange(32.0)) == 496.0


@pytest.mark.parametrize("nthreads", SIZES)
def test_shuffle_sum(nthreads):
    x = values(nthreads, seed=2)
    assert emulate.shuffle_sum(x) == pytest.approx(np.sum(x), rel=1e-13)


def test_tree_order_is_exact_for_small_integers():
    # Every partial sum of 1..256 is an integer below 2^53: any correct order gives exactly 32896.
    assert emulate.tree_sum(np.arange(1.0, 257.0)) == 32896.0
    assert emulate.shuffle_sum(np.arange(1.0, 257.0)) == 32896.0


def test_bad_block_sizes_are_refused():
    with pytest.raises(ValueError, match="multiple of 32"):
        emulate.tree_sum(np.ones(48))
    with pytest.raises(ValueError, match="32 lanes"):
        emulate.warp_sum(np.ones(31))


@pytest.mark.nvcc
def test_racecheck_demo_compiles(tmp_path):
    """The pitfall program that `make racecheck-demo` runs under compute-sanitizer (on a GPU machine) builds here."""
    import subprocess
    from pathlib import Path

    from course.gpu import find_nvcc

    chapter = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [
            find_nvcc(),
            "-arch=sm_90",
            "-I",
            str(chapter.parents[1] / "common" / "include"),
            str(chapter / "src" / "racecheck_demo.cu"),
            "-o",
            str(tmp_path / "racecheck_demo"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "racecheck_demo").exists()
