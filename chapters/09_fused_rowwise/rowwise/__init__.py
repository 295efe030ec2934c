"""Fused row-wise ops: softmax, LayerNorm and RMSNorm over the last dimension, as PyTorch ops with CPU (C) and CUDA
kernels, autograd, fake implementations, and drop-in modules.

    from rowwise import softmax, layer_norm, rms_norm, LayerNorm, RMSNorm
    y = softmax(x)                          # torch.softmax(x, -1)
    y = layer_norm(x, weight, bias, 1e-5)   # F.layer_norm(x, x.shape[-1:], weight, bias, 1e-5)
    y = rms_norm(x, weight, 1e-6)           # F.rms_norm(x, x.shape[-1:], weight, 1e-6)
    softmax(x, rung=2)                      # a rung of the GPU ladder (RUNGS)
"""

from course.build import exercises_first

exercises_first(__path__)  # EXERCISE=1: exercises/<name>.py replaces a module of this package (none here today)

from rowwise.modules import LayerNorm, RMSNorm, Softmax  # noqa: E402
from rowwise.ops import BEST, DTYPES, RUNGS, describe, layer_norm, rms_norm, softmax  # noqa: E402

__all__ = [
    "BEST",
    "DTYPES",
    "RUNGS",
    "LayerNorm",
    "RMSNorm",
    "Softmax",
    "describe",
    "layer_norm",
    "rms_norm",
    "softmax",
]
