"""‖a − b‖₂ as a PyTorch op: a ladder of CUDA kernels (rungs 0-4), a CPU loop, autograd and fake implementations.

from norm_diff import norm_diff
norm_diff(a, b)              # rung 3, the fastest
norm_diff(a, b, version=1)   # any rung of the ladder
"""

from norm_diff.ops import DTYPES, RUNGS, VERSIONS, norm_diff

__all__ = ["DTYPES", "RUNGS", "VERSIONS", "norm_diff"]
