"""Two ways ranks stop agreeing, kept as pitfalls beside the right code (tests/test_failures.py shows each).

1. pitfall_norm_skips_empty_shard: a "shortcut" that returns 0 on a rank whose shard is empty, without joining the
   all_reduce. The other ranks wait in it for a partner that never comes. With a process-group timeout they fail
   after it, with Gloo's "Timed out waiting ... for recv operation"; under TORCH_DISTRIBUTED_DEBUG=DETAIL the
   message names the rank that is missing. Without a timeout they wait forever (the default is 10 minutes for
   Gloo and NCCL both). sharded_norm_diff always joins: an empty shard adds 0.

2. pitfall_sum_different_lengths: ranks all_reduce tensors of different lengths. Gloo does not check: the rank with
   the shorter tensor gets a wrong sum, the other an error about a closed connection. With
   TORCH_DISTRIBUTED_DEBUG=DETAIL every collective is first checked across ranks (op, shape, dtype), and both ranks
   get "Detected mismatch between collectives on ranks", with the two shapes. sharded_norm_diff reduces one
   number, whatever the shards' sizes, so it cannot meet this.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from multigpu.sharded_norm import sharded_norm_diff


def pitfall_norm_skips_empty_shard(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.numel() == 0:
        return a.new_zeros(())  # PITFALL: this rank never joins the all_reduce the others are waiting in
    return sharded_norm_diff(a, b)


def pitfall_sum_different_lengths(rank: int, world_size: int) -> torch.Tensor:
    values = torch.ones(3 + rank)  # PITFALL: rank 0 sends 3 numbers, rank 1 sends 4
    dist.all_reduce(values)
    return values
