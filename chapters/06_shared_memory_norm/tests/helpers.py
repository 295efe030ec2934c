"""Shared pieces of the chapter's tests: devices, tolerances, the float64 reference."""

from __future__ import annotations

import pytest
import torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]

# Relative tolerances against the float64 norm of the same (already rounded) inputs. The sums are exact to ~1e-7
# (fp32 per thread, double across threads); what is left is rounding the answer to the output dtype.
RTOL = {torch.float32: 2e-6, torch.float64: 1e-12, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """‖a − b‖₂ in float64 from the same inputs, on the CPU."""
    return torch.linalg.vector_norm(a.detach().cpu().double() - b.detach().cpu().double())


def inputs(n: int, dtype: torch.dtype, device: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(n, generator=generator, dtype=torch.float64).to(dtype)
    b = torch.randn(n, generator=generator, dtype=torch.float64).to(dtype)
    return a.to(device), b.to(device)


def assert_norm_close(result: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    assert result.dtype == a.dtype and result.shape == () and result.device == a.device
    expected = reference(a, b)
    torch.testing.assert_close(result.cpu().double(), expected, rtol=RTOL[a.dtype], atol=1e-30)
