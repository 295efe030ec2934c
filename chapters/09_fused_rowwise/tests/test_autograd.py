"""Gradients: gradcheck in float64, against torch in every dtype, opcheck on every registered op."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from helpers import DEVICES, DTYPES, inputs, params
from rowwise import layer_norm, rms_norm, softmax


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_gradcheck(device, affine):
    x = inputs((5, 37), torch.float64, device).requires_grad_()
    w, b = (t.requires_grad_() for t in params(37, torch.float64, device))
    use_w, use_b = affine != "none", affine == "both"
    assert torch.autograd.gradcheck(lambda x: softmax(x), (x,))
    assert torch.autograd.gradcheck(
        lambda x, w, b: layer_norm(x, w if use_w else None, b if use_b else None, 1e-5), (x, w, b)
    )
    assert torch.autograd.gradcheck(lambda x, w: rms_norm(x, w if use_w else None, 1e-6), (x, w))


def _grads(fn, tensors, dy):
    tensors = [t.clone().requires_grad_() for t in tensors]
    fn(*tensors).backward(dy)
    return [t.grad for t in tensors]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [64, 1000, 4097])
def test_gradients_match_torch(device, dtype, n):
    x = inputs((33, n), dtype, device)
    w, b = params(n, dtype, device)
    dy = inputs((33, n), dtype, device, seed=9)
    tol = {"rtol": 2e-2, "atol": 2e-2} if dtype in (torch.float16, torch.bfloat16) else {"rtol": 1e-4, "atol": 1e-4}
    pairs = [
        (lambda x: softmax(x), lambda x: torch.softmax(x, -1), [x]),
        (lambda x, w, b: layer_norm(x, w, b, 1e-5), lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5), [x, w, b]),
        (lambda x, w: rms_norm(x, w, 1e-6), lambda x, w: F.rms_norm(x, (n,), w, 1e-6), [x, w]),
    ]
    for ours, theirs, tensors in pairs:
        expected = _grads(lambda *t, f=theirs: f(*[u.double() for u in t]), tensors, dy.double())
        for got, want in zip(_grads(ours, tensors, dy), expected):
            # dweight sums over rows: compare relative to its size
            scale = want.abs().max().item() or 1.0
            torch.testing.assert_close(got.double() / scale, want.double() / scale, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_only_the_wanted_gradients(device):
    x = inputs((4, 16), torch.float32, device).requires_grad_()
    w, b = params(16, torch.float32, device)
    w.requires_grad_()
    layer_norm(x, w, b).sum().backward()
    assert x.grad is not None and w.grad is not None and b.grad is None


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device, small):
    if small and device == "cuda":
        pytest.skip("opcheck on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    x = inputs((6, 67), torch.float32, device)
    w, b = params(67, torch.float32, device)
    dy = inputs((6, 67), torch.float32, device, seed=2)
    ops = torch.ops.rowwise
    grad = [t.clone().requires_grad_() for t in (x, w, b)]
    torch.library.opcheck(ops.softmax.default, (x,))
    torch.library.opcheck(ops.softmax.default, (grad[0], 3))
    torch.library.opcheck(ops.layer_norm.default, (x, w, b, 1e-5))
    torch.library.opcheck(ops.layer_norm.default, (*grad, 1e-5))
    torch.library.opcheck(ops.layer_norm.default, (x, None, None, 1e-5))
    torch.library.opcheck(ops.rms_norm.default, (x, w, 1e-6))
    torch.library.opcheck(ops.rms_norm.default, (grad[0], grad[1], 1e-6, 4))
    y = torch.softmax(x, -1)
    torch.library.opcheck(ops.softmax_backward.default, (y, dy))
    _, mean, rstd = ops.layer_norm(x, w, b, 1e-5)
    torch.library.opcheck(ops.layer_norm_backward.default, (dy, x, w, mean, rstd, [True, False]))
    _, rstd = ops.rms_norm(x, w, 1e-6)
    torch.library.opcheck(ops.rms_norm_backward.default, (dy, x, w, rstd, True))
