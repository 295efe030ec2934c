"""Drop-in modules: the chapter's ops behind torch.nn.LayerNorm's and torch.nn.RMSNorm's interface and state-dict
keys (weight, bias), so a model can swap them in and load the same checkpoint."""

from __future__ import annotations

import math
import numbers

import torch

from rowwise.ops import layer_norm, rms_norm, softmax


def _shape(normalized_shape) -> tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _rows(x: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """x with its last len(shape) dimensions flattened into one: the ops normalize over the last dimension."""
    if tuple(x.shape[x.dim() - len(shape) :]) != shape or x.dim() < len(shape):
        raise ValueError(f"expected an input whose last dimensions are {shape}, but it has shape {tuple(x.shape)}")
    return x.reshape(*x.shape[: x.dim() - len(shape)], math.prod(shape))


class LayerNorm(torch.nn.Module):
    """torch.nn.LayerNorm with the chapter's kernels: same arguments, parameters and state-dict keys."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.empty(self.normalized_shape, **factory))
            if bias:
                self.bias = torch.nn.Parameter(torch.empty(self.normalized_shape, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            torch.nn.init.ones_(self.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = math.prod(self.normalized_shape)
        w = self.weight.reshape(n) if self.weight is not None else None
        b = self.bias.reshape(n) if self.bias is not None else None
        return layer_norm(_rows(x, self.normalized_shape), w, b, self.eps).reshape(x.shape)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(torch.nn.Module):
    """torch.nn.RMSNorm with the chapter's kernels: same arguments, parameters and state-dict keys."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            torch.nn.init.ones_(self.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight.reshape(-1) if self.weight is not None else None
        return rms_norm(_rows(x, self.normalized_shape), w, self.eps).reshape(x.shape)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Softmax(torch.nn.Module):
    """torch.nn.Softmax(dim=-1) with the chapter's kernel (the last dimension only)."""

    def __init__(self, dim: int = -1):
        super().__init__()
        if dim != -1:
            raise ValueError(f"rowwise.Softmax normalizes over the last dimension (dim=-1), got dim={dim}")
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x)
