"""The tensor-core rungs 9-11 (float16 and bfloat16 inputs, fp32 sums, output in the inputs' dtype): tails of every
size, K = 16 and K = 1, layouts (transposed, sliced, misaligned...), every element written, the error against float64
no worse than twice cuBLAS's on the same inputs, which rung runs, autograd, opcheck, and the MLP in bf16."""

from __future__ import annotations

import pytest
import torch
from helpers import make, poisoned, reference, rel_error, skip_layout_pair_under_sanitizer
from matmul import TENSOR_RUNGS, Linear, matmul, matmul_out, rung_used

pytestmark = pytest.mark.gpu
RUNGS = list(TENSOR_RUNGS)
DTYPES = [torch.bfloat16, torch.float16]
# M, N, K not multiples of any tile (the 1, 33, 1000, 4095; K = 16 and K = 1). Rung 11 needs rows TMA can
# read (N and K multiples of 8 for contiguous operands): on the others it hands over to rung 10 (checked below).
SHAPES = [(1, 1, 1), (33, 33, 33), (1000, 1000, 16), (4095, 1000, 33), (128, 256, 64), (7, 9, 1), (1, 1000, 16),
          (1000, 1, 33), (257, 129, 1000)]  # fmt: skip
TMA_SHAPES = [(1, 8, 8), (8, 8, 8), (1000, 1000, 16), (128, 256, 64), (136, 264, 72), (4095, 1000, 40),
              (257, 520, 1000), (64, 64, 4096), (129, 8, 24)]  # fmt: skip
SMALL_SHAPES = [(1, 1, 1), (33, 33, 33), (130, 67, 16), (7, 9, 1)]
SMALL_TMA_SHAPES = [(8, 8, 8), (136, 264, 72), (129, 8, 24)]
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "padded", "expanded"]
ABSOLUTE_FLOOR = 1e-5  # relative errors this small are rounding of a few elements, whatever cuBLAS did


def is_hopper() -> bool:
    return torch.cuda.get_device_capability()[0] == 9


def inputs(M, N, K, dtype, a_layout="contiguous", b_layout="contiguous", seed=0):
    return make((M, K), a_layout, dtype, "cuda", seed=seed), make((K, N), b_layout, dtype, "cuda", seed=seed + 1)


def assert_as_exact_as_cublas(c, a, b, what):
    """Every element written (no NaN from the poisoned output), finite, and the error against float64 at most twice
    cuBLAS's (torch.matmul in the same dtype) on the same inputs, plus a small floor."""
    assert c.shape == (a.shape[0], b.shape[1]) and c.dtype == a.dtype, what
    assert torch.isfinite(c).all(), f"{what}: unwritten (NaN) or infinite elements"
    ref = reference(a, b)
    ours, cublas = rel_error(c, ref), rel_error(a @ b, ref)
    assert ours <= 2 * cublas + ABSOLUTE_FLOOR, f"{what}: error {ours:.2e}, cuBLAS's {cublas:.2e}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rung", RUNGS)
def test_every_shape(rung, dtype, small):
    for M, N, K in (SMALL_SHAPES + SMALL_TMA_SHAPES) if small else (SHAPES + TMA_SHAPES):
        a, b = inputs(M, N, K, dtype, seed=M + K)
        out = poisoned((M, N), dtype, "cuda")
        matmul_out(a, b, out, rung)
        assert_as_exact_as_cublas(out, a, b, f"rung {rung} (ran {rung_used(a, b, rung)}), {M}x{N}x{K}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("a_layout", LAYOUTS)
@pytest.mark.parametrize("b_layout", LAYOUTS)
def test_every_layout(rung, dtype, a_layout, b_layout, small):
    skip_layout_pair_under_sanitizer(small, a_layout, b_layout)
    for M, N, K in [(130, 129, 67), (136, 264, 72)]:  # rung 11 hands over to rung 10 on the first; runs the second
        a, b = inputs(M, N, K, dtype, a_layout, b_layout, seed=3)
        out = poisoned((M, N), dtype, "cuda")
        matmul_out(a, b, out, rung)
        assert_as_exact_as_cublas(out, a, b, f"rung {rung}, {a_layout} x {b_layout}, {M}x{N}x{K}")


@pytest.mark.parametrize("rung", RUNGS)
def test_out_with_a_row_stride_and_k_zero(rung):
    a, b = inputs(37, 32, 48, torch.bfloat16)  # rows of 32 and 48 elements: rung 11 runs on a Hopper GPU
    for width in (40, 41):  # an even row stride (two outputs per store) and an odd one (one per store)
        wide = poisoned((37, width), torch.bfloat16, "cuda")
        matmul_out(a, b, wide[:, :32], rung)
        assert_as_exact_as_cublas(wide[:, :32], a, b, f"rung {rung}, out with row stride {width}")
        assert torch.isnan(wide[:, 32:]).all(), "wrote past the out matrix's columns"
    out = poisoned((70, 130), torch.bfloat16, "cuda")
    empty_a, empty_b = torch.empty(70, 0, device="cuda", dtype=torch.bfloat16), torch.empty(0, 130, device="cuda")
    matmul_out(empty_a, empty_b.bfloat16(), out, rung)
    assert torch.equal(out, torch.zeros_like(out))


def test_which_rung_runs():
    a, b = inputs(136, 264, 72, torch.bfloat16)
    hopper = is_hopper()
    assert rung_used(a, b) == (11 if hopper else 10)
    assert rung_used(a, b, 11) == (11 if hopper else 10)
    assert rung_used(a.t().contiguous().t(), b, 11) == (11 if hopper else 10)  # transposed: copied, then TMA
    assert rung_used(a, b, 9) == 9 and rung_used(a, b, 10) == 10
    odd_a, odd_b = inputs(33, 33, 33, torch.bfloat16)
    assert rung_used(odd_a, odd_b) == 10, "rows of 33 elements (66 bytes): TMA cannot read them, rung 10 runs"
    offset = make((136, 72), "offset", torch.bfloat16, "cuda")
    assert rung_used(offset, b) == 10, "a misaligned view: rung 10"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rung", RUNGS)
def test_gradients_match_torch(rung, dtype):
    """dA = dC·Bᵀ and dB = Aᵀ·dC run through the same rung (Bᵀ, Aᵀ are views); compared with float64."""
    for M, N, K in [(64, 136, 72), (33, 40, 17)]:
        a, b = inputs(M, N, K, dtype, seed=5)
        g = make((M, N), "contiguous", dtype, "cuda", seed=9)
        a.requires_grad_(), b.requires_grad_()
        (matmul(a, b, rung) * g).sum().backward()
        ours_a, ours_b = a.grad, b.grad
        a.grad = b.grad = None
        ((a @ b) * g).sum().backward()
        ref_a, ref_b = g.double() @ b.detach().double().T, a.detach().double().T @ g.double()
        for name, ours, theirs, ref in [("dA", ours_a, a.grad, ref_a), ("dB", ours_b, b.grad, ref_b)]:
            error, torch_error = rel_error(ours, ref), rel_error(theirs, ref)
            assert error <= 2 * torch_error + ABSOLUTE_FLOOR, f"rung {rung} {name}: {error:.2e} vs {torch_error:.2e}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opcheck(dtype):
    a, b = inputs(64, 48, 40, dtype)
    for rung in [-1, 9]:  # the registration is the same for every rung; the kernels are tested above
        torch.library.opcheck(torch.ops.matmul.matmul, (a, b, rung))
    out = torch.empty(64, 48, device="cuda", dtype=dtype)
    torch.library.opcheck(torch.ops.matmul.matmul_out, (a, b, out, -1))


# bf16 training: the two models round differently (our products add their terms in another order than cuBLAS's,
# then both round each output to bf16 once), and with 8-bit mantissas one flipped rounding is a 2^-9 relative step.
# The stated tolerance (an expectation, to be confirmed by the first GPU run): over 200 SGD steps on this small MLP the
# loss curves stay within 10 % (plus 0.01) of each other and the weights within 0.05.
BF16_TOLERANCE = {"rtol": 0.1, "atol": 0.01}


@pytest.mark.slow  # ~2,000 small launches: not under compute-sanitizer (make sanitize runs "gpu and not slow")
def test_mlp_trains_in_bf16_like_torch():
    from test_linear import mlp, train

    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 20, generator=g).to("cuda", torch.bfloat16)
    y = torch.sin(x[:, :3] * 2) + x[:, 3:6] ** 2
    ours, theirs = mlp(Linear, "cuda", torch.bfloat16), mlp(torch.nn.Linear, "cuda", torch.bfloat16)
    theirs.load_state_dict(ours.state_dict())
    ours_losses, theirs_losses = train(ours, x, y, 200), train(theirs, x, y, 200)
    assert ours_losses[-1] < 0.5 * ours_losses[0], "the MLP did not learn"
    torch.testing.assert_close(torch.tensor(ours_losses), torch.tensor(theirs_losses), **BF16_TOLERANCE)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        torch.testing.assert_close(p.float(), q.float(), rtol=0.05, atol=0.05, msg=lambda m, name=name: f"{name}: {m}")
