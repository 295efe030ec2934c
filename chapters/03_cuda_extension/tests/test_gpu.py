"""GPU-only behaviour: streams and device indices, determinism, more than 2^31 elements."""

import pytest
import torch
from square_bias_cuda import square_bias

from conftest import reference_forward

pytestmark = pytest.mark.gpu


def test_runs_on_the_current_stream_and_any_gpu_index():
    """The binding launches on PyTorch's current stream of x's GPU (under a device guard), so work queued on a
    side stream is ordered correctly and a tensor on the last GPU works while GPU 0 is current."""
    device = torch.device("cuda", torch.cuda.device_count() - 1)
    stream = torch.cuda.Stream(device=device)
    with torch.cuda.device(0), torch.cuda.stream(stream):
        x = torch.randn(1 << 20, device=device)  # filled on the side stream ...
        b = torch.randn(1 << 20, device=device)
        y = square_bias(x, b)  # ... and read on it: no race
        x.add_(1)  # queued after the op on the same stream
    torch.cuda.synchronize(device)
    torch.testing.assert_close(y, reference_forward(x - 1, b))


def test_grad_b_is_deterministic():
    """No atomics: per-block partial sums added in a fixed order, so every run gives the same bits."""
    x = torch.randn(4096, 1000, device="cuda", requires_grad=True)
    b = torch.randn(1000, device="cuda", requires_grad=True)
    grad_y = torch.randn(4096, 1000, device="cuda")
    first = torch.autograd.grad(square_bias(x, b), b, grad_y)[0]
    for _ in range(3):
        again = torch.autograd.grad(square_bias(x, b), b, grad_y)[0]
        assert torch.equal(first, again)


@pytest.mark.slow
@pytest.mark.big_memory
def test_more_than_2_31_elements_float16():
    """2^31 + 1,024 float16 elements (4.3 GB a tensor): a 32-bit index would wrap around and write below 0."""
    rows, cols = 2**21 + 1, 1024
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float16, requires_grad=True)
    b = torch.randn(cols, device="cuda", dtype=torch.float16, requires_grad=True)
    assert x.numel() > 2**31
    y = square_bias(x, b)
    chunk = 2**16  # rows per comparison: keeps the float64 reference small
    for start in list(range(0, rows, chunk)) + [rows - 1]:
        sl = slice(start, min(start + chunk, rows))
        torch.testing.assert_close(y[sl], reference_forward(x[sl], b))
    grad_y = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
    del y
    grad_x, grad_b = torch.autograd.grad(square_bias(x, b), (x, b), grad_y)
    for start in list(range(0, rows, chunk)) + [rows - 1]:
        sl = slice(start, min(start + chunk, rows))
        ref = (2 * x[sl].float() * grad_y[sl].float()).half()
        torch.testing.assert_close(grad_x[sl], ref)
    ref_gb = grad_y.sum(0, dtype=torch.float32).half()
    torch.testing.assert_close(grad_b, ref_gb, rtol=1e-2, atol=1.0)


@pytest.mark.parametrize("b_shape", [(), (1000,)])
def test_forward_and_backward_capture_into_a_cuda_graph(b_shape):
    """Captured once, replayed with new data: the same results as eager calls (course.graphs)."""
    from course.graphs import check_capture
    from square_bias_cuda.ops import ops

    def make():
        return (torch.randn(300, 1000, device="cuda"), torch.randn(b_shape, device="cuda"))

    check_capture(square_bias, make)
    check_capture(lambda x, b: ops.square_bias_backward(torch.ones_like(x), x, list(b.shape)), make)
