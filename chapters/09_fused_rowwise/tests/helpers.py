"""Shared pieces of the chapter's tests: devices, dtypes, inputs, and float64 references computed by torch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def inputs(shape, dtype, device, seed=0, scale=1.0, shift=0.0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=generator, dtype=torch.float64) * scale + shift
    return x.to(dtype).to(device)


def params(n, dtype, device, seed=1):
    generator = torch.Generator().manual_seed(seed)
    w = 1 + 0.5 * torch.randn(n, generator=generator, dtype=torch.float64)
    b = 0.5 * torch.randn(n, generator=generator, dtype=torch.float64)
    return w.to(dtype).to(device), b.to(dtype).to(device)


def reference(op, x, *args):
    """The float64 answer from the same (already rounded) inputs, by torch's own functions, on the CPU."""
    args = [a.detach().cpu().double() if isinstance(a, torch.Tensor) else a for a in args]
    return torch_op(op, x.detach().cpu().double(), *args)


def torch_op(op, x, *args):
    """What PyTorch itself computes in x's dtype and device: the error to be no worse than."""
    if op == "softmax":
        return torch.softmax(x, -1)
    if op == "layer_norm":
        w, b, eps = args
        return F.layer_norm(x, x.shape[-1:], w, b, eps)
    w, eps = args
    return F.rms_norm(x, x.shape[-1:], w, eps)


def max_error(result, expected):
    diff = (result.detach().cpu().double() - expected).abs()
    finite = expected.isfinite()
    return diff[finite].max().item() if finite.any() else 0.0


# One unit in the last place near 1, per dtype: the floor of a comparison of errors (both may round the same value
# in different directions). float64: PyTorch's own float64 is the reference, so allow some summation-order ulps.
ULP = {torch.float32: 1.2e-7, torch.float64: 2e-15, torch.float16: 9.8e-4, torch.bfloat16: 7.9e-3}


def assert_no_worse_than_torch(ours, theirs, expected, dtype):
    """Our error against float64 is at most twice PyTorch's, plus a few units in the last place of the largest
    value (float64: PyTorch's own float64 is the reference, so its error is 0)."""
    e_ours, e_torch = max_error(ours, expected), max_error(theirs, expected)
    finite = expected[expected.isfinite()]
    scale = max(finite.abs().max().item(), 1.0) if finite.numel() else 1.0
    limit = 2 * e_torch + 4 * ULP[dtype] * scale
    assert e_ours <= limit, f"error {e_ours:.3g} against float64, PyTorch's {e_torch:.3g} (limit {limit:.3g})"
