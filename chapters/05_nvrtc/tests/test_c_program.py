"""The C program: NVRTC runs without a GPU (tested here); the Driver API parts need one (gpu-marked)."""

import math
import re

import pytest


def test_ptx_and_cubin_without_a_gpu(run_demo, tmp_path):
    result = run_demo("ptx")
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "kernels.compute_90.ptx").read_text()
    for kernel in ("vector_add", "relu_forward", "relu_backward"):
        assert f".visible .entry {kernel}(" in ptx
    assert ".target sm_90" in ptx
    cubin = (tmp_path / "kernels.sm_90.cubin").read_bytes()
    assert cubin[:4] == b"\x7fELF"  # machine code: an ELF file, not text


def test_syntax_error_shows_log_with_line(run_demo):
    result = run_demo("syntax-error")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "NVRTC_ERROR_COMPILATION" in result.stderr
    assert re.search(r"broken_kernel\.cu\(4\): error: expected a \";\"", result.stderr), result.stderr


def test_run_without_driver_or_with_gpu(run_demo):
    """`make run`'s C part: exits 0 everywhere; says what it skipped when there is no driver."""
    result = run_demo("run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SKIPPED" in result.stdout or "All results match the CPU reference." in result.stdout


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 1023, 1024, 1025, 1000003, 2**33 + 3])
@pytest.mark.parametrize("block", [256, 1024])
def test_launch_plan(run_demo, n, block):
    """The C exercise, checked without a GPU: the grid and the argument array built for cuLaunchKernel."""
    result = run_demo("plan", str(n), str(block))
    assert result.returncode == 0, result.stderr
    want_grid = min(math.ceil(math.ceil(n / 4) / block), 2**31 - 1)
    assert f"grid_x={want_grid} block_x={block}" in result.stdout
    for i, name in enumerate("yxn"):
        assert f"args[{i}] -> {name}" in result.stdout


@pytest.mark.gpu
def test_driver_demo_runs_and_checks(run_demo):
    result = run_demo("run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All results match the CPU reference." in result.stdout
    assert "Primary context" in result.stdout and "Created context" in result.stdout


SANITIZER_SKIP = "a deliberate API error: compute-sanitizer would report it as the program's error"


@pytest.mark.gpu
def test_call_before_cuinit(run_demo, small):
    if small:
        pytest.skip(SANITIZER_SKIP)
    result = run_demo("not-initialized")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CUDA_ERROR_NOT_INITIALIZED" in result.stderr


@pytest.mark.gpu
def test_too_many_threads_is_a_checked_error(run_demo, small):
    if small:
        pytest.skip(SANITIZER_SKIP)
    result = run_demo("too-many-threads")
    assert result.returncode == 0, result.stdout + result.stderr
    # the driver answers CUDA_ERROR_INVALID_VALUE for a block of more than 1,024 threads
    assert re.search(r"CUDA driver error CUDA_ERROR_\w+ .*\n\s+in: launch_elementwise", result.stderr), result.stderr
    assert "As expected" in result.stdout
