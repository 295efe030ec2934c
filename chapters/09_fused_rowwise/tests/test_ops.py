"""The three ops on every device: values against float64 and against PyTorch's own error, every dtype, leading
shapes, odd sizes, empty and one-row inputs, non-contiguous inputs, and the errors for bad input."""

from __future__ import annotations

import os
import subprocess
import sys

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


# Asks the C header's check (rowwise_unsupported, which plans the launch as the kernels would) about rows of no
# elements, for every op, pass, version and dtype; prints one line each.
_EMPTY_ROW_PROBE = """
import ctypes
from rowwise import ops
lib = ctypes.CDLL(ops._C.__file__)
lib.rowwise_unsupported.restype = ctypes.c_char_p
lib.rowwise_unsupported.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64]
for op in range(3):
    for backward in (0, 1):
        for version in range(7):
            for dtype in range(4):
                print(op, backward, version, dtype, lib.rowwise_unsupported(op, backward, version, dtype, 0))
"""


def test_the_planner_takes_rows_of_no_elements_in_every_version():
    """A row of 0 elements split over blocks (versions 4 and 5, or tune's blocks per row) once made the planner divide
    by zero: SIGFPE, the process gone, where torch gives an empty tensor. Asked in a process of its own, so that such
    a crash fails this test instead of ending pytest. (On the GPU, test_gpu_paths runs the ops themselves.)"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", _EMPTY_ROW_PROBE], capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"the planner crashed on an empty row (exit {done.returncode}): {done.stderr[-2000:]}"
    assert len(done.stdout.splitlines()) == 3 * 2 * 7 * 4


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["transposed", "sliced", "offset", "expanded"])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_non_contiguous(op, layout, device):
    base = inputs((40, 66), torch.float32, device)
    if layout == "transposed":
        x = base.t()
    elif layout == "sliced":
        x = base[::3, 1:60]
    elif layout == "offset":  # contiguous, but not 16-byte aligned: the kernels take the single-element path
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
    with pytest.raises(ValueError, match="version must be one of"):
        softmax(x, version=7)
    with pytest.raises(ValueError, match="tune must be empty or"):
        softmax(x, tune=[1, 2])
    with pytest.raises(ValueError, match="tune must be empty or"):
        softmax(x, tune=[0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="tune's numbers must be between 0 and"):
        softmax(x, tune=[0, 0, 0, -1])
    with pytest.raises(ValueError, match="tune's flags \\(its 5th number\\) must be 0"):
        softmax(x, tune=[0, 0, 0, 0, 17])
    with pytest.raises(ValueError, match="tune's flags \\(its 5th number\\) must be 0"):
        softmax(x, tune=[0, 0, 0, 0, 256])
    with pytest.raises(ValueError, match="dy and y must have the same shape"):
        torch.ops.rowwise.softmax_backward(x, torch.randn(4, 9))
    with pytest.raises(TypeError, match="rstd must have dtype float32"):
        torch.ops.rowwise.rms_norm_backward(x, x, w, torch.ones(4, dtype=torch.float64), True)


@pytest.mark.gpu
def test_bad_inputs_on_the_gpu():
    x = torch.randn(4, 8, device="cuda")
    with pytest.raises(ValueError, match="weight and x must have the same device"):
        layer_norm(x, torch.randn(8))
    with pytest.raises(ValueError, match="versions 1 and 2 are softmax forward kernels only"):
        layer_norm(x, version=1)
    with pytest.raises(ValueError, match="version 2 computes in float32"):
        softmax(x.double(), version=2)
    with pytest.raises(ValueError, match="version 3 holds a row in the registers of one block"):
        softmax(torch.randn(1, 1 << 18, device="cuda"), version=3)
    with pytest.raises(ValueError, match="version 6 is a forward kernel only"):
        torch.ops.rowwise.softmax_backward(x, x, 6, [])
    with pytest.raises(ValueError, match="version 6 reads rows of whole 16-byte packs"):
        softmax(torch.randn(4, 7, device="cuda"), version=6)
    offset = torch.randn(4 * 64 + 1, device="cuda")[1:].view(4, 64)  # contiguous, 4 bytes past a 16-byte boundary
    with pytest.raises(ValueError, match="version 6 loads 16-byte packs: x, weight and bias must start"):
        rms_norm(offset, None, 1e-5, version=6)
    x64 = torch.randn(4, 64, device="cuda")  # x aligned, the bias a view 4 bytes past a boundary
    weight, bias = torch.randn(64, device="cuda"), torch.randn(65, device="cuda")[1:]
    with pytest.raises(ValueError, match="version 6 loads 16-byte packs: x, weight and bias must start"):
        layer_norm(x64, weight, bias, version=6)
    torch.testing.assert_close(layer_norm(x64, weight, bias), torch.nn.functional.layer_norm(x64, (64,), weight, bias))
    with pytest.raises(ValueError, match=r"tune=\[256, 0, 17\] cannot run this op at this shape"):
        softmax(x64, version=6, tune=[256, 0, 17])  # version 6 over a cluster: at most 16 blocks a row
