"""What makes these ops numerically delicate: logits too large for exp, -inf and NaN entries, LayerNorm inputs with
a large mean, and gradients of the weights that must not depend on the order in which blocks finish."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import DEVICES, inputs, params, reference
from rowwise import RUNGS, describe, layer_norm, rms_norm, softmax

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_softmax_large_logits_do_not_overflow(device, dtype):
    x = inputs((8, 1000), dtype, device, scale=1e4)  # exp(1e4) is inf in any float type: the max must come off first
    for rung in RUNGS if device == "cuda" else (-1,):
        y = softmax(x, rung=rung)
        assert torch.isfinite(y).all()
        torch.testing.assert_close(y.cpu().double(), reference("softmax", x), rtol=0.02, atol=1e-6)
        torch.testing.assert_close(y.float().sum(-1).cpu(), torch.ones(8), rtol=0.01, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_infinities_and_nans_as_torch(device):
    rows = [
        [-INF, -INF, -INF, -INF],  # all -inf: NaN everywhere, as torch gives
        [-INF, 1.0, -INF, 2.0],  # -inf entries: exactly 0
        [1.0, INF, 2.0, 3.0],  # +inf: NaN (torch computes inf - inf)
        [1.0, NAN, 2.0, 3.0],  # NaN: NaN everywhere
        [0.0, 0.0, 0.0, 0.0],
    ]
    x = torch.tensor(rows, device=device)
    x = torch.cat([x, torch.full((5, 60), -INF, device=device)], 1)  # longer rows: more than one thread each
    expected = torch.softmax(x.cpu(), -1)
    for rung in RUNGS if device == "cuda" else (-1,):
        torch.testing.assert_close(softmax(x, rung=rung).cpu(), expected, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shift", [1e3, 1e4])
def test_layer_norm_with_a_large_mean(device, shift):
    """x = shift + noise in float32: the variance must come from (x - mean)^2, not E[x^2] - E[x]^2 (which loses the
    noise's digits: see the naive formula's error below)."""
    x = inputs((16, 4096), torch.float32, device, shift=shift)
    y = layer_norm(x, eps=1e-5)
    expected = reference("layer_norm", x, None, None, 1e-5)
    torch.testing.assert_close(y.cpu().double(), expected, rtol=1e-3, atol=2e-3)
    x64 = x.cpu().double()
    naive_var = (x.cpu() * x.cpu()).mean(-1) - x.cpu().mean(-1) ** 2  # the one-pass formula, in float32
    exact_var = x64.var(-1, unbiased=False)
    assert (naive_var.double() - exact_var).abs().max() > 0.05 * exact_var.max()  # the pitfall is real


@pytest.mark.gpu
@pytest.mark.parametrize("rung", [4, 5])
def test_layer_norm_with_a_large_mean_over_several_blocks(rung):
    """The same for rows over several blocks (rung 4, two launches; rung 5, a cluster): each block's two passes, then
    the blocks' (count, mean, M2) merged; the blocks' means differ little, so their merge must not cancel."""
    if rung == 5 and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    x = inputs((8, 40000), torch.float32, "cuda", shift=1e4)  # 3 blocks a row
    assert "a row over" in describe(x, "layer_norm", rung=rung)
    y, mean, rstd = torch.ops.rowwise.layer_norm(x, None, None, 1e-5, rung)
    x64 = x.cpu().double()
    torch.testing.assert_close(y.cpu().double(), reference("layer_norm", x, None, None, 1e-5), rtol=1e-3, atol=2e-3)
    torch.testing.assert_close(mean.cpu().double(), x64.mean(-1), rtol=1e-6, atol=0)
    torch.testing.assert_close(rstd.cpu().double(), 1 / (x64.var(-1, unbiased=False) + 1e-5).sqrt(), rtol=1e-4, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_saved_statistics(device):
    x = inputs((6, 500), torch.float32, device, shift=3.0)
    _, mean, rstd = torch.ops.rowwise.layer_norm(x, None, None, 1e-5)
    x64 = x.cpu().double()
    torch.testing.assert_close(mean.cpu().double(), x64.mean(-1), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(rstd.cpu().double(), 1 / (x64.var(-1, unbiased=False) + 1e-5).sqrt(), rtol=1e-5, atol=0)
    _, rstd = torch.ops.rowwise.rms_norm(x, None, 1e-6)
    torch.testing.assert_close(rstd.cpu().double(), 1 / ((x64 * x64).mean(-1) + 1e-6).sqrt(), rtol=1e-5, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("n", [1000, 4096, 20000])
def test_weight_gradients_have_the_same_bits_every_run(op, n, small):
    rows = 300 if small else 3000
    x = inputs((rows, n), torch.bfloat16, "cuda")
    w, b = params(n, torch.bfloat16, "cuda")
    dy = inputs((rows, n), torch.bfloat16, "cuda", seed=5)
    grads = []
    for _ in range(3):
        ws = [w.clone().requires_grad_(), b.clone().requires_grad_()]
        y = layer_norm(x, *ws) if op == "layer_norm" else rms_norm(x, ws[0], 1e-6)
        y.backward(dy)
        grads.append([t.grad.clone() for t in ws if t.grad is not None])
    for later in grads[1:]:
        for first, again in zip(grads[0], later):
            assert torch.equal(first, again), "dweight/dbias changed between two identical runs"


def test_one_pass_fp32_sum_is_why_rows_are_reduced_in_a_tree():
    """The thread sums of a row are combined pairwise (shuffles, then warps): error ~log n, not ~n."""
    rng = np.random.default_rng(0)
    v = rng.standard_normal(1 << 20).astype(np.float32) ** 2
    exact = float(np.sum(v.astype(np.float64)))
    sequential = float(np.cumsum(v, dtype=np.float32)[-1])
    tree = v
    while len(tree) > 1:
        tree = tree[0::2] + tree[1::2]
    assert abs(float(tree[0]) - exact) / exact < abs(sequential - exact) / exact
