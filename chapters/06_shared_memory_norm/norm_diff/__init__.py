"""‖a − b‖₂ as a PyTorch op: a ladder of CUDA kernels (rungs 0-4), a CPU loop, autograd and fake implementations.

from norm_diff import norm_diff
norm_diff(a, b)              # rung 3, the fastest
norm_diff(a, b, version=1)   # any rung of the ladder
sum_squares_diff(a, b)       # Σ (a − b)² in float64, before the root (the piece chapter 08 adds across GPUs)
"""

from norm_diff.ops import DTYPES, RUNGS, VERSIONS, norm_diff, sum_squares_diff

__all__ = ["DTYPES", "RUNGS", "VERSIONS", "norm_diff", "sum_squares_diff"]
