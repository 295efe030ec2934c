"""Every rung of the GPU ladder on awkward sizes: short rows (several to a block), rows of a block, rows over several
blocks (rung 4's two launches, rung 5's cluster), rows that start off a 16-byte boundary (a scalar head), strided and
empty inputs, more rows than one grid dimension holds, CUDA graphs. Outputs are poisoned first (the caching allocator
hands the op a block that was just filled with NaN), so an element no thread wrote shows.

The tests named test_path_* are the ones `make sanitize` runs under compute-sanitizer (at the `small` sizes)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from helpers import inputs, params, reference
from rowwise import RUNGS, describe, layer_norm, rms_norm, softmax

pytestmark = pytest.mark.gpu

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
SIZES = [1, 7, 128, 1000, 4097, 8192, 20000]  # 20000 float32: a forward over two blocks, a backward over five
TOL = {  # rtol, atol against float64 from the same rounded inputs
    torch.float32: (2e-5, 2e-6),
    torch.bfloat16: (2e-2, 1e-3),
    torch.float16: (3e-3, 1e-4),
    torch.float64: (1e-12, 1e-14),
}
# What one block holds (rowwise_kernels.h): a forward 1024 threads x 4 packs, a backward 1024 (softmax) or 512
# (norms) threads x 8 columns.
FORWARD_ELEMENTS = {torch.float32: 16384, torch.float64: 8192, torch.float16: 32768, torch.bfloat16: 32768}


def clusters() -> bool:
    return torch.cuda.get_device_capability()[0] >= 9


def skip_unless_runs(rung, dtype, n, op="softmax", backward=False):
    if rung == 2 and dtype == torch.float64:
        pytest.skip("rung 2 computes in float32 (a ValueError: test_ops.py)")
    if rung == 5 and not clusters():
        pytest.skip("rung 5 needs thread-block clusters (compute capability 9.0)")
    block = (1024 if op == "softmax" else 512) * 8 if backward else FORWARD_ELEMENTS[dtype]
    if rung == 3 and n > block:
        pytest.skip(f"rung 3 holds at most {block} elements a row here (a ValueError: test_ops.py)")


def poisoned(make, like: torch.Tensor):
    """make()'s result, computed right after a block of like's size was filled with NaN and freed: the caching
    allocator gives the op's output that block, so an element the kernels never write stays NaN."""
    junk = torch.full_like(like, float("nan"))
    del junk
    return make()


def sanitizer_subset(n, dtype, small):
    """Under compute-sanitizer (small), three row lengths (a short odd row, an odd row of a block, a row over
    several blocks) in float32 and bfloat16: every path, at a size the tools get through in a few minutes."""
    if small and (n not in (7, 4097, 20000) or dtype not in (torch.float32, torch.bfloat16)):
        pytest.skip("under compute-sanitizer: rows of 7, 4097 and 20000, float32 and bfloat16")


def rows_for(n, small):
    return max(1, min(96, (1 << 16 if small else 1 << 20) // max(n, 1)))


def forward(op, x, w, b, rung, eps=1e-5):
    if op == "softmax":
        return softmax(x, rung=rung), (x,)
    if op == "layer_norm":
        return layer_norm(x, w, b, eps, rung=rung), (x, w, b, eps)
    return rms_norm(x, w, eps, rung=rung), (x, w, eps)


def check_forward(op, x, rung):
    w, b = params(x.shape[-1], x.dtype, x.device)
    y, args = poisoned(lambda: forward(op, x, w, b, rung), x)
    rtol, atol = TOL[x.dtype]
    torch.testing.assert_close(
        y.double().cpu(), reference(op, *args), rtol=rtol, atol=atol * (1 if op == "softmax" else 4)
    )


def check_gradients(op, x, dy, rung):
    """Our gradients of x, the weight and the bias against torch's in float64 on the CPU, each over its largest
    value."""
    n = x.shape[-1]
    w, b = params(n, x.dtype, x.device)
    ours = [t.clone().requires_grad_() for t in (x, w, b)]
    theirs = [t.double().cpu().requires_grad_() for t in (x, w, b)]
    y, _ = forward(op, *ours, rung)
    poisoned(lambda: y.backward(dy), x)
    if op == "softmax":
        torch.softmax(theirs[0], -1).backward(dy.double().cpu())
    elif op == "layer_norm":
        F.layer_norm(theirs[0], (n,), theirs[1], theirs[2], 1e-5).backward(dy.double().cpu())
    else:
        F.rms_norm(theirs[0], (n,), theirs[1], 1e-5).backward(dy.double().cpu())
    tol = {torch.float32: 1e-4, torch.float64: 1e-10}.get(x.dtype, 3e-2)
    for got, want in zip(ours, theirs):
        if want.grad is None:
            continue
        # LayerNorm's dx over rows of one element is 0: both sides are rounding noise, so the scale has a floor.
        scale = max(want.grad.abs().max().item(), 1e-3)
        torch.testing.assert_close(got.grad.double().cpu() / scale, want.grad / scale, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("rung", sorted(RUNGS))
def test_path_softmax_forward_every_rung(rung, n, dtype, small):
    sanitizer_subset(n, dtype, small)
    skip_unless_runs(rung, dtype, n)
    check_forward("softmax", inputs((rows_for(n, small), n), dtype, "cuda", scale=3.0), rung)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("rung", [3, 4, 5])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_path_forward_and_backward_every_rung(op, rung, n, dtype, small):
    sanitizer_subset(n, dtype, small)
    skip_unless_runs(rung, dtype, n, op, backward=True)
    rows = rows_for(n, small)
    x = inputs((rows, n), dtype, "cuda", scale=2.0 if op == "softmax" else 1.0)
    check_forward(op, x, rung)
    check_gradients(op, x, inputs((rows, n), dtype, "cuda", seed=7), rung)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("rung", [4, 5])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_path_rows_longer_than_a_block(op, rung, dtype, small):
    if rung == 5 and not clusters():
        pytest.skip("rung 5 needs thread-block clusters (compute capability 9.0)")
    n = 70001 if small else 1 << 18  # odd: every row starts somewhere else against the 16-byte boundaries
    x = inputs((3, n), dtype, "cuda")
    assert "a row over" in describe(x, op, rung=rung)
    assert "a row over" in describe(x, op, backward=True, rung=rung)
    check_forward(op, x, rung)
    check_gradients(op, x, inputs((3, n), dtype, "cuda", seed=3), rung)


def test_rung_5_takes_the_two_launches_where_no_cluster_holds_the_row():
    if not clusters():
        pytest.skip("rung 5 needs thread-block clusters (compute capability 9.0)")
    x = torch.empty(2, 1 << 18, device="cuda")  # a float32 backward over 64 blocks of 512: more than 16 to a cluster
    assert describe(x, "layer_norm", backward=True, rung=5).startswith("rung 4: a row over two launches of 64 blocks")
    assert re.match(r"rung 5: a row over a cluster of (8|16) blocks", describe(x.bfloat16(), "layer_norm", rung=5))


@pytest.mark.parametrize("rung", [3, 4, 5])
@pytest.mark.parametrize("layout", ["offset", "transposed", "sliced"])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_path_unaligned_and_strided_inputs(op, layout, rung):
    if rung == 5 and not clusters():
        pytest.skip("rung 5 needs thread-block clusters (compute capability 9.0)")
    base = inputs((130, 1031), torch.bfloat16, "cuda")
    if layout == "offset":  # contiguous, 2 bytes past a 16-byte boundary: each row starts with a scalar head
        x = base.flatten()[1 : 1 + 129 * 1024].view(129, 1024)
    elif layout == "transposed":
        x = base.t()
    else:
        x = base[::2, 3:1000]
    check_forward(op, x, rung)
    check_gradients(op, x, inputs(tuple(x.shape), torch.bfloat16, "cuda", seed=5), rung)


@pytest.mark.parametrize("shape", [(0, 64), (5, 0), (0, 1 << 18)], ids=str)
@pytest.mark.parametrize("rung", [3, 4, 5])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_path_empty(op, rung, shape):
    if rung == 5 and not clusters():
        pytest.skip("rung 5 needs thread-block clusters (compute capability 9.0)")
    if rung == 3 and shape[1] > 16384:
        pytest.skip("rung 3 holds rows of at most a block")
    x = torch.randn(shape, device="cuda", requires_grad=True)
    w, b = (torch.randn(shape[1], device="cuda", requires_grad=True) for _ in range(2))
    y, _ = forward(op, x, w, b, rung)
    assert y.shape == x.shape
    y.backward(torch.ones_like(y))
    assert x.grad.shape == x.shape
    if op != "softmax":  # no rows: dweight (and LayerNorm's dbias) is a sum of nothing, zeros
        assert torch.equal(w.grad, torch.zeros_like(w))
    if op == "layer_norm":
        assert torch.equal(b.grad, torch.zeros_like(b))


@pytest.mark.parametrize("rung", [1, 2, 5])
def test_more_rows_than_one_grid_dimension(rung, small):
    if small:
        pytest.skip("a million rows under compute-sanitizer takes minutes")
    x = inputs((600_001, 8), torch.bfloat16, "cuda")  # rung 1: 600001 blocks; rung 5: 75001 blocks of 8 rows
    skip_unless_runs(rung, x.dtype, 8)
    check_forward("softmax", x, rung)
    check_forward("rms_norm", x, -1)


def test_the_default_is_the_top_rung():
    x = inputs((64, 4096), torch.bfloat16, "cuda")
    top = 5 if clusters() else 4
    assert describe(x, "softmax").startswith(f"rung {top}: 128 threads a row, 4 packs of 16 bytes a thread")
    assert torch.equal(softmax(x), softmax(x, rung=top))
    assert torch.equal(softmax(x), softmax(x, rung=3))  # a row that fits a block: rungs 3-5 run the same launch
    assert describe(x, "softmax", rung=1).startswith("rung 1: a block per row")
    assert describe(x, "softmax", rung=2).startswith("rung 2: a warp per row")


@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_cuda_graph_capture(op):
    x = inputs((256, 1000), torch.float32, "cuda").requires_grad_()
    w, b = (t.requires_grad_() for t in params(1000, torch.float32, "cuda"))
    dy = inputs((256, 1000), torch.float32, "cuda", seed=2)

    inputs_ = {"softmax": (x,), "layer_norm": (x, w, b), "rms_norm": (x, w)}[op]

    def step():
        y, _ = forward(op, x, w, b, -1)
        return [y, *torch.autograd.grad(y, inputs_, dy)]

    expected = [t.detach().clone() for t in step()]  # no graph of an eager step kept alive across the capture
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()  # warm-up on a side stream, as torch.cuda.graphs asks
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    graph.replay()
    torch.cuda.synchronize()
    for got, want in zip(captured, expected):
        assert torch.equal(got, want)
