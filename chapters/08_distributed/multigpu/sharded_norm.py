"""‖a − b‖₂ of tensors split across ranks: each rank holds a shard of a and of b; every rank gets the whole norm.

    forward    s_r = Σ (a_r − b_r)²           chapter 06's best kernel on this rank's shard, stopped before its root,
                                              kept in float64 (the type its partial sums are combined in)
               S = all_reduce(s_r, SUM)       ONE collective, of one 8-byte number, whatever the shard sizes
               ‖a − b‖ = sqrt(S)              rounded to the shards' dtype, the same on every rank
    backward   grad a_r = g · (a_r − b_r) / ‖a − b‖ ,  grad b_r = −grad a_r
               every term is on this rank already (the norm was saved in the forward): no second collective.

The collective's size never depends on the shard: uneven shards and empty ones join the same all_reduce.
An empty shard must still call it (pitfalls.py shows a rank that returns early, and what the others see).
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from course import check_tensor

from multigpu.chapters import norm_diff  # chapter 06's package
from multigpu.shard_gradient import shard_gradient  # exercises/shard_gradient.py under EXERCISE=1


def shard_of(tensor: torch.Tensor, rank: int, world_size: int) -> torch.Tensor:
    """This rank's part of `tensor` flattened: world_size nearly equal pieces (torch.tensor_split), the first
    numel % world_size of them one element longer. More ranks than elements leave some shards empty."""
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in 0..{world_size - 1}, got {rank}")
    return tensor.reshape(-1).tensor_split(world_size)[rank]


# The op, registered like every op of the course (docs/how-an-op-is-built.md), so that opcheck and torch.compile see
# it. Its schema takes tensors only: a schema has no type for a process group, so the op reduces over the default
# group (the one init_process_group made, which is what torchrun and DDP use).
@torch.library.custom_op("multigpu::sharded_norm_diff", mutates_args=())
def _sharded_norm_diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    total = norm_diff.sum_squares_diff(a, b)  # this shard's Σ(a − b)², a 0-dim float64 tensor on a's device
    dist.all_reduce(total, op=dist.ReduceOp.SUM)  # in place: now the sum over every shard
    return total.sqrt().to(a.dtype)


@_sharded_norm_diff.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty(())


def _save_for_backward(ctx, inputs, output):
    a, b = inputs
    ctx.save_for_backward(a, b, output)  # output: the reduced norm


def _backward(ctx, grad_norm: torch.Tensor):
    a, b, norm = ctx.saved_tensors
    grad_a = shard_gradient(grad_norm.to(a.dtype).reshape(()), a, b, norm).view_as(a)
    need_a, need_b = ctx.needs_input_grad
    return (grad_a if need_a else None), (-grad_a if need_b else None)


_sharded_norm_diff.register_autograd(_backward, setup_context=_save_for_backward)


def check_shards(a: object, b: object) -> None:
    """The checks a sharded op needs beyond chapter 06's: a process group, and a device its backend can reduce on."""
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(
            "sharded_norm_diff needs torch.distributed: call torch.distributed.init_process_group first "
            "(torchrun sets up what it needs), or use norm_diff for tensors on one device"
        )
    check_tensor("a", a, dtypes=norm_diff.DTYPES)  # a tensor, before its device is asked below
    check_tensor("b", b, dtypes=norm_diff.DTYPES)
    backend = dist.get_backend()
    if backend == "nccl" and not a.is_cuda:
        raise ValueError(
            f"the process group's backend is NCCL, which reduces CUDA tensors only, but the shards are on {a.device}: "
            "move them to this rank's GPU, or use a Gloo group for CPU tensors"
        )
    if a.is_cuda and a.device.index != torch.cuda.current_device():
        raise ValueError(
            f"the shards are on {a.device}, but this rank's current GPU is cuda:{torch.cuda.current_device()}: "
            "call torch.cuda.set_device(local_rank) first, so that NCCL and the kernel use the same GPU"
        )


def sharded_norm_diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """‖a − b‖₂ over the WHOLE tensors whose shards this rank holds (a and b: this rank's shards, same shape, dtype
    and device; any size, empty included). Every rank of the default process group must call it, in the same order
    as its other collectives. Returns a 0-dim tensor of the shards' dtype, equal on every rank; differentiable in a
    and b (torch.ops.multigpu.sharded_norm_diff, with its fake and autograd)."""
    check_shards(a, b)
    return _sharded_norm_diff(a, b)
