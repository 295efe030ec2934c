"""Appendix: y = x*x + b (forward only) built against LibTorch's stable ABI and Python's limited API.

import square_bias_cuda_stable
y = torch.ops.square_bias_cuda_stable.square_bias(x, b)
"""

import torch
from course.build import import_extension

import_extension("square_bias_cuda_stable")
square_bias = torch.ops.square_bias_cuda_stable.square_bias


@torch.library.register_fake("square_bias_cuda_stable::square_bias")
def _(x, b):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


__all__ = ["square_bias"]
