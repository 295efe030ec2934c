"""The three ops on every device: values against float64 and against PyTorch's own error, every dtype, leading
shapes, odd sizes, empty and one-row inputs, non-contiguous inputs, and the errors for bad input."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES, DTYPES, assert_no_worse_than_torch, inputs, params, reference, torch_op
from rowwise import layer_norm, rms_norm, softmax

SHAPES = [(1, 7), (5, 128), (7, 1000), (3, 1025), (2, 3, 257), (4, 4097), (2, 1)]


def run(op, x, w=None, b=None, eps=1e-5):
    if op == "softmax":
        return softmax(x), (x,)
    if op == "layer_norm":
        return layer_norm(x, w, b, eps), (x, w, b, eps)
    return rms_norm(x, w, eps), (x, w, eps)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_matches_float64_and_no_worse_than_torch(op, shape, dtype, device):
    x = inputs(shape, dtype, device, scale=3.0 if op == "softmax" else 1.0)
    w, b = params(shape[-1], dtype, device)
    y, args = run(op, x, w, b)
    assert y.shape == x.shape and y.dtype == x.dtype and y.device == x.device
    expected = reference(op, *args)
    assert_no_worse_than_torch(y, torch_op(op, *args), expected, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_no_weight_no_bias(op, device):
    x = inputs((6, 300), torch.float32, device)
    y, args = run(op, x)
    torch.testing.assert_close(y.cpu().double(), reference(op, *args), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (0,)], ids=str)
def test_empty(op, shape, device):
    x = inputs(shape, torch.float32, device)
    w, b = params(shape[-1], torch.float32, device)
    y, args = run(op, x, w, b)
    assert y.shape == x.shape


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["transposed", "sliced", "offset", "expanded"])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_non_contiguous(op, layout, device):
    base = inputs((40, 66), torch.float32, device)
    if layout == "transposed":
        x = base.t()
    elif layout == "sliced":
        x = base[::3, 1:60]
    elif layout == "offset":  # contiguous, but not 16-byte aligned: each row starts with a scalar head
        x = base.flatten()[1 : 1 + 39 * 64].view(39, 64)
    else:
        x = base[:1].expand(5, 66)
    w, b = params(x.shape[-1], torch.float32, device)
    y, args = run(op, x, w, b)
    torch.testing.assert_close(y.cpu().double(), reference(op, *args), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_like_torch_functions(device):
    x = inputs((16, 96), torch.float32, device)
    w, b = params(96, torch.float32, device)
    torch.testing.assert_close(softmax(x), torch.softmax(x, -1))
    torch.testing.assert_close(layer_norm(x, w, b, 1e-5), torch.nn.functional.layer_norm(x, (96,), w, b, 1e-5))
    torch.testing.assert_close(rms_norm(x, w), torch.nn.functional.rms_norm(x, (96,), w))


def test_bad_inputs_name_the_problem():
    x = torch.randn(4, 8)
    w = torch.randn(8)
    with pytest.raises(TypeError, match="x has dtype int64, but only float32, float64, float16, bfloat16"):
        softmax(torch.ones(4, 8, dtype=torch.int64))
    with pytest.raises(ValueError, match="x must have at least one dimension"):
        softmax(torch.tensor(1.0))
    with pytest.raises(ValueError, match=r"weight must have shape \(8,\)"):
        layer_norm(x, torch.randn(7))
    with pytest.raises(TypeError, match="weight and x must have the same dtype"):
        rms_norm(x, w.double())
    with pytest.raises(ValueError, match=r"bias must have shape \(8,\)"):
        layer_norm(x, w, torch.randn(2, 4))
    with pytest.raises(ValueError, match="rung must be -1 .* or 1..5, got 6"):
        softmax(x, rung=6)
    with pytest.raises(ValueError, match="rung must be -1 .* or 1..5, got 0"):
        layer_norm(x, rung=0)
    with pytest.raises(ValueError, match="dy and y must have the same shape"):
        torch.ops.rowwise.softmax_backward(x, torch.randn(4, 9))
    with pytest.raises(TypeError, match="rstd must have dtype float32"):
        torch.ops.rowwise.rms_norm_backward(x, x, w, torch.ones(4, dtype=torch.float64), True)


@pytest.mark.gpu
def test_bad_inputs_on_the_gpu():
    x = torch.randn(4, 8, device="cuda")
    with pytest.raises(ValueError, match="weight and x must have the same device"):
        layer_norm(x, torch.randn(8))
    with pytest.raises(ValueError, match="rungs 1 and 2 are softmax forward kernels only"):
        layer_norm(x, rung=1)
    with pytest.raises(ValueError, match="rungs 1 and 2 are softmax forward kernels only"):
        torch.ops.rowwise.softmax_backward(x, x, 2)
    with pytest.raises(ValueError, match="rung 2 computes in float32"):
        softmax(x.double(), rung=2)
    with pytest.raises(ValueError, match="rung 3 holds a row in the registers of one block: at most 32768 elements"):
        softmax(torch.randn(1, 1 << 16, device="cuda", dtype=torch.bfloat16), rung=3)
    x = torch.randn(2, 8193, device="cuda")  # the norms' backward holds 4096 float32 elements a block
    _, rstd = torch.ops.rowwise.rms_norm(x, None, 1e-6, 3)
    with pytest.raises(ValueError, match="rung 3 holds a row in the registers of one block: at most 4096 elements"):
        torch.ops.rowwise.rms_norm_backward(x, x, None, rstd, False, 3)
    if torch.cuda.get_device_capability()[0] < 9:
        with pytest.raises(ValueError, match="rung 5 needs thread-block clusters"):
            softmax(x, rung=5)
