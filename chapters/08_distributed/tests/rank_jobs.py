"""What each rank runs in the tests: module-level functions, since every rank is a fresh process that imports them
by name (multigpu.ranks.run_ranks). Each returns plain tensors and numbers for the test to check."""

from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist
from multigpu import shard_of, sharded_norm_diff
from multigpu.pitfalls import pitfall_norm_skips_empty_shard, pitfall_sum_different_lengths
from multigpu.ranks import rank_device


def whole_inputs(n: int, dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The full a and b, drawn the same way on every rank (each then keeps its shard)."""
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(n, generator=generator, dtype=torch.float64).to(dtype)
    b = torch.randn(n, generator=generator, dtype=torch.float64).to(dtype)
    return a, b


def norm_and_grads(rank, world_size, n, dtype, sizes=None):
    """The sharded norm of a and b of n elements and its gradients for this rank's shards. `sizes` splits by hand
    (one length per rank, e.g. an empty shard); otherwise shard_of's near-equal split."""
    a, b = whole_inputs(n, dtype)
    if sizes is None:
        a_mine, b_mine = shard_of(a, rank, world_size), shard_of(b, rank, world_size)
    else:
        a_mine, b_mine = a.split(sizes)[rank], b.split(sizes)[rank]
    device = rank_device()
    a_mine = a_mine.to(device).requires_grad_()
    b_mine = b_mine.to(device).requires_grad_()
    norm = sharded_norm_diff(a_mine, b_mine)
    (norm * 2.5).backward()
    return {"norm": norm.detach().cpu(), "grad_a": a_mine.grad.cpu(), "grad_b": b_mine.grad.cpu(), "n": a_mine.numel()}


def norm_and_grads_every_dtype(rank, world_size, n, dtypes):
    """norm_and_grads for several dtypes in one process group (each group costs seconds to start)."""
    return {dtype: norm_and_grads(rank, world_size, n, dtype) for dtype in dtypes}


def gradcheck_one_rank(rank, world_size):
    """gradcheck through the whole sharded path (sum of squares, all_reduce, root, backward) on a group of one."""
    a, b = whole_inputs(23, torch.float64)
    return torch.autograd.gradcheck(sharded_norm_diff, (a.requires_grad_(), b.requires_grad_()))


def skip_on_empty_shard(rank, world_size, busy_s=10.0):
    a, b = whole_inputs(1, torch.float32)  # one element, two ranks: rank 1's shard is empty
    norm = pitfall_norm_skips_empty_shard(shard_of(a, rank, world_size), shard_of(b, rank, world_size))
    if rank == 1:
        time.sleep(busy_s)  # rank 1 went on with its work (the next forward pass, say): rank 0 is still waiting
    return norm.item()


def sum_different_lengths(rank, world_size):
    return pitfall_sum_different_lengths(rank, world_size)


def fail_on_rank_one(rank, world_size):
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")
    dist.barrier()  # rank 0 waits here for a rank that is gone
    return rank


def abort_on_rank_one(rank, world_size):
    """Rank 1 writes a line to stderr and dies by SIGABRT, as a C++ std::terminate does: no Python exception, no
    error file; its stderr is all that says why."""
    if rank == 1:
        os.write(2, b"rank 1 aborts on purpose\n")  # to the file descriptor, as C++ writes
        os.abort()
    dist.barrier()  # rank 0 waits here for a rank that is gone
    return rank


def hang_on_rank_one(rank, world_size):
    if rank == 1:
        time.sleep(600)
    return rank


def bad_call(rank, world_size, case):
    """sharded_norm_diff called wrongly; returns the error's type and message (the test checks them)."""
    a = torch.randn(4)
    try:
        if case == "not_a_tensor":
            sharded_norm_diff([1.0], a)
        elif case == "shapes":
            sharded_norm_diff(a, torch.randn(5))
        elif case == "dtype":
            sharded_norm_diff(a.int(), a.int())
        elif case == "cpu_with_nccl":
            sharded_norm_diff(a, a)
    except Exception as error:  # noqa: BLE001 - the test reads the type and the message
        return type(error).__name__, str(error)
    return None


def ddp_training(rank, world_size, log_hooks=False):
    from multigpu.training import train_ddp

    return train_ddp(rank, world_size, batch=32, steps=2 if log_hooks else 5, log_hooks=log_hooks)


def ddp_with_different_models(rank, world_size):
    """Rank 1 builds its x*x + b layer with another shape: DDP compares the ranks' parameters when it is made."""
    from multigpu.training import TinyNet
    from torch.nn.parallel import DistributedDataParallel

    model = TinyNet(hidden=16 + rank)
    DistributedDataParallel(model)
    return rank


def norm_on_a_side_stream(rank, world_size, n):
    """The inputs are made on a side stream and the norm runs there too: ProcessGroupNCCL makes its own stream wait
    for the CURRENT stream (the side one) before the all_reduce, and the current stream wait for it afterwards."""
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        a, b = (t.cuda() for t in whole_inputs(n, torch.float32))
        a_mine, b_mine = shard_of(a, rank, world_size), shard_of(b, rank, world_size)
        a_mine.mul_(3)  # queued on the side stream: the norm must see it
        norm = sharded_norm_diff(a_mine, b_mine)
    side.synchronize()
    a_all, b_all = whole_inputs(n, torch.float32)
    return norm.cpu(), torch.linalg.vector_norm(
        torch.cat([shard_of(a_all, r, world_size) * 3 for r in range(world_size)]).double() - b_all.double()
    )


def opcheck_and_compile(rank, world_size):
    """torch.library.opcheck on the registered op, and torch.compile(fullgraph=True) of a function that calls the
    public sharded_norm_diff, on every rank (each rank runs the same collectives in the same order).

    The backend is aot_eager: Dynamo captures the whole function (the op's fake gives its output's shape) and AOT
    autograd traces its backward, which is what the test is about. Inductor would also generate and compile C++ for
    the CPU shards' `2 *`: over a minute per rank on the 16-core GPU machine, for nothing the op does."""
    a, b = whole_inputs(101, torch.float32)
    device = rank_device()
    a_mine = shard_of(a, rank, world_size).to(device).requires_grad_()
    b_mine = shard_of(b, rank, world_size).to(device).requires_grad_()
    torch.library.opcheck(torch.ops.multigpu.sharded_norm_diff.default, (a_mine, b_mine))
    compiled = torch.compile(lambda x, y: 2 * sharded_norm_diff(x, y), fullgraph=True, backend="aot_eager")
    return {"compiled": compiled(a_mine, b_mine).detach().cpu(), "eager": 2 * sharded_norm_diff(a_mine, b_mine).cpu()}
