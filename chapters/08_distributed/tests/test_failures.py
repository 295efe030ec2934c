"""When ranks stop agreeing: each case fails fast, with a message that says what happened, and leaves no process.

The process group's timeout (collective_timeout_s) is what turns a missing partner into an error; a deadline on
the whole run (deadline_s) is the last guard, so no test can hang.
"""

from __future__ import annotations

import multiprocessing
import time

import pytest
import torch
from multigpu.ranks import RankError, RanksFailed, RanksTimedOut, run_ranks
from rank_jobs import (
    abort_on_rank_one,
    fail_on_rank_one,
    hang_on_rank_one,
    skip_on_empty_shard,
    sum_different_lengths,
)

DETAIL = {"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}


def no_rank_left():
    time.sleep(0.1)
    return multiprocessing.active_children() == []


def test_a_rank_that_skips_the_collective_times_the_others_out():
    start = time.monotonic()
    with pytest.raises(RanksFailed, match=r"Timed out waiting 3000ms for recv"):
        run_ranks(skip_on_empty_shard, 2, collective_timeout_s=3)
    assert time.monotonic() - start < 30
    assert no_rank_left()


def test_with_detail_debugging_the_error_names_the_missing_rank():
    with pytest.raises(RanksFailed, match=r"Ranks 1 failed to pass monitoredBarrier in 3000 ms"):
        run_ranks(skip_on_empty_shard, 2, collective_timeout_s=3, env=DETAIL)
    assert no_rank_left()


def test_different_lengths_are_silently_wrong_without_checks():
    """Gloo does not compare what the ranks send: rank 0 gets an answer (its 3 numbers summed with the first 3 of
    rank 1's 4), rank 1 an error that does not say what went wrong."""
    rank0, rank1 = run_ranks(sum_different_lengths, 2, collective_timeout_s=5, catch=True)
    assert torch.equal(rank0, torch.full((3,), 2.0)), "rank 0 should get a sum, with no sign of trouble"
    assert isinstance(rank1, RankError) and "mismatch" not in str(rank1)
    assert no_rank_left()


def test_with_detail_debugging_different_lengths_are_named():
    with pytest.raises(RanksFailed, match=r"Detected mismatch between collectives on ranks") as error:
        run_ranks(sum_different_lengths, 2, collective_timeout_s=5, env=DETAIL)
    assert "TensorShape=[3]" in str(error.value) or "TensorShape=[4]" in str(error.value)
    assert no_rank_left()


def test_a_failing_rank_ends_the_run_and_is_named():
    start = time.monotonic()
    with pytest.raises(RanksFailed, match=r"rank 1 fails on purpose") as error:
        run_ranks(fail_on_rank_one, 2, collective_timeout_s=20)
    assert str(error.value).startswith("rank 1 failed")
    assert time.monotonic() - start < 15, "the other rank should be stopped, not left waiting out its timeout"
    assert no_rank_left()


def test_a_rank_killed_by_a_signal_is_named_with_its_stderr():
    """A C++ abort raises no Python exception: the rank's stderr is where the reason is."""
    start = time.monotonic()
    with pytest.raises(RanksFailed, match=r"rank 1 failed: process 1 terminated with signal SIGABRT") as error:
        run_ranks(abort_on_rank_one, 2, collective_timeout_s=20)
    assert "rank 1 aborts on purpose" in str(error.value)
    assert time.monotonic() - start < 15
    assert no_rank_left()


def test_the_deadline_kills_a_rank_that_never_returns():
    start = time.monotonic()
    with pytest.raises(RanksTimedOut, match="did not finish within 5 s"):
        run_ranks(hang_on_rank_one, 2, deadline_s=5)
    assert time.monotonic() - start < 15
    assert no_rank_left()


def test_nccl_needs_a_gpu_per_rank():
    if torch.cuda.device_count() >= 64:
        pytest.skip("a machine with 64 GPUs")
    with pytest.raises(RuntimeError, match="needs 64 GPUs"):
        run_ranks(fail_on_rank_one, 64, backend="nccl")
