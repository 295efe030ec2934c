"""Σ (a − b)² before the square root (the op chapter 08 adds across GPUs): values, the link to the norm, gradients."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES, DTYPES, inputs
from norm_diff import norm_diff, sum_squares_diff

# The sum stays in double: what is left is each thread's fp32 running sum (fp64 for double inputs).
RTOL = {torch.float32: 4e-6, torch.float64: 1e-12, torch.float16: 4e-6, torch.bfloat16: 4e-6}


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.detach().cpu().double() - b.detach().cpu().double()).square().sum()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 4097, 100_003])
def test_matches_float64_reference(device, dtype, n):
    a, b = inputs(n, dtype, device, seed=n)
    result = sum_squares_diff(a, b)
    assert result.dtype == torch.float64 and result.shape == () and result.device == a.device
    torch.testing.assert_close(result.cpu(), reference(a, b), rtol=RTOL[dtype], atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous(device):
    a, b = inputs(2 * 4097 + 3, torch.float32, device)
    for x, y in ((a[::2], b[::2]), (a[1:-2], b[3:])):  # strided; contiguous but not 16-byte aligned
        torch.testing.assert_close(sum_squares_diff(x, y).cpu(), reference(x, y), rtol=RTOL[torch.float32], atol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_its_root_is_the_norm(device, dtype):
    """The same kernel as the norm (rung 3 on the GPU), stopped before the root: the root of the sum, rounded to the
    input's dtype, is the norm to the last bit."""
    a, b = inputs(100_003, dtype, device, seed=1)
    assert torch.equal(sum_squares_diff(a, b).sqrt().to(dtype), norm_diff(a, b))


@pytest.mark.parametrize("device", DEVICES)
def test_pieces_add_up_to_the_whole(device):
    a, b = inputs(10_001, torch.float64, device)
    pieces = sum(sum_squares_diff(x, y) for x, y in zip(a.tensor_split(3), b.tensor_split(3), strict=True))
    torch.testing.assert_close(pieces, sum_squares_diff(a, b), rtol=1e-13, atol=0)


@pytest.mark.parametrize("call", [sum_squares_diff, torch.ops.norm_diff.norm_diff_sum_squares.default])
def test_bad_inputs_name_the_problem(call):
    """The same C++ checks as the norm, through the function and through the op."""
    a = torch.randn(10)
    with pytest.raises(ValueError, match=r"^a and b must have the same shape, but a has \(10,\) and b has \(11,\)$"):
        call(a, torch.randn(11))
    with pytest.raises(TypeError, match="^a and b must have the same dtype"):
        call(a, a.double())
    with pytest.raises(TypeError, match="^b has dtype int64"):
        call(a, torch.ones(10, dtype=torch.int64))
    with pytest.raises(ValueError, match="^a and b must have the same device"):
        call(a, torch.randn(10, device="meta"))


def test_autograd_is_registered_in_cpp():
    a, b = inputs(10, torch.float64, "cpu")
    assert "SumSquaresBackward" in sum_squares_diff(a.requires_grad_(), b).grad_fn.name()


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    a, b = inputs(37, torch.float64, device)
    assert torch.autograd.gradcheck(sum_squares_diff, (a.requires_grad_(), b.requires_grad_()))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device, small):
    if small and device == "cuda":
        pytest.skip("opcheck on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    a, b = inputs(129, torch.float32, device)
    op = torch.ops.norm_diff.norm_diff_sum_squares.default
    torch.library.opcheck(op, (a, b))
    torch.library.opcheck(op, (a.clone().requires_grad_(), b.clone().requires_grad_()))
