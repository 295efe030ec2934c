"""float16 and bfloat16 without a GPU: the op's CPU path (fp32 sums on float32 copies, one rounding at the end, as
the tensor-core rungs compute), its checks, its fake implementation and opcheck. The kernels are tested on a GPU by
test_tensor_gpu.py; here the parts of the op around them."""

from __future__ import annotations

import pytest
import torch
from helpers import make
from matmul import TENSOR_RUNGS, matmul, matmul_out

DTYPES = [torch.bfloat16, torch.float16]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("transposed", "sliced"), ("offset", "expanded")])
def test_cpu_path_sums_in_fp32_and_rounds_once(dtype, layouts):
    a, b = make((37, 45), layouts[0], dtype), make((45, 29), layouts[1], dtype)
    c = matmul(a, b)
    assert c.dtype == dtype and c.shape == (37, 29)
    expected = (a.float() @ b.float()).to(dtype)  # the same float32 sums may add in another order: a few ulps
    torch.testing.assert_close(c, expected)
    out = torch.full((37, 29), float("nan"), dtype=dtype)
    matmul_out(a, b, out)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rungs_are_checked_for_the_dtype(dtype):
    a = torch.randn(4, 3, dtype=dtype)
    for rung in [-1, *TENSOR_RUNGS]:
        assert matmul(a, a.t(), rung).shape == (4, 4)
    with pytest.raises(ValueError, match="rung 8 has no .* kernel: .* float16 and bfloat16 rungs 9-11"):
        matmul(a, a.t(), rung=8)
    with pytest.raises(ValueError, match="rung must be -1"):
        matmul(a, a.t(), rung=12)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gradients_on_the_cpu(dtype):
    a = make((6, 5), "contiguous", dtype).requires_grad_()
    b = make((5, 4), "contiguous", dtype).requires_grad_()
    matmul(a, b).sum().backward()
    torch.testing.assert_close(a.grad, torch.ones(6, 4, dtype=dtype) @ b.detach().t())
    torch.testing.assert_close(b.grad, a.detach().t() @ torch.ones(6, 4, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opcheck_on_the_cpu(dtype):
    a, b = make((8, 16), "contiguous", dtype), make((16, 24), "transposed", dtype)
    torch.library.opcheck(torch.ops.matmul.matmul, (a, b, -1))
    torch.library.opcheck(torch.ops.matmul.matmul, (a, b, 10))
    torch.library.opcheck(torch.ops.matmul.matmul_out, (a, b, torch.empty(8, 24, dtype=dtype), -1))


def test_fake_implementation_takes_bf16():
    a, b = (
        torch.empty(4, 3, device="meta", dtype=torch.bfloat16),
        torch.empty(3, 2, device="meta", dtype=torch.bfloat16),
    )
    c = matmul(a, b, 11)
    assert c.shape == (4, 2) and c.dtype == torch.bfloat16
