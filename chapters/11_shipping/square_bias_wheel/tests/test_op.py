"""The op, tested from the installed wheel (these tests ship inside it: `python -m pytest --pyargs
square_bias_wheel.tests`). They import only torch, pytest and the package: no course helper is in reach."""

import pytest
import torch

import square_bias_wheel
from square_bias_wheel import square_bias

HAS_CUDA = torch.cuda.is_available()
CUDA = pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")])
DEVICES = ["cpu", CUDA]
SHAPES = [((0,), (0,)), ((1,), ()), ((1025,), ()), ((7, 9), (9,)), ((300, 257), (300, 257)), ((2, 3, 5), (5,))]


def dtypes(device):
    half = [torch.float16, torch.bfloat16] if device == "cuda" else []
    return [torch.float32, torch.float64, *half]


def reference(x, b):
    """x*x + b in float64, rounded once to x's dtype: more exact than the op."""
    return (x.double() * x.double() + b.double()).to(x.dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_shape,b_shape", SHAPES, ids=str)
def test_forward_matches_a_float64_reference(device, x_shape, b_shape):
    for dtype in dtypes(device):
        x = torch.randn(x_shape, device=device).to(dtype)
        b = torch.randn(b_shape, device=device).to(dtype)
        torch.testing.assert_close(square_bias(x, b), reference(x, b))


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_inputs(device):
    x = torch.randn(40, 30, device=device).t()  # (30, 40), strides (1, 30)
    b = torch.randn(40, device=device)
    torch.testing.assert_close(square_bias(x, b), reference(x, b))


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    x = torch.randn(6, 5, dtype=torch.float64, device=device, requires_grad=True)
    b = torch.randn(5, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(square_bias, (x, b))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    x, b = torch.randn(5, 7, device=device), torch.randn(7, device=device)
    torch.library.opcheck(torch.ops.square_bias_wheel.square_bias, (x, b))


def test_compiles_without_a_compiler():
    """aot_eager traces the op through its fake and its autograd without generating code (no C++ compiler here)."""
    x, b = torch.randn(4, 3), torch.randn(3)
    compiled = torch.compile(square_bias, backend="aot_eager", fullgraph=True)
    torch.testing.assert_close(compiled(x, b), reference(x, b))


def test_bad_input_is_refused():
    with pytest.raises(RuntimeError, match="x and b must have the same dtype"):
        square_bias(torch.ones(3), torch.ones(3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="x has dtype Long, but only float32, float64, float16, bfloat16"):
        square_bias(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=r"b of shape \(4,\) cannot be broadcast to x's shape \(2, 3\)"):
        square_bias(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(RuntimeError, match="on the CPU, x has dtype Half"):
        square_bias(torch.ones(3, dtype=torch.float16), torch.ones(3, dtype=torch.float16))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
def test_cuda_kernel_is_registered_and_runs_on_the_current_stream():
    assert square_bias_wheel._HAS_CUDA_LIBRARY
    stream = torch.cuda.Stream()
    x = torch.randn(1 << 20, device="cuda")
    with torch.cuda.stream(stream):
        y = square_bias(x, torch.ones((), device="cuda"))
    stream.synchronize()
    torch.testing.assert_close(y, x * x + 1)
