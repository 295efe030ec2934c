"""Chapter 01: y = x*x + b as a PyTorch op written in C.

from square_bias import square_bias, SquareBias
y = square_bias(x, b)          # torch.ops.square_bias.square_bias, with autograd and torch.compile support
"""

from square_bias.ops import SquareBias, square_bias, square_bias_autograd_function, square_bias_backward

__all__ = ["SquareBias", "square_bias", "square_bias_autograd_function", "square_bias_backward"]
