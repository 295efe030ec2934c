"""What can be checked about the GPU side without a GPU: the ops are registered with the right schemas, and bad
arguments are refused before anything is launched: by the Python wrapper where it needs them (the table's size),
by the op's C++ checks otherwise (a CPU tensor reaches them too: the ops are registered for the CPU so that it gets
their message)."""

import subprocess
from pathlib import Path

import pytest
import thread_index as ti
import torch

CHAPTER = Path(__file__).resolve().parents[1]


def test_ops_are_registered_as_mutating():
    for name in ["record_threads_", "grid_stride_count_", "grid_stride_owner_", "divergence_"]:
        schema = getattr(torch.ops.thread_index, name).default._schema
        assert schema.arguments[0].alias_info is not None and schema.arguments[0].alias_info.is_write, name
        assert len(schema.returns) == 0


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: ti.record_threads("grid9d", 1, 1), ValueError, "unknown formula"),
        (lambda: ti.record_threads("grid1d_block1d", 0, 1), ValueError, "grid entries"),
        (lambda: ti.record_threads("grid1d_block1d", 2**20, 1024), ValueError, "threads to record"),
        (lambda: ti.grid_stride_owner(-5, 1, 32), ValueError, "n must be"),
        (lambda: ti.grid_stride_count(10, 1, 0, device="cpu"), ValueError, "threads must be at least 1, got 0"),
        (lambda: ti.grid_stride_owner(10, 0, 32, device="cpu"), ValueError, "blocks must be at least 1, got 0"),
        (lambda: ti.grid_stride_owner(10, 1, 32, device="cpu"), ValueError, "owner must be on cuda, but it is on cpu"),
        (lambda: ti.divergence(torch.empty(4), "sideways", 1), ValueError, "mode must be one of"),
        (lambda: ti.divergence(torch.empty(4, dtype=torch.float64), "uniform", 1), TypeError, "out has dtype float64"),
        (lambda: ti.divergence(torch.empty(4), "uniform", 1), ValueError, "out must be on cuda, but it is on cpu"),
        (lambda: torch.ops.thread_index.divergence_(torch.empty(4), 7, 1), ValueError, "out must be on cuda"),
    ],
)
def test_bad_arguments_are_refused_before_launch(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_without_a_gpu_the_device_query_says_why():
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: test_gpu.py checks the limits")
    with pytest.raises(RuntimeError, match="CUDA error"):
        ti.device_limits(0)


@pytest.mark.nvcc
def test_race_demo_is_built_and_checks_its_arguments():
    demo = CHAPTER / "build" / "race_demo"
    assert demo.exists(), "make build compiles it"
    result = subprocess.run([demo, "sideways"], capture_output=True, text=True)
    assert result.returncode == 2 and "usage" in result.stderr
