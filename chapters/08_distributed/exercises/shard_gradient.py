"""EXERCISE: the backward of the sharded norm (chapter 08). Under `EXERCISE=1` this file replaces
multigpu/shard_gradient.py. Read multigpu/sharded_norm.py's docstring for the forward; then fill in the TODO.

The forward returned n = ‖a − b‖₂ of the WHOLE tensors (every rank holds the same n). For this rank's shard a_r:

    d n / d a_r = (a_r − b_r) / n          (0 where n == 0: torch defines the norm's gradient there as 0)

so the shard's gradient is grad_norm · (a_r − b_r) / n. Every term is on this rank: no collective is needed.
Chapter 06 has a kernel for exactly this: torch.ops.norm_diff.norm_diff_backward(grad, a, b, norm) (grad and
norm are 0-dim tensors of a's dtype). Plain PyTorch ops work too.

Tests: tests/test_sharded_norm.py (Gloo, 2 CPU processes; EXERCISE=1 make test).
"""

from __future__ import annotations

import torch


def shard_gradient(grad_norm: torch.Tensor, a: torch.Tensor, b: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
    """grad_norm · (a − b) / norm for this rank's shard, 0 where norm == 0; same shape and dtype as a."""
    # TODO: return the gradient of the sharded norm with respect to this rank's shard a.
    raise NotImplementedError("exercises/shard_gradient.py: shard_gradient is not written yet")
