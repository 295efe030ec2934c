"""Shared test inputs: the devices every op test runs on (CUDA ones gpu-marked), tolerances, eager references."""

import math

import pytest
import torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
ALL_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def reference_forward(x, b):
    """x*x + b computed in float64, rounded once to x's dtype: more exact than any of the implementations."""
    return (x.double() * x.double() + b.double()).to(x.dtype)


def reference_grads(x, b, grad_y):
    gx = (2 * x.double() * grad_y.double()).to(x.dtype)
    gb = grad_y.double().sum_to_size(b.shape).to(x.dtype)
    return gx, gb


def reduction_atol(dtype, terms):
    """Absolute tolerance for a sum of `terms` values of size ~1: rounding grows about like sqrt(terms)."""
    eps = torch.finfo(torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype).eps
    out_eps = torch.finfo(dtype).eps
    return 8 * eps * terms + 2 * out_eps * math.sqrt(max(terms, 1)) + 1e-6
