"""The same checks on GPUs with NCCL: one process per visible GPU (on the course's H100 one rank, in the test's own
process; on a 2-GPU machine two). Skipped where no GPU is visible; CI runs the Gloo versions of these tests
(test_sharded_norm.py, test_ddp.py)."""

from __future__ import annotations

import pytest
import torch
from multigpu.ranks import run_ranks
from multigpu.training import TOLERANCE, train_single
from rank_jobs import bad_call, ddp_training, norm_and_grads, norm_and_grads_every_dtype, norm_on_a_side_stream
from test_sharded_norm import check

from conftest import RTOL

pytestmark = pytest.mark.gpu


def gpus() -> int:
    return torch.cuda.device_count()


def test_sharded_norm_on_every_gpu(small):
    n = 4097 if small else 3 * 2**20 + 1  # larger than one block of the kernel; uneven shards on 2 GPUs
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
    results = run_ranks(norm_and_grads_every_dtype, gpus(), "nccl", args=(n, dtypes))
    for dtype in dtypes:
        check([rank_results[dtype] for rank_results in results], n, dtype)


def test_an_empty_shard_on_a_gpu():
    world = gpus()
    n = 5
    sizes = [n] + [0] * (world - 1) if world > 1 else [n]
    check(run_ranks(norm_and_grads, world, "nccl", args=(n, torch.float32, sizes)), n, torch.float32, sizes)


def test_ordered_with_the_current_stream():
    norm, expected = run_ranks(norm_on_a_side_stream, gpus(), "nccl", args=(2**20 + 3,))[0]
    torch.testing.assert_close(norm.double(), expected, rtol=RTOL[torch.float32], atol=0)


def test_ddp_on_gpus_matches_one_process():
    expected = train_single(batch=32, steps=5, device="cuda")
    for rank, result in enumerate(run_ranks(ddp_training, gpus(), "nccl")):
        for name, value in expected.items():
            torch.testing.assert_close(result["parameters"][name], value, **TOLERANCE, msg=f"rank {rank}: {name}")


def test_cpu_shards_on_an_nccl_group_are_refused():
    name, message = run_ranks(bad_call, 1, "nccl", args=("cpu_with_nccl",))[0]
    assert name == "ValueError" and "NCCL, which reduces CUDA tensors only" in message, message
