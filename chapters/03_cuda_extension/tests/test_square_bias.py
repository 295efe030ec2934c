"""The op against eager PyTorch on both devices: sizes, dtypes, broadcasts, layouts, gradients, opcheck, compile."""

import pytest
import torch
from square_bias_cuda import ops, square_bias

from conftest import ALL_DTYPES, DEVICES, reduction_atol, reference_forward, reference_grads

# (x's shape, b's shape): the seed's 500x500, sizes around a block (1,023 / 1,025), a scalar, rows, columns, empty.
SHAPES = [
    ((0,), (0,)),
    ((1,), (1,)),
    ((1023,), (1023,)),
    ((1025,), ()),
    ((500, 500), (500, 500)),
    ((500, 500), (500,)),
    ((500, 500), (1, 500)),
    ((500, 500), (500, 1)),  # a column: materialised, grad_b by sum_to_size
    ((3, 0, 5), (5,)),
    ((7, 3, 33), (3, 33)),
    ((6, 10), (1, 1)),
]


def make(shape, dtype, device, *, seed=0, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    return t.requires_grad_(requires_grad)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("x_shape,b_shape", SHAPES, ids=str)
def test_forward_and_backward_match_eager(device, dtype, x_shape, b_shape):
    x = make(x_shape, dtype, device, seed=1, requires_grad=True)
    b = make(b_shape, dtype, device, seed=2, requires_grad=True)
    y = square_bias(x, b)
    assert y.shape == x.shape and y.dtype == dtype and y.device == x.device
    torch.testing.assert_close(y, reference_forward(x, b))
    grad_y = make(x_shape, dtype, device, seed=3)
    grad_x, grad_b = torch.autograd.grad(y, (x, b), grad_y)
    ref_gx, ref_gb = reference_grads(x, b, grad_y)
    torch.testing.assert_close(grad_x, ref_gx)
    terms = max(x.numel() // max(b.numel(), 1), 1)
    torch.testing.assert_close(
        grad_b, ref_gb, rtol=1e-2 if dtype == torch.bfloat16 else 2e-3, atol=reduction_atol(dtype, terms)
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("b_shape", [(2**24 + 3,), (1,)], ids=["full", "scalar"])
def test_large_odd_size(device, b_shape, small):
    n = 2**16 + 3 if small else 2**24 + 3
    b_shape = (n,) if b_shape[0] > 1 else b_shape
    x = make((n,), torch.float32, device, seed=4, requires_grad=True)
    b = make(b_shape, torch.float32, device, seed=5, requires_grad=True)
    y = square_bias(x, b)
    torch.testing.assert_close(y, reference_forward(x, b))
    grad_y = make((n,), torch.float32, device, seed=6)
    grad_x, grad_b = torch.autograd.grad(y, (x, b), grad_y)
    ref_gx, ref_gb = reference_grads(x, b, grad_y)
    torch.testing.assert_close(grad_x, ref_gx)
    torch.testing.assert_close(grad_b, ref_gb, rtol=1e-4, atol=reduction_atol(torch.float32, n // b.numel()))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_non_contiguous_and_unaligned(device, dtype):
    base = make((64, 131), dtype, device, seed=7)
    cases = [
        (base.t(), make((64,), dtype, device, seed=8)),  # transposed x
        (base[:, 1:], make((130,), dtype, device, seed=9)),  # x starts 1 element in: unaligned, scalar path
        (base[::2, :], make((131,), dtype, device, seed=10)[None, :]),  # strided rows
        (base, make((131, 2), dtype, device, seed=11)[:, 0]),  # strided b
    ]
    for x, b in cases:
        x = x.detach().requires_grad_()
        b = b.detach().requires_grad_()
        y = square_bias(x, b)
        torch.testing.assert_close(y, reference_forward(x, b))
        grad_y = torch.ones_like(y)
        grad_x, grad_b = torch.autograd.grad(y, (x, b), grad_y)
        ref_gx, ref_gb = reference_grads(x, b, grad_y)
        torch.testing.assert_close(grad_x, ref_gx)
        torch.testing.assert_close(grad_b, ref_gb, rtol=1e-2, atol=reduction_atol(dtype, x.numel() // b.numel()))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("b_shape", [(4, 5), (5,), (4, 1), ()], ids=str)
def test_gradcheck(device, b_shape):
    x = make((4, 5), torch.float64, device, seed=12, requires_grad=True)
    b = make(b_shape, torch.float64, device, seed=13, requires_grad=True)
    assert torch.autograd.gradcheck(square_bias, (x, b))


@pytest.mark.parametrize("device", DEVICES)
def test_backward_accumulates_into_grad(device):
    x = make((8, 9), torch.float32, device, seed=14, requires_grad=True)
    b = make((9,), torch.float32, device, seed=15, requires_grad=True)
    for _ in range(2):
        square_bias(x, b).sum().backward()
    torch.testing.assert_close(x.grad, 2 * (2 * x.detach()))
    torch.testing.assert_close(b.grad, torch.full_like(b, 2 * 8.0))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    for dtype in (torch.float32, torch.float64):
        for x_shape, b_shape in [((5, 7), (7,)), ((5, 7), (5, 7)), ((5, 7), (5, 1)), ((3,), ())]:
            x = make(x_shape, dtype, device, seed=16, requires_grad=True)
            b = make(b_shape, dtype, device, seed=17, requires_grad=True)
            torch.library.opcheck(ops.square_bias, (x, b))
            grad_y = make(x_shape, dtype, device, seed=18)
            torch.library.opcheck(ops.square_bias_backward, (grad_y, x.detach(), list(b_shape)))
            torch.library.opcheck(ops.square_bias_grad_x, (grad_y, x.detach()))


def test_dispatcher_picks_by_device():
    for key in ("CPU", "CUDA", "Autograd"):
        assert ops.square_bias.default.has_kernel_for_dispatch_key(key), key


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_needs,b_needs", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("b_shape", [(5,), (4, 5)], ids=str)
def test_autograd_kernel_in_cpp(device, x_needs, b_needs, b_shape):
    """The backward is recorded by the C++ Autograd kernel (binding.cpp), for exactly the inputs that need it."""
    x = make((4, 5), torch.float64, device, seed=23, requires_grad=x_needs)
    b = make(b_shape, torch.float64, device, seed=24, requires_grad=b_needs)
    y = square_bias(x, b)
    assert "SquareBiasFunction" in y.grad_fn.name()  # a C++ node: no Python runs for this op's autograd
    y.backward(torch.ones_like(y))
    assert (x.grad is not None) == x_needs and (b.grad is not None) == b_needs
    if x_needs:
        torch.testing.assert_close(x.grad, 2 * x.detach())
    if b_needs:
        torch.testing.assert_close(b.grad, torch.ones_like(y).sum_to_size(b_shape))


@pytest.mark.parametrize("device", DEVICES)
def test_nothing_recorded_without_grad(device):
    x = make((4, 5), torch.float32, device, seed=25, requires_grad=True)
    b = make((5,), torch.float32, device, seed=26)
    with torch.no_grad():
        y = square_bias(x, b)
    assert y.grad_fn is None and not y.requires_grad
    y = square_bias(x.detach(), b)
    assert y.grad_fn is None and not y.requires_grad
    torch.testing.assert_close(y, reference_forward(x.detach(), b))


def test_torch_compile_fullgraph_cpu():
    """Traces through the fake and autograd registrations (aot_eager: no C++ code generation, quick on CPU)."""
    x = make((6, 8), torch.float32, "cpu", seed=19, requires_grad=True)
    b = make((8,), torch.float32, "cpu", seed=20, requires_grad=True)
    f = torch.compile(lambda x, b: square_bias(x, b).sin(), fullgraph=True, backend="aot_eager")
    y = f(x, b)
    torch.testing.assert_close(y, (x * x + b).sin())
    gx, gb = torch.autograd.grad(y.sum(), (x, b))
    torch.testing.assert_close(gx, 2 * x * (x * x + b).cos())
    torch.testing.assert_close(gb, (x * x + b).cos().sum(0))


@pytest.mark.gpu
def test_torch_compile_fullgraph_cuda():
    x = make((64, 33), torch.float32, "cuda", seed=21, requires_grad=True)
    b = make((33,), torch.float32, "cuda", seed=22, requires_grad=True)
    f = torch.compile(lambda x, b: square_bias(x, b).sin(), fullgraph=True)
    y = f(x, b)
    torch.testing.assert_close(y, (x * x + b).sin())
    gx, gb = torch.autograd.grad(y.sum(), (x, b))
    torch.testing.assert_close(gx, 2 * x * (x * x + b).cos())
    torch.testing.assert_close(gb, (x * x + b).cos().sum(0), rtol=1e-4, atol=1e-4)
