"""Chapter 08: the course's ops inside multi-GPU work, on torch.distributed (NCCL on GPUs, Gloo on the CPU).

    from multigpu import sharded_norm_diff, shard_of
    a_mine, b_mine = shard_of(a, rank, world), shard_of(b, rank, world)   # 1/P of each; uneven is fine
    norm = sharded_norm_diff(a_mine, b_mine)        # ‖a − b‖₂ of the WHOLE tensors, on every rank

and `multigpu.training`: a tiny model with chapter 03's x*x + b op, trained with DistributedDataParallel.
`python -m multigpu` starts the demo under torchrun: one process per visible GPU, or 2 CPU processes with Gloo.
"""

from course.build import exercises_first

exercises_first(__path__)  # EXERCISE=1: exercises/shard_gradient.py replaces multigpu/shard_gradient.py

from multigpu.sharded_norm import shard_of, sharded_norm_diff  # noqa: E402

__all__ = ["shard_of", "sharded_norm_diff"]
