"""Shared pieces of the chapter's tests: devices, layouts, the float64 reference and the error measure."""

from __future__ import annotations

import math

import pytest
import torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
SIZES = [1, 7, 33, 127, 1000, 4095]  # the M, N and K: 1, odd, one past a tile, not a multiple of anything
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "padded", "expanded"]
# Under compute-sanitizer (the `small` fixture) every launch is instrumented, racecheck most of all: the layout tests
# run these pairs there (each kernel variant of the fast rungs, and each kind of single-element load), all 36 here.
SANITIZE_LAYOUT_PAIRS = {("contiguous", "contiguous"), ("transposed", "transposed"), ("contiguous", "transposed"),
                         ("transposed", "contiguous"), ("sliced", "offset"), ("expanded", "padded")}  # fmt: skip


def skip_layout_pair_under_sanitizer(small: bool, a_layout: str, b_layout: str) -> None:
    if small and (a_layout, b_layout) not in SANITIZE_LAYOUT_PAIRS:
        pytest.skip("under compute-sanitizer a subset of the layout pairs runs (SANITIZE_LAYOUT_PAIRS)")


def rel_error(c: torch.Tensor, reference: torch.Tensor) -> float:
    """‖c − reference‖ / ‖reference‖ (Frobenius), the reference in float64."""
    reference = reference.double()
    norm = reference.norm().item()
    diff = (c.double().to(reference.device) - reference).norm().item()
    return diff / norm if norm > 0 else diff


def fp32_bound(k: int) -> float:
    """A generous bound on the relative error of an fp32 matrix product of inner dimension k on random normal inputs:
    a long sum in fp32 gains about sqrt(k)·2⁻²⁴ of relative error (the rounding errors add up like a random walk);
    ×20 for margin. A wrong index gives an error near 1, far above it."""
    return 20 * math.sqrt(max(k, 1)) * 2.0**-24


def tolerance(dtype: torch.dtype, k: int) -> float:
    return fp32_bound(k) if dtype == torch.float32 else 1e-13


def make(shape: tuple[int, int], layout: str, dtype=torch.float32, device="cpu", seed=0) -> torch.Tensor:
    """A (rows, cols) matrix of random normals stored in one of LAYOUTS:
    contiguous   row-major
    transposed   column-major: the .t() of a row-major (cols, rows) matrix (what the backward passes)
    sliced       every other column of a wider matrix: no unit stride anywhere
    offset       row-major but starting one element into its storage: not 16-byte aligned
    padded       row-major with a row stride larger than cols (a slice of a wider matrix's first columns)
    expanded     one row repeated: row stride 0"""
    rows, cols = shape
    g = torch.Generator().manual_seed(seed)

    def randn(*size):
        return torch.randn(*size, generator=g, dtype=torch.float64).to(dtype).to(device)

    if layout == "contiguous":
        return randn(rows, cols)
    if layout == "transposed":
        return randn(cols, rows).t()
    if layout == "sliced":
        return randn(rows, 2 * cols + 1)[:, 1::2]
    if layout == "offset":
        return randn(rows * cols + 1)[1:].view(rows, cols)
    if layout == "padded":
        return randn(rows, cols + 3)[:, :cols]
    if layout == "expanded":
        return randn(1, cols).expand(rows, cols)
    raise ValueError(f"unknown layout {layout}")


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A·B in float64, on a's device (the GPU's float64 product where there is one: fast and exact enough)."""
    return a.double() @ b.double()


def poisoned(shape: tuple[int, int], dtype, device) -> torch.Tensor:
    """An output full of NaN: any element a kernel forgets to write stays NaN."""
    return torch.full(shape, float("nan"), dtype=dtype, device=device)


def assert_close_to_reference(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, what: str = "") -> None:
    assert c.shape == (a.shape[0], b.shape[1]) and c.dtype == a.dtype and c.device == a.device, what
    assert not torch.isnan(c).any(), f"{what}: unwritten (NaN) elements"
    error = rel_error(c, reference(a, b))
    assert error <= tolerance(a.dtype, a.shape[1]), f"{what}: relative error {error:.2e}"
