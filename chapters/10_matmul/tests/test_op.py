"""The op on every device, with its default (fastest) rung: values against float64, layouts, K = 0, every element
written, bad inputs, gradients, opcheck, torch.compile."""

from __future__ import annotations

import itertools

import pytest
import torch
from helpers import (
    DEVICES,
    LAYOUTS,
    SIZES,
    assert_close_to_reference,
    make,
    poisoned,
    reference,
    skip_layout_pair_under_sanitizer,
)
from matmul import matmul, matmul_out

# Every (M, N, K) from SIZES on the GPU; on the CPU those whose product stays under 2·10^8 (the float64 reference
# of 4095³ alone is a minute of CPU time).
ALL_SHAPES = list(itertools.product(SIZES, repeat=3))
CPU_SHAPES = [s for s in ALL_SHAPES if s[0] * s[1] * s[2] <= 2e8]


def shapes_for(device: str, small: bool) -> list[tuple[int, int, int]]:
    if device == "cpu":
        return CPU_SHAPES
    return [s for s in ALL_SHAPES if max(s) <= 33] if small else ALL_SHAPES


@pytest.mark.parametrize("device", DEVICES)
def test_every_size_combination(device, small):
    for M, N, K in shapes_for(device, small):
        a, b = make((M, K), "contiguous", device=device, seed=M + N + K), make((K, N), "contiguous", device=device)
        out = poisoned((M, N), torch.float32, device)
        matmul_out(a, b, out)
        assert_close_to_reference(out, a, b, f"{M}x{N}x{K}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("a_layout", LAYOUTS)
@pytest.mark.parametrize("b_layout", LAYOUTS)
def test_layouts_are_read_in_place(device, dtype, a_layout, b_layout, small):
    skip_layout_pair_under_sanitizer(small and device == "cuda", a_layout, b_layout)
    a = make((130, 67), a_layout, dtype, device, seed=1)
    b = make((67, 129), b_layout, dtype, device, seed=2)
    assert_close_to_reference(matmul(a, b), a, b, f"{a_layout} x {b_layout}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_k_zero_gives_zeros(device, dtype):
    a, b = torch.empty(5, 0, dtype=dtype, device=device), torch.empty(0, 7, dtype=dtype, device=device)
    out = poisoned((5, 7), dtype, device)
    matmul_out(a, b, out)
    assert torch.equal(out, torch.zeros(5, 7, dtype=dtype, device=device))
    assert torch.equal(matmul(a, b), torch.zeros(5, 7, dtype=dtype, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_empty_outputs(device):
    for M, N, K in [(0, 5, 3), (4, 0, 3), (0, 0, 0)]:
        c = matmul(torch.randn(M, K, device=device), torch.randn(K, N, device=device))
        assert c.shape == (M, N)


@pytest.mark.parametrize("device", DEVICES)
def test_out_with_a_row_stride_writes_only_its_columns(device):
    a, b = make((37, 45), "contiguous", device=device), make((45, 29), "transposed", device=device)
    wide = poisoned((37, 32), torch.float32, device)
    out = wide[:, :29]  # row stride 32, not 29
    matmul_out(a, b, out)
    assert_close_to_reference(out, a, b)
    assert torch.isnan(wide[:, 29:]).all(), "wrote past the out matrix's columns"


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs_name_the_problem(device):
    a = torch.randn(4, 3, device=device)
    with pytest.raises(
        TypeError, match="a has dtype int64, but only float32, float64, float16, bfloat16 are supported"
    ):
        matmul(torch.ones(4, 3, dtype=torch.int64, device=device), a.t())
    with pytest.raises(TypeError, match="b has dtype int32"):
        matmul(a, torch.ones(3, 2, device=device, dtype=torch.int32))
    with pytest.raises(TypeError, match="a and b must have the same dtype"):
        matmul(a.bfloat16(), torch.randn(3, 2, device=device).half())
    with pytest.raises(TypeError, match="a and b must have the same dtype"):
        matmul(a, torch.randn(3, 2, device=device, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"inner dimension K\), but a has shape \(4, 3\) and b has shape \(4, 2\)"):
        matmul(a, torch.randn(4, 2, device=device))
    with pytest.raises(ValueError, match=r"a must have 2 dimensions, but has shape \(2, 4, 3\)"):
        matmul(torch.randn(2, 4, 3, device=device), torch.randn(3, 2, device=device))
    with pytest.raises(ValueError, match=r"b must have 2 dimensions, but has shape \(3,\)"):
        matmul(a, torch.randn(3, device=device))
    with pytest.raises(ValueError, match="rung must be -1"):
        matmul(a, a.t(), rung=12)
    with pytest.raises(ValueError, match="rung 5 has no float64 kernel"):
        matmul(a.double(), a.t().double(), rung=5)
    with pytest.raises(ValueError, match="rung 9 has no float32 kernel: float32 runs rungs 0-8"):
        matmul(a, a.t(), rung=9)
    with pytest.raises(ValueError, match="rung 3 has no bfloat16 kernel: .* float16 and bfloat16 rungs 9-11"):
        matmul(a.bfloat16(), a.t().bfloat16(), rung=3)
    with pytest.raises(ValueError, match=r"out must have shape \(4, 4\)"):
        matmul_out(a, a.t(), torch.empty(4, 5, device=device))
    with pytest.raises(ValueError, match="out's rows must be contiguous"):
        matmul_out(a, a.t(), torch.empty(4, 4, device=device).t())


@pytest.mark.gpu
def test_wrong_device_names_the_tensor():
    a = torch.randn(4, 3)
    with pytest.raises(ValueError, match="a must be on cuda, but it is on cpu"):
        matmul(a, torch.randn(3, 2, device="cuda"))
    with pytest.raises(ValueError, match="b must be on cuda, but it is on cpu"):
        matmul(a.cuda(), torch.randn(3, 2))


def test_fake_implementation_checks_the_same():
    a, b = torch.empty(4, 3, device="meta"), torch.empty(3, 2, device="meta")
    assert matmul(a, b).shape == (4, 2)
    with pytest.raises(ValueError, match="inner dimension K"):
        matmul(a, torch.empty(4, 2, device="meta"))
    with pytest.raises(TypeError, match="b has dtype int32"):
        matmul(a, b.to(torch.int32))
    with pytest.raises(ValueError, match="rung 3 has no bfloat16 kernel"):
        matmul(a.bfloat16(), b.bfloat16(), 3)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    a = make((7, 5), "contiguous", torch.float64, device).requires_grad_()
    b = make((5, 3), "transposed", torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(matmul, (a, b))
    assert torch.autograd.gradgradcheck(matmul, (a, b))


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_match_torch(device):
    a = make((33, 70), "contiguous", device=device, seed=3)
    b = make((70, 12), "contiguous", device=device, seed=4)
    ours = [t.clone().requires_grad_() for t in (a, b)]
    theirs = [t.double().clone().requires_grad_() for t in (a, b)]
    grad = make((33, 12), "contiguous", device=device, seed=5)
    matmul(*ours).backward(grad)
    (theirs[0] @ theirs[1]).backward(grad.double())
    for mine, exact in zip(ours, theirs):
        torch.testing.assert_close(mine.grad, exact.grad.float(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device, small):
    if small and device == "cuda":
        pytest.skip("opcheck on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    a, b = make((9, 13), "contiguous", device=device), make((13, 6), "transposed", device=device)
    torch.library.opcheck(torch.ops.matmul.matmul.default, (a, b, -1))
    torch.library.opcheck(torch.ops.matmul.matmul.default, (a.requires_grad_(), b.requires_grad_(), -1))
    out = torch.empty(9, 6, device=device)
    torch.library.opcheck(torch.ops.matmul.matmul_out.default, (a.detach(), b.detach(), out, -1))


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device, small):
    if small and device == "cuda":
        pytest.skip("torch.compile on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    torch._dynamo.reset()
    # aot_eager on the CPU traces through the fake and autograd registrations without generating C++ (fast);
    # inductor on the GPU is what a user runs.
    backend = "aot_eager" if device == "cpu" else "inductor"
    a = make((40, 24), "contiguous", device=device).requires_grad_()
    b = make((24, 17), "contiguous", device=device)

    @torch.compile(fullgraph=True, backend=backend)
    def loss(x, y):
        return matmul(x * 2, y).sum()

    out = loss(a, b)
    out.backward()
    torch.testing.assert_close(out.double(), reference(a.detach() * 2, b).sum(), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(a.grad, 2 * torch.ones(40, 17, device=device) @ b.t(), rtol=1e-5, atol=1e-5)
