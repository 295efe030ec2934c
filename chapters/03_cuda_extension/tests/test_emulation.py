"""The kernels' per-thread code (src/square_bias_thread.cuh, included by src/square_bias_kernels.cu), run on
the CPU for every thread of a small grid.

No GPU needed: square_bias_emulate_* call the same __host__ __device__ functions the kernels call
(grid_stride_for_each, the forward and backward bodies) once per simulated (block, thread). Outputs start as NaN,
so an element that no thread writes, or one written at a wrong index, fails the comparison."""

import pytest
import torch
from square_bias_cuda import ops

from conftest import reduction_atol, reference_forward, reference_grads

GRIDS = [(1, 1), (1, 4), (3, 4), (2, 32), (5, 7)]  # (blocks, threads per block): fewer threads than elements


@pytest.mark.parametrize("grid,block", GRIDS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize(
    "x_shape,b_shape", [((1,), (1,)), ((5,), (5,)), ((1000,), (1000,)), ((37, 12), (12,)), ((9, 10), ()), ((3,), ())]
)
def test_emulated_forward(grid, block, dtype, x_shape, b_shape):
    x = torch.randn(x_shape, dtype=dtype)
    b = torch.randn(b_shape, dtype=dtype)
    torch.testing.assert_close(ops.emulate_forward(x, b, grid, block), reference_forward(x, b))


def test_emulated_forward_more_threads_than_elements():
    x, b = torch.randn(5), torch.randn(5)  # 64 threads, 5 elements: the bounds check keeps the others out
    torch.testing.assert_close(ops.emulate_forward(x, b, 2, 32), reference_forward(x, b))


def test_emulated_forward_unaligned():
    x = torch.randn(1001)[1:]  # 4 bytes past a 16-byte boundary: every element goes the scalar way
    b = torch.randn(1001)[1:]
    torch.testing.assert_close(ops.emulate_forward(x, b, 3, 8), reference_forward(x, b))


@pytest.mark.parametrize("grid_x,grid_y", [(1, 1), (1, 3), (2, 2), (4, 5)], ids=str)
@pytest.mark.parametrize("rows,b_n", [(1, 7), (50, 1), (50, 24), (19, 33), (10, 70), (130, 5)], ids=str)
def test_emulated_backward(grid_x, grid_y, rows, b_n):
    x = torch.randn(rows, b_n, dtype=torch.float64)
    grad_y = torch.randn(rows, b_n, dtype=torch.float64)
    grad_x, grad_b = ops.emulate_backward(grad_y, x, b_n, grid_x, grid_y)
    ref_gx, ref_gb = reference_grads(x, torch.zeros(b_n, dtype=torch.float64), grad_y)
    torch.testing.assert_close(grad_x.view(rows, b_n), ref_gx)
    torch.testing.assert_close(grad_b, ref_gb, atol=reduction_atol(torch.float64, rows), rtol=1e-12)
