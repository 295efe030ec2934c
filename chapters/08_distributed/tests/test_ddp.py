"""Chapter 03's x*x + b op inside DistributedDataParallel: the same parameters as one-process training on the whole
batch, the order in which the op's backward and DDP's reductions happen, and ranks whose models differ."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from multigpu.ranks import RanksFailed, run_ranks
from multigpu.training import TOLERANCE, train_single
from rank_jobs import ddp_training, ddp_with_different_models


@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_ddp_matches_one_process_on_the_whole_batch(world_size):
    expected = train_single(batch=32, steps=5)
    results = run_ranks(ddp_training, world_size)
    for rank, result in enumerate(results):
        assert result["parameters"].keys() == expected.keys()
        for name, value in expected.items():
            torch.testing.assert_close(result["parameters"][name], value, **TOLERANCE, msg=f"rank {rank}: {name}")
    # the step changed the parameters (a test of equality between two runs that did nothing would pass too)
    start = train_single(batch=32, steps=0)
    assert not torch.allclose(start["square.b"], expected["square.b"], **TOLERANCE)


def gloo_threads() -> list[str]:
    """The names of this process's Gloo threads (Linux names each thread in /proc)."""
    names = (Path(task, "comm").read_text().strip() for task in Path("/proc/self/task").iterdir())
    return sorted(name for name in names if "gloo" in name)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads thread names from Linux's /proc")
def test_no_gloo_thread_outlives_the_group():
    """DDP imports torch.distributed.nn on first use, whose defaults would hold the group for good had it not been
    imported before the group: destroy_process_group could not free it, and its Gloo threads would run on, to be
    killed at Python's exit in the middle of freeing a work (SIGABRT). A world of one rank runs in this process."""
    before = gloo_threads()
    run_ranks(ddp_training, 1)
    assert gloo_threads() == before


def test_the_ops_backward_comes_before_its_buckets_reduction():
    events = run_ranks(ddp_training, 2, args=(True,))[0]["events"]  # two training steps, logged on rank 0
    first, step = events[: events.index("step 2")], events[events.index("step 2") :]
    # step 1: one bucket holds every parameter, reduced after the whole backward
    assert [e for e in first if "all_reduce launched" in e] == [
        "bucket 0 all_reduce launched: inp.weight, inp.bias, square.b, out.weight, out.bias"
    ]
    assert first[-1].startswith("bucket 0")
    # step 2, buckets rebuilt in the order gradients became ready: each reduced as soon as it is ready
    b_ready = step.index("gradient ready: square.b")
    b_reduced = next(i for i, e in enumerate(step) if "all_reduce launched" in e and "square.b" in e)
    assert step.index("square_bias backward starts") < b_ready < b_reduced
    # the layer after the op (out) is reduced before the op's backward has even started: DDP overlaps them
    out_reduced = next(i for i, e in enumerate(step) if "all_reduce launched" in e and "out.weight" in e)
    assert out_reduced < step.index("square_bias backward starts")


def test_ranks_with_different_models_fail_when_ddp_is_made():
    with pytest.raises(RanksFailed) as error:
        run_ranks(ddp_with_different_models, 2, collective_timeout_s=10)
    first_line = str(error.value).splitlines()[0]  # the earliest error: the cause, not its echo on rank 0
    assert first_line.startswith("rank 1 failed") and "sizes [17, 8] appears not to match" in first_line


def test_batch_that_does_not_split_evenly_is_refused():
    from multigpu.training import train_ddp

    with pytest.raises(ValueError, match="does not split into 3 equal shares"):
        train_ddp(0, 3, batch=32)
