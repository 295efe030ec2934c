"""The op on every device: values against a float64 reference, layouts, bad inputs, gradients, opcheck, compile."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES, DTYPES, assert_norm_close, inputs
from norm_diff import norm_diff


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 4097, 100_003])
def test_matches_float64_reference(device, dtype, n):
    a, b = inputs(n, dtype, device)
    assert_norm_close(norm_diff(a, b), a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_like_torch_norm_on_a_matrix(device):
    a, b = inputs(300 * 70, torch.float32, device)
    a, b = a.view(300, 70), b.view(300, 70)
    torch.testing.assert_close(norm_diff(a, b), torch.norm(a - b), rtol=1e-5, atol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["strided", "transposed", "offset", "expanded"])
def test_non_contiguous(device, layout):
    a, b = inputs(2 * 513 * 7 + 1, torch.float32, device)
    if layout == "strided":
        a, b = a[::2], b[::2]
    elif layout == "transposed":
        a, b = a[1:].view(513, 14).t(), b[1:].view(513, 14).t()
    elif layout == "offset":  # contiguous but not 16-byte aligned: the GPU's vector loads must fall back
        a, b = a[1:-2], b[3:]
    else:
        a, b = a[:9].expand(5, 9), b[:9]
        b = b.expand(5, 9)
    assert not a.is_contiguous() or layout == "offset"
    assert_norm_close(norm_diff(a, b), a, b)


def test_bad_inputs_name_the_problem():
    a = torch.randn(10)
    with pytest.raises(ValueError, match="same shape"):
        norm_diff(a, torch.randn(11))
    with pytest.raises(TypeError, match="same dtype"):
        norm_diff(a, torch.randn(10, dtype=torch.float64))
    with pytest.raises(ValueError, match="same device"):
        norm_diff(a, torch.randn(10, device="meta"))
    with pytest.raises(TypeError, match="b has dtype int64"):
        norm_diff(a, torch.ones(10, dtype=torch.int64))
    with pytest.raises(TypeError, match="a must be a torch.Tensor"):
        norm_diff([1.0, 2.0], a)
    for version in (-1, 5, 2.0, True):
        with pytest.raises(ValueError, match="version must be one of"):
            norm_diff(a, a, version=version)
    with pytest.raises(ValueError, match="CPU or a CUDA device"):
        norm_diff(torch.randn(3, device="meta"), torch.randn(3, device="meta"))


def test_direct_calls_are_checked_in_cpp():
    a = torch.randn(10)
    with pytest.raises(RuntimeError, match="version must be in 0..4"):
        torch.ops.norm_diff.norm_diff(a, a, 9)
    with pytest.raises(RuntimeError, match="same shape"):
        torch.ops.norm_diff.norm_diff(a, torch.randn(3), 3)
    with pytest.raises(RuntimeError, match="supports float32"):
        torch.ops.norm_diff.norm_diff(a.int(), a.int(), 3)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    a, b = inputs(37, torch.float64, device)
    a.requires_grad_()
    b.requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: norm_diff(x, y), (a, b))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gradients_match_torch(device, dtype):
    a, b = inputs(1001, dtype, device)
    ours = [t.clone().requires_grad_() for t in (a, b)]
    theirs = [t.clone().requires_grad_() for t in (a, b)]
    norm_diff(*ours).mul(2.5).backward()
    torch.linalg.vector_norm(theirs[0] - theirs[1]).mul(2.5).backward()
    tol = {"rtol": 1e-2, "atol": 1e-3} if dtype in (torch.float16, torch.bfloat16) else {}
    torch.testing.assert_close(ours[0].grad, theirs[0].grad, **tol)
    torch.testing.assert_close(ours[1].grad, theirs[1].grad, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_at_zero_norm_is_what_torch_gives(device):
    a, _ = inputs(17, torch.float64, device)
    ours, theirs = a.clone().requires_grad_(), a.clone().requires_grad_()
    norm_diff(ours, a).backward()
    torch.norm(theirs - a).backward()
    assert torch.equal(theirs.grad, torch.zeros_like(a))  # torch defines it as 0, not NaN
    torch.testing.assert_close(ours.grad, theirs.grad)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device, small):
    if small and device == "cuda":
        pytest.skip("opcheck on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    a, b = inputs(129, torch.float32, device)
    torch.library.opcheck(torch.ops.norm_diff.norm_diff.default, (a, b, 3))
    torch.library.opcheck(
        torch.ops.norm_diff.norm_diff.default, (a.clone().requires_grad_(), b.clone().requires_grad_(), 3)
    )
    norm = torch.linalg.vector_norm(a - b)
    torch.library.opcheck(torch.ops.norm_diff.norm_diff_backward.default, (torch.ones_like(norm), a, b, norm))


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device, small):
    if small and device == "cuda":
        pytest.skip("torch.compile on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    if device == "cpu" and torch.cuda.is_available():
        pytest.skip("the CUDA variant covers torch.compile here; inductor's CPU build takes a minute on a GPU machine")
    torch._dynamo.reset()
    a, b = inputs(1000, torch.float32, device)
    a.requires_grad_()

    @torch.compile(fullgraph=True)
    def loss(x, y):
        return norm_diff(x * 2, y) + 1

    out = loss(a, b)
    out.backward()
    expected = torch.linalg.vector_norm(a.detach() * 2 - b) + 1
    torch.testing.assert_close(out.detach(), expected)
    torch.testing.assert_close(a.grad, 2 * (a.detach() * 2 - b) / (expected - 1))
