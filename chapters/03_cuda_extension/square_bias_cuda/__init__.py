"""Chapter 03: y = x*x + b as a CUDA extension — one dispatcher op with a CPU (chapter 01's C core) and a CUDA
implementation, fused backward kernels, autograd and fake registrations.

    from square_bias_cuda import square_bias
    y = square_bias(x, b)        # x on the CPU or a GPU; b broadcasts to x
"""

from square_bias_cuda.ops import DTYPES, SquareBias, ops, square_bias

__all__ = ["DTYPES", "SquareBias", "ops", "square_bias"]
