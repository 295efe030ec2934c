"""Every kernel of the GPU ladder on awkward sizes: short rows (several per warp), rows of a block, long rows over a
cluster or two launches, odd n (an aligned body with a scalar head and tail per row), and the tuning knobs the bench
explores."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import inputs, params, reference
from rowwise import describe, layer_norm, rms_norm, softmax

CHAPTER = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.gpu

SIZES = [1, 7, 128, 1000, 1024, 4096, 4097, 12289, 32768]
TOL = {
    torch.float32: (2e-5, 2e-6),
    torch.bfloat16: (2e-2, 1e-3),
    torch.float16: (3e-3, 1e-4),
    torch.float64: (1e-12, 1e-14),
}


def check(op, x, version=0, tune=(), eps=1e-5):
    w, b = params(x.shape[-1], x.dtype, x.device)
    if op == "softmax":
        y, args = softmax(x, version=version, tune=tune), (x,)
    elif op == "layer_norm":
        y, args = layer_norm(x, w, b, eps, version=version, tune=tune), (x, w, b, eps)
    else:
        y, args = rms_norm(x, w, eps, version=version, tune=tune), (x, w, eps)
    rtol, atol = TOL[x.dtype]
    torch.testing.assert_close(
        y.double().cpu(), reference(op, *args), rtol=rtol, atol=atol * (4 if op != "softmax" else 1)
    )


def rows_for(n, small):
    return max(1, min(300, (1 << 20 if not small else 1 << 16) // max(n, 1)))


def fast_memory() -> bool:
    """Whether this GPU's memory moves more than 16 bytes per SM cycle (rowwise_kernels.cuh's device_fast_memory: the
    H200's 18.4, not the H100's 12.8), from the same device properties."""
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    if not all(hasattr(p, name) for name in ("memory_clock_rate", "memory_bus_width", "clock_rate")):
        pytest.skip("this torch's device properties lack the memory clock, bus width or SM clock")
    return 2 * p.memory_clock_rate * p.memory_bus_width / 8 / (p.multi_processor_count * p.clock_rate) > 16


def warp_threads(count: int, per_thread: int) -> int:
    """The fewest threads, in whole warps, that hold `count` items at `per_thread` a thread (rowwise_kernels.cuh's
    warp_threads: the planner's groups and blocks)."""
    return (-(-count // per_thread) + 31) // 32 * 32


def check_gradients(op, x, w, b, dy, version=0, tol=(1e-4, 1e-5)):
    """Our gradients of x, the weight and the bias against torch's in float64 on the CPU, each over its largest value
    (tol: rtol, atol)."""
    n = x.shape[-1]
    ours = [t.clone().requires_grad_() for t in (x, w, b)]
    theirs = [t.double().cpu().requires_grad_() for t in (x, w, b)]
    if op == "layer_norm":
        layer_norm(*ours, 1e-5, version=version).backward(dy)
        torch.nn.functional.layer_norm(theirs[0], (n,), theirs[1], theirs[2], 1e-5).backward(dy.double().cpu())
    else:
        rms_norm(ours[0], ours[1], 1e-5, version=version).backward(dy)
        torch.nn.functional.rms_norm(theirs[0], (n,), theirs[1], 1e-5).backward(dy.double().cpu())
    for got, want in zip(ours, theirs):
        if want.grad is None:
            continue
        scale = want.grad.abs().max().item()
        torch.testing.assert_close(got.grad.double().cpu() / scale, want.grad / scale, rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64], ids=str)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_auto(op, n, dtype, small):
    check(op, inputs((rows_for(n, small), n), dtype, "cuda"))


@pytest.mark.parametrize("version", [1, 2, 3, 5, 4])
@pytest.mark.parametrize("n", [7, 128, 1000, 4097, 8192])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_softmax_every_version(version, n, dtype, small):
    if version == 4 and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    check("softmax", inputs((rows_for(n, small), n), dtype, "cuda", scale=3.0), version)


@pytest.mark.parametrize("version", [3, 4, 5])
@pytest.mark.parametrize("n", [64, 1000, 4097, 8192])
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_norms_every_version_with_gradients(op, version, n, small):
    if version == 4 and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    rows = rows_for(n, small)
    x = inputs((rows, n), torch.float32, "cuda")
    check(op, x, version)
    w, b = params(n, torch.float32, "cuda")
    dy = inputs((rows, n), torch.float32, "cuda", seed=3)
    check_gradients(op, x, w, b, dy, version)


@pytest.mark.parametrize("version", [0, 3, 4, 5])
def test_softmax_backward_every_version(version, small):
    if version == 4 and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    x = inputs((64, 3001), torch.float32, "cuda", scale=2.0).requires_grad_()
    dy = inputs((64, 3001), torch.float32, "cuda", seed=4)
    softmax(x, version=version).backward(dy)
    x64 = x.detach().double().cpu().requires_grad_()
    torch.softmax(x64, -1).backward(dy.double().cpu())
    torch.testing.assert_close(x.grad.double().cpu(), x64.grad, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_rows_of_no_elements_every_version(op, version):
    """Rows of 0 elements, each version asked for by name: empty outputs and gradients, as torch gives (the planner
    once divided by zero here; test_ops.py asks it on the CPU)."""
    if version in (1, 2) and op != "softmax":
        pytest.skip("versions 1 and 2 are softmax forwards")
    if version == 4 and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    x = torch.empty(3, 0, device="cuda").requires_grad_()
    w, b = (torch.empty(0, device="cuda").requires_grad_() for _ in range(2))
    if op == "softmax":
        y, leaves = softmax(x, version=version), (x,)
    elif op == "layer_norm":
        y, leaves = layer_norm(x, w, b, version=version), (x, w, b)
    else:
        y, leaves = rms_norm(x, w, 1e-5, version=version), (x, w)
    assert y.shape == (3, 0)
    if version in (1, 2):
        return  # forward kernels only
    grads = torch.autograd.grad(y, leaves, torch.empty_like(y))
    assert [g.shape for g in grads] == [t.shape for t in leaves]


@pytest.mark.parametrize("version", [0, 5])  # 0: a cluster on sm_90; 5: the split, two launches
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_rows_longer_than_a_block(op, dtype, version, small):
    # small (the sanitizer's size): still over 3 * 16384 elements, so that bfloat16 takes its 8-pack kernels too
    n = (1 << 18) if not small else 3 * (1 << 14) + 8
    x = inputs((3, n), dtype, "cuda", scale=2.0)
    text = describe(x, op, version=version)
    # (bf16 rows of the small size fit L2 for version 6 in version 0's choice: reread_choice's own test)
    assert "8 packs" in text or text.startswith("reread: "), text
    check(op, x, version)


def poisoned_call(fn, like):
    """fn() with its first output allocated where NaN was just written: the caching allocator hands the block of a
    tensor freed a moment ago to the next request of its size, so an element the kernel leaves unwritten shows.
    Under compute-sanitizer the allocator caches nothing (PYTORCH_NO_CUDA_MEMORY_CACHING): memcheck checks there."""
    if os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1":
        return fn()
    torch.cuda.empty_cache()
    poison = torch.full_like(like, float("nan"))
    address = poison.data_ptr()
    del poison
    out = fn()
    first = out[0] if isinstance(out, tuple) else out
    assert first.data_ptr() == address, "the output did not get the poisoned block: the check would prove nothing"
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64], ids=str)
@pytest.mark.parametrize("n", [8, 1000, 4096, 12296, 32768])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_reread_every_dtype(op, n, dtype, small):
    """Version 6, a block per row walking it twice: rows of less than one pack a thread, of one step, of several, and
    with a last step partly past the row's end (12296); every element written (poisoned output), the saved mean and
    rstd against float64."""
    x = inputs((rows_for(n, small), n), dtype, "cuda", scale=3.0)
    w, b = params(n, dtype, "cuda")
    assert describe(x, op, version=6).startswith("reread: a ")
    check_reread(op, x, w, b)


def check_reread(op, x, w, b, tune=()):
    """Version 6 (with `tune`) against float64: every element written (poisoned output), the saved mean and rstd.
    Returns the op's outputs."""
    out = poisoned_call(lambda: _forward(op, x, w, b, 6, list(tune)), x)
    args = {"softmax": (), "layer_norm": (w, b, 1e-5), "rms_norm": (w, 1e-5)}[op]
    rtol, atol = TOL[x.dtype]
    expected = reference(op, x, *args)
    torch.testing.assert_close(out[0].double().cpu(), expected, rtol=rtol, atol=atol * (4 if op != "softmax" else 1))
    x64 = x.cpu().double()
    stat_rtol = 1e-5 if x.dtype != torch.float64 else 1e-12
    if op == "layer_norm":
        torch.testing.assert_close(out[1].cpu().double(), x64.mean(-1), rtol=stat_rtol, atol=stat_rtol)
        want = 1 / (x64.var(-1, unbiased=False) + 1e-5).sqrt()
        torch.testing.assert_close(out[2].cpu().double(), want, rtol=stat_rtol, atol=0)
    elif op == "rms_norm":
        want = 1 / ((x64 * x64).mean(-1) + 1e-5).sqrt()
        torch.testing.assert_close(out[1].cpu().double(), want, rtol=stat_rtol, atol=0)
    return out


@pytest.mark.parametrize("tune", [[0, 1, 0], [0, 2, 0], [1024, 1, 0, 1], [1024, 2, 0, 1], [1024, 4, 0, 1]])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_reread_steps_and_walking_blocks(op, dtype, tune):
    """Version 6 with 1 or 2 packs a thread a step (its kernels' U; 4 by default), and with one wave of blocks that
    walk the rows (tune's waves: 1) instead of a block a row: 300 rows, more than one wave of blocks of 1024 threads
    holds (two an SM at most)."""
    x = inputs((300, 12296), dtype, "cuda", scale=3.0)
    text = describe(x, op, version=6, tune=tune)
    assert f"{tune[1]} packs of 16 bytes per thread a step" in text, text
    assert text.endswith("300 blocks") == (len(tune) < 4), text
    check(op, x, 6, tune)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64], ids=str)
def test_reread_eight_packs_a_step_rms_norm_only(dtype, small):
    """RMSNorm's version 6 is also built for 8 packs a thread a step (fast_reread_choice's float32 rows of
    16385-32768, a row in one step): rows of a step and a half (a full step, then a partial one), of less than a
    step (threads with no pack), with blocks that walk the rows (waves: 1); the softmax, LayerNorm and RMSNorm over a
    cluster are not built for it: ValueError, not a launch."""
    for n, tune in ((12296, [256, 8, 0]), (24616, [1024, 8, 0]), (1000, [512, 8, 0]), (12296, [256, 8, 0, 1])):
        x = inputs((rows_for(n, small), n), dtype, "cuda", scale=3.0)
        w, b = params(n, dtype, "cuda")
        assert "8 packs of 16 bytes per thread a step" in describe(x, "rms_norm", version=6, tune=tune)
        check_reread("rms_norm", x, w, b, tune)
    x = inputs((4, 12296), dtype, "cuda")
    w, b = params(12296, dtype, "cuda")
    for op, tune in (("softmax", [256, 8, 0]), ("layer_norm", [256, 8, 0]), ("rms_norm", [256, 8, 3])):
        with pytest.raises(ValueError, match="cannot run this op"):
            _forward(op, x, w, b, 6, tune)


@pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9, reason="clusters need sm_90"
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("blocks", [3, 16])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_reread_over_a_cluster(op, blocks, dtype, small):
    """Version 6 with a row over a cluster of blocks (tune's blocks a row), each walking its segment twice: segments
    of one partial step, of several steps, rows of fewer packs than blocks (empty segments: 8 elements over 16
    blocks), a last segment shorter than the others (3 does not divide the packs); every element written, the
    statistics of the whole row (the blocks' parts merged in rank order) against float64, the same bits twice."""
    for n in (8, 12296) if small else (8, 12296, 1 << 18):
        rows = 5 if small else rows_for(n, small)  # under the sanitizers, few clusters
        x = inputs((rows, n), dtype, "cuda", scale=3.0) + 5.0  # a mean far from 0 for the merge
        w, b = params(n, dtype, "cuda")
        tune = [256, 0, blocks]
        assert describe(x, op, version=6, tune=tune).startswith(f"reread: a cluster of {blocks} 256-thread blocks")
        out = check_reread(op, x, w, b, tune)
        again = _forward(op, x, w, b, 6, tune)
        assert all(torch.equal(p, q) for p, q in zip(out, again)), "two runs gave different bits"


HELD_PLANS = [  # tune for version 6 with the row held in shared memory (64: HELD, 128: NEXT)
    [512, 2, 0, 0, 64],  # a block a row (held_choice's 16-bit rows of 48-80 KB)
    [256, 4, 0, 0, 64],  # several steps of 4 packs
    [256, 1, 0, 1, 192],  # blocks walking the rows, each slot taking the next row's pack as it is written
    [256, 2, 3, 1, 192],  # over a cluster of 3 (held_choice's long rows), the last segment shorter
    [128, 2, 16, 1, 192],  # over 16: rows of fewer packs than blocks leave segments empty
]


# A unit in the last place, relative (fp16: and its subnormal step, absolute); float32: a few units.
HELD_ULP = {torch.bfloat16: (2**-7, 0.0), torch.float16: (2**-10, 2**-24), torch.float32: (1e-5, 1e-30)}


@pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9, reason="clusters need sm_90"
)
@pytest.mark.parametrize("tune", HELD_PLANS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_reread_softmax_rows_held_in_shared_memory(tune, dtype, small):
    """Version 6's softmax with the row (a block's segment) copied once into shared memory and walked there twice
    (softmax_held_kernel): rows of a partial step, of several steps, a last step partly past the row's end, more rows
    than the grid's walkers (so that NEXT copies rows in), rows of -inf (all, or some); every element written
    (poisoned output), against float64 and against the same plan reading its row twice: within a unit in the last
    place, since the held kernel computes each exp as one FFMA and one ex2 (step_max_sum, SCALED)."""
    for n in (8, 1000, 12296) if small else (8, 1000, 12296, 32768):
        rows = 700 if n <= 1000 else 5 if small else 300  # 700 rows of 1000: more than a wave of walkers holds
        x = inputs((rows, n), dtype, "cuda", scale=3.0)
        x[min(1, rows - 1)] = float("-inf")
        x[-1, ::3] = float("-inf")
        text = describe(x, "softmax", version=6, tune=tune)
        assert "copying" in text and ("next row copied in" in text) == (tune[4] == 192), text
        got = poisoned_call(lambda x=x: softmax(x, version=6, tune=tune), x)
        want = softmax(x, version=6, tune=tune[:4] + [0])  # the same plan reading its row twice
        rtol, atol = HELD_ULP[dtype]
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
        finite = x.isfinite().any(-1)  # rows of all -inf: NaN, as torch's
        assert got[~finite].isnan().all()
        rtol, atol = TOL[dtype]
        torch.testing.assert_close(got[finite].double().cpu(), reference("softmax", x[finite]), rtol=rtol, atol=atol)


HELD_ROWS = [  # (dtype, n, blocks a row where held_choice takes the row: 1 a block of 512, C a cluster; 0 not)
    (torch.bfloat16, 16384, 0),  # 32 KB: measured a tie
    (torch.bfloat16, 24576, 1),  # 48 KB
    (torch.float16, 32768, 1),
    (torch.bfloat16, 40960, 1),  # 80 KB
    (torch.bfloat16, 40968, 0),  # past 80 KB
    (torch.bfloat16, 65536, 2),  # 128 KB: a block of 256 for each 64 KB
    (torch.float16, 1 << 17, 4),
    (torch.bfloat16, 1 << 18, 8),
    (torch.bfloat16, (1 << 18) + 8, 0),  # past 512 KB
    (torch.float32, 16384, 0),  # measured slower
    (torch.float32, 1 << 16, 0),  # 256 KB: not measured
    (torch.float32, 1 << 17, 8),  # 512 KB
    (torch.float32, 163840, 10),
    (torch.float32, 1 << 18, 16),  # 1 MB
    (torch.float32, (1 << 18) + 4, 0),
]


@pytest.mark.parametrize(("dtype", "n", "blocks"), HELD_ROWS, ids=str)
def test_softmax_forwards_hold_their_rows_in_shared_memory_where_the_memory_is_fast(dtype, n, blocks):
    """held_choice: where the memory is fast (the H200), version 0 holds 16-bit softmax forward rows of 48-80 KB in
    the shared memory of a block of 512 a row, and 16-bit rows of 128-512 KB and float32 rows of 512 KB-1 MB over a
    cluster (sm_90) of a block of 256 for each 64 KB, walking the rows with the next row copied in as each is
    written; every element written, against float64. Elsewhere, and for the backward, the norms, a tuned plan and
    rows not of 16-byte packs, the rows keep their other plans."""
    if not fast_memory() or (blocks > 1 and torch.cuda.get_device_capability()[0] < 9):
        blocks = 0
    x = inputs((3, n), dtype, "cuda", scale=3.0)
    text = describe(x, "softmax")
    if blocks == 1:
        assert text.startswith("reread: a 512-thread block per row, copying it into shared memory once"), text
        assert text.endswith("2 packs of 16 bytes per thread a step, 3 blocks"), text  # a block a row
    elif blocks:
        want = f"reread: a cluster of {blocks} 256-thread blocks per row, each copying its segment into shared memory"
        assert text.startswith(want) and "(the next row copied in as it writes)" in text, text
    else:
        assert "shared memory" not in text, text
    assert "shared memory" not in describe(x, "softmax", backward=True)
    assert "shared memory" not in describe(x, "softmax", tune=[0, 0, 0, 0, 16])  # tuned: the caller's plan
    assert "shared memory" not in describe(x, "layer_norm") and "shared memory" not in describe(x, "rms_norm")
    unaligned = torch.empty(3 * n + 1, device="cuda", dtype=dtype)[1:].view(3, n)
    assert "shared memory" not in describe(unaligned, "softmax")
    if blocks:
        y = poisoned_call(lambda: softmax(x), x)
        rtol, atol = TOL[dtype]
        torch.testing.assert_close(y.double().cpu(), reference("softmax", x), rtol=rtol, atol=atol)


def test_held_rows_that_do_not_fit_shared_memory_are_a_value_error():
    """HELD asks a block for its whole row (segment) in shared memory: where that is more than a block may have
    (float32 rows of 65544 in one block: 256 KB), float64 (not built), or the norms (not built), a ValueError
    naming the plan; the next launch runs. HELD on versions other than 6 is dropped from the plan."""
    x = torch.randn(3, 65544, device="cuda")
    with pytest.raises(ValueError, match=r"tune=\[512, 2, 0, 0, 64\] cannot run this op at this shape"):
        softmax(x, version=6, tune=[512, 2, 0, 0, 64])
    torch.testing.assert_close(softmax(x).double(), torch.softmax(x.double(), -1), rtol=2e-5, atol=2e-6)
    with pytest.raises(ValueError, match="cannot run this op"):
        softmax(x.double()[:, :1000], version=6, tune=[256, 2, 0, 0, 64])
    w, b = params(1000, torch.float32, "cuda")
    with pytest.raises(ValueError, match="cannot run this op"):
        layer_norm(x[:, :1000], w, b, 1e-5, version=6, tune=[256, 2, 0, 0, 64])
    with pytest.raises(ValueError, match="cannot run this op"):
        rms_norm(x[:, :1000], w, 1e-5, version=6, tune=[256, 2, 0, 0, 64])
    assert "copying" not in describe(x, "softmax", version=4, tune=[0, 0, 0, 1, 64])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64], ids=str)
def test_reread_layer_norm_built_for_its_block_size(dtype, small):
    """LayerNorm's version 6 in blocks of 512 or 1024 threads at 4 packs a step, with the weight and bias, runs the
    kernel built for that block size (layer_norm_built_for_block: every pack at a constant distance, the write walk's
    vectors loaded before its stores): rows of fewer packs than threads (8), of part of a step (1000), a step and a
    half (12296), whole steps (32768), with a block a row and with blocks that walk the rows (waves: 1), against
    float64 and with every element written. float64, other blocks and a missing bias take the run-time build."""
    built = dtype != torch.float64
    for n in (8, 1000, 12296) if small else (8, 1000, 12296, 32768):
        x = inputs((rows_for(n, small), n), dtype, "cuda", scale=3.0) + 4.0  # a mean far from 0
        w, b = params(n, dtype, "cuda")
        for tune in ([512, 4, 0], [1024, 4, 0], [1024, 4, 0, 1]):
            text = describe(x, "layer_norm", version=6, tune=tune)
            assert ("built for its block size" in text) == built, text
            check_reread("layer_norm", x, w, b, tune)
    x = inputs((4, 12296), dtype, "cuda")
    w, b = params(12296, dtype, "cuda")
    assert "built for" not in describe(x, "layer_norm", version=6, tune=[256, 4, 0])
    assert "built for" not in describe(x, "layer_norm", version=6, tune=[512, 2, 0])
    y = layer_norm(x, w, None, 1e-5, version=6, tune=[512, 4, 0])  # the run-time build: no bias
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(y.double().cpu(), reference("layer_norm", x, w, None, 1e-5), rtol=rtol, atol=4 * atol)


def test_reread_without_a_weight_with_gradients_and_tuned_blocks():
    x = inputs((33, 20000), torch.float32, "cuda").requires_grad_()
    w = params(20000, torch.float32, "cuda")[0].requires_grad_()
    dy = inputs((33, 20000), torch.float32, "cuda", seed=3)
    check("rms_norm", x.detach(), 6, [256, 0, 0])
    assert describe(x, "rms_norm", version=6, tune=[256, 0, 0]).startswith("reread: a 256-thread block")
    y = rms_norm(x.detach(), None, 1e-5, version=6)
    torch.testing.assert_close(y.double().cpu(), reference("rms_norm", x, None, 1e-5), rtol=2e-5, atol=1e-5)
    rms_norm(x, w, 1e-5, version=6).backward(dy)  # the backward is version 0's
    x64, w64 = (t.detach().double().cpu().requires_grad_() for t in (x, w))
    torch.nn.functional.rms_norm(x64, (20000,), w64, 1e-5).backward(dy.double().cpu())
    for got, want in ((x.grad, x64.grad), (w.grad, w64.grad)):
        scale = want.abs().max().item()
        torch.testing.assert_close(got.double().cpu() / scale, want / scale, rtol=1e-4, atol=1e-5)


def test_version_0_picks_version_6_where_the_rows_in_flight_fit_l2():
    """The planner's rule (reread_choice): forwards of 16-byte rows too long for one block's registers (4 packs a
    thread in blocks of up to 1024 threads for RMSNorm, 512 for the softmax and LayerNorm) take version 6 when the
    rows in flight fit a third of L2, in blocks of 512 where two an SM fit (where the memory is fast: half of L2),
    else of 1024 (the kernels take 40-64 registers: two blocks of 512 an SM, one of 1024), a block a row; 16-bit
    LayerNorm rows too long for that take it over a cluster (sm_90) of a block of 512 for each 64 KB, up to 8 (and,
    where the memory is fast, softmax rows of up to 512 KB in 16-bit types, float32 rows of 512 KB-1 MB in 8
    segments; there 16-bit rows take at most 4 blocks); the backward, a tuned plan and unaligned rows never do, and
    version 6 by name takes the same block.
    The norms' loads of x skip L1 in a block a row whose row and vectors (the weight, LayerNorm's bias) overflow the
    SM's shared memory (reread_skips_l1; RMSNorm in float32 only). The values it then computes:
    test_reread_every_dtype, test_reread_over_a_cluster (version 6 by name) and the long-row tests of version 0.
    Where the memory is fast (the H200), fast_reread_choice comes first: 16-bit rows that take more than half the
    op's whole-row limit (and float32 RMSNorm's and the softmax's) take version 6 in the block and packs a step
    measured there, where the row is a whole number of the block's steps (RMSNorm's: any row; its bf16 rows of whole
    4-pack steps take 4 packs, not 2; its float32 rows of 16385-32768 take 8 packs a step, in blocks of 512 up to
    24576, else one step of the fewest warps that hold the row; its float32 and bf16 rows of up to half the limit,
    one step of 4 packs: test_short_rms_norm_forward_rows_take_one_step_of_version_6...); before it,
    wide_row_choice keeps float32 softmax rows of 28673-32768 in registers (16 packs a thread), and held_choice
    holds the softmax's 16-bit rows of 48-80 KB, 128-512 KB and float32 rows of 512 KB-1 MB in shared memory
    (test_softmax_forwards_hold_their_rows_in_shared_memory_where_the_memory_is_fast)."""
    props = torch.cuda.get_device_properties(0)
    fast = fast_memory()
    shared = props.shared_memory_per_multiprocessor  # the rule's measure of L1 (L1 and shared memory share it)
    sms, budget = props.multi_processor_count, props.L2_cache_size // 3
    budget_512 = props.L2_cache_size // 2 if fast else budget  # two blocks of 512 an SM
    clusters = torch.cuda.get_device_capability()[0] >= 9
    # "half of L2": rows (a dtype and a length) that take blocks of 512 only because the memory is fast
    names = ("rms_norm", "layer_norm", "softmax", "over a cluster", "past L1", "fast memory", "half of L2", "wide")
    names += ("held", "built")
    taken = dict.fromkeys(names, 0)
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        size = torch.tensor([], dtype=dtype).element_size()
        for n in (8192, 12288, 16384, 24576, 32768, 65536, 1 << 17, 1 << 18, 1 << 19):
            x = torch.empty(2, n, device="cuda", dtype=dtype)
            row = n * size
            block = 512 if 2 * sms * row <= budget_512 else 1024 if sms * row <= budget else 0
            taken["half of L2"] += block == 512 and 2 * sms * row > budget
            for op, threads in (("rms_norm", 1024), ("layer_norm", 512), ("softmax", 512)):
                fits_registers = n <= threads * 4 * (16 // size)
                expected = not fits_registers and block > 0
                # fast_reread_choice's rows and plans: (threads, packs a step), or None
                measured = size == 2 or op != "layer_norm"
                fast_plan = None
                if fast and measured and fits_registers and n > threads * 2 * (16 // size):
                    fast_plan = (1024 if op == "rms_norm" and size == 4 else 512, 4 if op == "layer_norm" else 2)
                    if op == "rms_norm" and dtype == torch.bfloat16 and n % (512 * 4 * 8) == 0:
                        fast_plan = (512, 4)  # bf16 rows of whole 4-pack steps (the weight loaded before the stores)
                    if op != "rms_norm" and n % (fast_plan[0] * fast_plan[1] * (16 // size)):
                        fast_plan = None  # a last step that fills part of the block: registers (RMSNorm: version 6)
                if fast and op == "rms_norm" and size == 4 and threads * 4 * 4 < n <= threads * 8 * 4:
                    # float32 rows past the limit, 8 packs a step: blocks of 512 up to 1.5 steps, else one step
                    fast_plan = 512 if n <= 24576 else warp_threads(n, 8 * 4), 8
                    expected = False  # not reread_choice's plan
                if fast and op == "rms_norm" and dtype != torch.float16 and n <= threads * 2 * (16 // size):
                    # RMSNorm's rows of up to half the limit: one step of 4 packs in the fewest warps that hold them
                    fast_plan = warp_threads(n // (16 // size), 4), 4
                taken["fast memory"] += fast_plan is not None
                segments = min(-(-row // 65536), 4 if fast and size == 2 else 8)  # fast: 16-bit rows at most 4
                over = clusters and not fits_registers and block == 0
                if op == "softmax":  # where the memory is fast: 16-bit rows of up to 512 KB, float32 of 512 KB-1 MB
                    over = over and fast and (row <= 8 * 65536 if size == 2 else 8 * 65536 < row <= 8 * 2 * 65536)
                else:
                    over = over and op == "layer_norm" and size == 2 and row <= 8 * 65536
                # wide_row_choice, first: float32 softmax rows of a block of 480-512 threads at 16 packs a thread
                wide = fast and op == "softmax" and size == 4 and 448 * 64 < n <= 512 * 64
                # held_choice, first: the softmax's rows held in shared memory, a block a row or over a cluster
                k = 1024
                held_block = fast and op == "softmax" and size == 2 and 48 * k <= row <= 80 * k
                long = 128 * k <= row <= 512 * k if size == 2 else 512 * k <= row <= 1024 * k
                held_cluster = fast and clusters and op == "softmax" and long
                if held_block or held_cluster:
                    fast_plan, over = None, False
                expected = expected and not wide and not held_block and not held_cluster
                taken["held"] += held_block or held_cluster
                taken[op] += expected
                taken["over a cluster"] += over
                taken["wide"] += wide
                text = describe(x, op)
                reread = expected or over or fast_plan is not None or held_block or held_cluster
                assert text.startswith("reread: ") == reread, (op, dtype, n, text)
                # LayerNorm's block a row of 512 or 1024 threads at 4 packs a step: its build for that block size
                built = op == "layer_norm" and re.match(r"reread: a (512|1024)-thread block per row walks", text)
                built = bool(built) and "4 packs of 16 bytes per thread a step" in text
                assert ("built for its block size" in text) == built, text
                taken["built"] += built
                if held_block:
                    assert text.startswith("reread: a 512-thread block per row, copying it into shared"), text
                if held_cluster:
                    want = f"reread: a cluster of {-(-row // 65536)} 256-thread blocks per row, each copying"
                    assert text.startswith(want), text
                if wide:
                    assert text.startswith("registers: 512 threads per row, 16 packs of 16 bytes"), text
                if fast_plan is not None:
                    want = f"reread: a {fast_plan[0]}-thread block per row"
                    assert text.startswith(want) and f"{fast_plan[1]} packs of 16 bytes per thread a step" in text, text
                    assert text.endswith(f", {x.shape[0]} blocks"), text
                    check(op, torch.randn_like(x))
                if expected:
                    assert text.startswith(f"reread: a {block}-thread block"), (op, dtype, n, text)
                    assert text.endswith(f", {x.shape[0]} blocks"), text  # a block a row
                    # the weight and LayerNorm's bias; RMSNorm in float32 only
                    vectors = {"layer_norm": 2, "rms_norm": 1 if size == 4 else 0, "softmax": 0}[op]
                    skips = vectors > 0 and (1 + vectors) * row > shared
                    assert ("x past L1" in text) == skips, (op, dtype, n, text)
                    taken["past L1"] += skips
                if over:
                    assert text.startswith(f"reread: a cluster of {segments} 512-thread blocks"), (op, dtype, n, text)
                    assert text.endswith(f", {x.shape[0] * segments} blocks"), text  # two rows: a cluster each
                assert describe(x, op, version=6).startswith(f"reread: a {block or 1024}-thread block")
                assert not describe(x, op, backward=True).startswith("reread: ")
                assert not describe(x, op, tune=[0, 0, 0, 0, 16]).startswith("reread: ")  # tuned: the caller's
            unaligned = torch.empty(2 * n + 1, device="cuda", dtype=dtype)[1:].view(2, n)
            assert not describe(unaligned, "rms_norm").startswith("reread: ")
            assert not describe(unaligned, "layer_norm").startswith("reread: ")
            assert not describe(unaligned, "softmax").startswith("reread: ")
    if props.L2_cache_size >= 48 * 2**20 and sms <= 132:  # an H100: the rule is not idle
        # (where the memory is fast, held_choice takes the softmax's 16-bit rows of 24576 and 32768 first)
        assert taken["rms_norm"] >= 2 and taken["layer_norm"] >= 4 and taken["softmax"] >= (3 if fast else 4), taken
        assert taken["over a cluster"] >= 4, taken  # bf16 and fp16 rows of 2^17 and 2^18
        assert taken["past L1"] >= 2, taken  # float32 rows of 24576 and 32768
    if fast and clusters:  # 16-bit LayerNorm's rows of 2^17 and 2^18 (the softmax's: held in shared memory)
        assert taken["over a cluster"] >= 4, taken
        # a block a row: 16-bit rows of 24576 and 32768; over a cluster: 16-bit 65536-2^18, float32 2^17 and 2^18
        assert taken["held"] == 4 + 6 + 2, taken
    if fast:  # 16-bit 16384 for the softmax and LayerNorm, 24576 and 32768 for RMSNorm; float32 RMSNorm 12288
        # (1.5 steps), 16384, 24576 and 32768, the softmax 8192; RMSNorm's one step: float32 8192, bf16 8192-16384
        assert taken["fast memory"] == 17, taken
        assert taken["half of L2"] >= 1, taken  # float32 rows of 24576 (96 KB): blocks of 512
        assert taken["wide"] == 1, taken  # the float32 softmax's rows of 32768
        assert taken["built"] >= 4, taken  # LayerNorm's rows of 16384-32768 (float32), 32768 (16-bit)


@pytest.mark.parametrize("tune", [[128, 2, 0], [512, 4, 0], [0, 0, 3], [0, 0, 3, 1], [0, 0, 3, 1000], [256, 2, 0, 1]])
def test_tuning_knobs(tune):
    x = inputs((50, 5000), torch.bfloat16, "cuda")
    check("softmax", x, 4 if tune[2] else 0, tune)
    check("layer_norm", x, 5 if tune[2] else 0, tune)


def test_a_tuned_launch_that_cannot_run_is_a_value_error():
    x = torch.randn(4, 1 << 16, device="cuda")
    with pytest.raises(ValueError, match=r"tune=\[0, 4, 2\] cannot run this op at this shape"):
        softmax(x, version=4, tune=[0, 4, 2])  # 2 blocks of at most 512 threads x 16 floats: 16384 < 65536
    softmax(x)  # and nothing is left behind for the next launch's error check


def _forward(op, x, w, b, version, tune):
    if op == "softmax":
        return (torch.ops.rowwise.softmax(x, version, tune),)
    if op == "layer_norm":
        return torch.ops.rowwise.layer_norm(x, w, b, 1e-5, version, tune)
    return torch.ops.rowwise.rms_norm(x, w, 1e-5, version, tune)


def _backward(op, y, dy, x, w, stats, version, tune):
    if op == "softmax":
        return (torch.ops.rowwise.softmax_backward(y, dy, version, tune),)
    if op == "layer_norm":
        return torch.ops.rowwise.layer_norm_backward(dy, x, w, stats[1], stats[2], [True, True], version, tune)
    return torch.ops.rowwise.rms_norm_backward(dy, x, w, stats[1], True, version, tune)


@pytest.mark.parametrize("flags", [1, 2, 4, 6, 8, 15])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_experimental_switches_keep_the_bits(op, dtype, flags):
    """tune's 5th number (rowwise.h, ROWWISE_FLAG_*): the same bits as the kernels without the switches (16:
    ROWWISE_FLAG_NONE), forward and backward, in versions 4 and 5, with blocks walking many rows (waves=1) and one
    row each (waves=1000)."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    n = 40000  # 3 blocks a row in bf16 (4 packs of 8), 5 in float32
    x = inputs((300, n), dtype, "cuda", scale=2.0)
    w, b = params(n, dtype, "cuda")
    dy = inputs((300, n), dtype, "cuda", seed=3)
    for version in (4, 5):
        for waves in (1, 1000):
            plain, switched = [0, 0, 0, waves, 16], [0, 0, 0, waves, flags]  # 16: ROWWISE_FLAG_NONE
            want = _forward(op, x, w, b, version, plain)
            got = _forward(op, x, w, b, version, switched)
            for g, e in zip(got, want):
                torch.testing.assert_close(g, e, rtol=0, atol=0)
            assert "switches:" in describe(x, op, version=version, tune=switched)
            assert "switches:" not in describe(x, op, version=version, tune=plain)
            stats = want  # y (the softmax backward's input), then mean and rstd or rstd
            # the same blocks a row both ways: the switched backward's own plan may take others (bf16 softmax rows
            # of 40000: 5 blocks of 512, softmax_run)
            text = describe(x, op, backward=True, version=version, tune=switched)
            blocks = int(re.search(r"(\d+) blocks per row", text).group(1))
            plain, switched = [0, 0, blocks, waves, 16], [0, 0, blocks, waves, flags]
            want = _backward(op, stats[0], dy, x, w, stats, version, plain)
            got = _backward(op, stats[0], dy, x, w, stats, version, switched)
            torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)  # dx: the same bits
            tol = 1e-2 if dtype == torch.bfloat16 else 1e-5  # one bf16 rounding of the float sums
            for g, e in zip(got[1:], want[1:]):  # dweight, dbias: sums over grids that may differ in size
                torch.testing.assert_close(g, e, rtol=tol, atol=tol * e.abs().max().item())


@pytest.mark.parametrize("flags", [32, 36, 39, 47])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_held_weight_and_bias_keep_the_bits(op, dtype, flags):
    """HOLD_PARAMS (32): forwards of 8 packs a thread read the weight and bias from shared memory, alone or with
    staged rows (LayerNorm's then in one set of slots), with and without each vector: the same bits as the same
    kernels without a switch (8: ROWWISE_FLAG_REBUILT alone), in versions 4 (cluster) and 5 (split), walking rows
    (waves=1) or one row a block; the last block's segment is shorter than the others."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    S = 4 if dtype == torch.float32 else 8
    n = 7 * 512 * 8 * S - 40 * S  # 7 blocks of 512 threads x 8 packs a row, the last 5 packs short
    x = inputs((37, n), dtype, "cuda", scale=2.0)
    w, b = params(n, dtype, "cuda")
    for weight, bias in ((w, b), (None, b), (w, None), (None, None)):
        for version in (4, 5):
            for waves in (1, 1000):
                plain, held = [512, 8, 7, waves, 8], [512, 8, 7, waves, flags]  # 8: the same kernels, no switch
                text = describe(x, op, version=version, tune=held)
                assert "held weight" in text, text
                if op == "layer_norm" and flags & 2:  # two sets of staged rows and both vectors: over 227 KB
                    assert "held weight and bias" in text and "staged rows (one set)" in text, text
                want = _forward(op, x, weight, bias, version, plain)
                got = _forward(op, x, weight, bias, version, held)
                for g, e in zip(got, want):
                    torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_shared_memory_allowance_is_never_lowered():
    """A kernel's dynamic shared memory allowance is raised for a large plan and must stay raised: lowered for a
    smaller plan of the same kernel, a later launch of the large size (remembered as allowed) failed with
    cudaErrorInvalidConfiguration. In a fresh process, so that no earlier test has launched these kernels."""
    script = """
import sys, torch
sys.path.insert(0, "."); sys.path.insert(0, "../../common")
from rowwise import describe, softmax
for n in (16384, 65536, 1 << 17):  # the 8-pack float32 forward: 128 KB, 64 KB, 128 KB of staged rows a block
    x = torch.randn(2, n, device="cuda")
    describe(x, "softmax", version=4)
    torch.testing.assert_close(softmax(x, version=4).double(), torch.softmax(x.double(), -1), rtol=2e-5, atol=2e-6)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=CHAPTER, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def test_describe_names_the_launch():
    x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
    assert describe(x, "softmax").startswith("registers: ")
    # RMSNorm's forward keeps rows of up to 1024 threads x 4 packs in one block's registers (measured faster than a
    # cluster there; the softmax and LayerNorm measured slower: rowwise_kernels.cuh, kMaxWholeThreads); where the
    # memory is fast, rows that long take version 6 (fast_reread_choice, its own test)
    long = torch.empty(2, 32768, device="cuda", dtype=torch.bfloat16)
    fast = fast_memory()
    for dtype, n in ((torch.bfloat16, 32768), (torch.float16, 32768), (torch.float32, 16384)):
        rows = long[:, :n].to(dtype)
        whole = "reread: " if fast else "registers: 1024 threads per row"
        assert describe(rows, "rms_norm").startswith(whole), describe(rows, "rms_norm")
        assert describe(rows, "rms_norm", backward=True).startswith(("cluster: ", "registers: 512 threads"))
        # over blocks, or version 6 where the rows in flight fit L2 (reread_choice, its own test)
        assert describe(rows, "softmax").startswith(("cluster: ", "split: ", "reread: ")), describe(rows, "softmax")
        text = describe(rows, "layer_norm")
        assert text.startswith(("cluster: ", "split: ", "reread: ")), text
    assert not describe(long.float(), "rms_norm").startswith("registers: ")  # 2048 threads at 4 packs
    # Odd rows (an aligned body: version 6 cannot take them) stay whole in up to 1024 threads for every op's forward:
    # over a cluster they ran at 29-50 % of the copy on the H100 (rowwise_kernels.cuh, shape_plan).
    for dtype, n in ((torch.bfloat16, 32769), (torch.float16, 32769), (torch.float32, 16385)):
        odd = torch.randn(3, n, device="cuda", dtype=dtype)
        for op in ("softmax", "layer_norm", "rms_norm"):
            assert describe(odd, op).startswith("registers: 1024 threads per row"), describe(odd, op)
            check(op, odd)
    # rows of 2^18: version 6 over a cluster where the memory is fast, held in shared memory, a block of 256 for each
    # 64 KB (held_choice, its own test)
    for dtype, blocks in ((torch.float32, 16), (torch.bfloat16, 8)):
        text = describe(torch.randn(2, 1 << 18, device="cuda", dtype=dtype), "softmax")
        assert text.startswith(f"reread: a cluster of {blocks} 256-thread" if fast else "cluster: "), text
    assert describe(x, "softmax", version=5).startswith("split: ")
    assert describe(x, "softmax", version=2).startswith("warp online")
    odd = torch.randn(16, 4097, device="cuda", dtype=torch.bfloat16)
    assert "16-byte boundary" in describe(odd, "softmax")
    assert "16-byte boundary" in describe(odd, "layer_norm", backward=True)
    # LayerNorm's forward of odd rows that span warps takes a block a row: its two barriers a row held the rows of a
    # block of 256 to one pace, 3-4 % slower on the H100 (norm_run). Aligned rows and the other ops keep 256.
    assert "128 threads per row" in describe(odd, "layer_norm") and "128-thread blocks" in describe(odd, "layer_norm")
    assert "256-thread blocks" in describe(odd, "layer_norm", tune=(256, 0, 0))
    assert "256-thread blocks" in describe(odd, "rms_norm")
    # (aligned bf16 rows: a block a row where the memory is fast, test_whole_row_norm_forwards_take_a_block_a_row...)
    aligned = "128-thread blocks" if fast else "256-thread blocks"
    assert aligned in describe(odd[:, :4096].contiguous(), "layer_norm")
    check("layer_norm", odd)
    assert "single elements" in describe(torch.randn(16, 7, device="cuda", dtype=torch.bfloat16), "softmax")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm"])
def test_forwards_built_for_a_row_length_match_the_others(op, dtype):
    """Rows that fill their group exactly take a forward built for their length (pick_fixed): LayerNorm's in every
    type, the softmax's in 16-bit types. It does the same arithmetic in the same order as the kernel for any length,
    which tune=(256, 0, 0) runs with the same threads a row (in blocks of 256, where the kernel built for n may run a
    block a row: test_whole_row_norm_forwards_take_a_block_a_row_where_the_memory_is_fast). Both must give the same
    bits (LayerNorm: y, mean, rstd, with and without the weight and bias), for row counts that leave a block's last
    row groups empty; and the results must match float64. RMSNorm, the float32 softmax and the backwards have none."""
    built = op == "layer_norm" or dtype != torch.float32
    fixed = 0
    for n in (512, 1024, 2048, 4096, 8192, 1032):
        for rows in (1, 13):
            x = inputs((rows, n), dtype, "cuda", seed=n + rows, scale=2.0, shift=3.0)
            text, plain = describe(x, op), describe(x, op, tune=(256, 0, 0))
            others = [plain, describe(x, "rms_norm"), describe(x, op, backward=True)]
            assert all("built for this row length" not in t for t in others), others
            fixed += "built for this row length" in text
            if op == "softmax":
                # (float32 rows of 8192 where the memory is fast take version 6, fast_reread_choice: other sums)
                if not text.startswith("reread: "):
                    assert torch.equal(softmax(x), softmax(x, tune=(256, 0, 0))), (n, rows, text)
            else:
                w, b = params(n, dtype, "cuda")
                for weight, bias in ((w, b), (None, None), (w, None)):
                    got = torch.ops.rowwise.layer_norm(x, weight, bias, 1e-5, 0, [])
                    want = torch.ops.rowwise.layer_norm(x, weight, bias, 1e-5, 0, [256, 0, 0])
                    for g, r in zip(got, want):
                        assert torch.equal(g, r), (n, rows, text)
            check(op, x)
        if n == 4096:  # 128 threads a row in 16-bit types, 256 in float32
            assert ("built for this row length" in text) == built, text
    # 1024 ... 8192 in 16-bit types, 512 ... 4096 in float32; two row counts each
    assert fixed == (2 * 4 if built else 0), fixed


BLOCK_A_ROW = [  # (op, dtype, n, threads a row, whether it takes a block a row where the memory is fast): norm_run
    ("layer_norm", torch.float32, 1024, 64, True),
    ("layer_norm", torch.float32, 4096, 256, True),  # a block a row already
    ("layer_norm", torch.bfloat16, 1024, 32, True),
    ("layer_norm", torch.bfloat16, 4096, 128, True),
    ("layer_norm", torch.bfloat16, 1032, 64, True),  # not a kernel built for its length
    ("rms_norm", torch.float32, 768, 64, True),  # (rows of 1024 or more: version 6, a test of their own)
    ("layer_norm", torch.float16, 4096, 128, False),  # not measured
    ("layer_norm", torch.float32, 64, 4, False),  # less than a warp a row
]


@pytest.mark.parametrize(("op", "dtype", "n", "group", "takes"), BLOCK_A_ROW, ids=str)
def test_whole_row_norm_forwards_take_a_block_a_row_where_the_memory_is_fast(op, dtype, n, group, takes):
    """Where the memory is fast (the H200), LayerNorm's forward of whole rows of 16-byte packs (bf16, float32) and
    float32 RMSNorm's of at most 64 threads a row (and under 1024 elements) run a block per row, not blocks of 256
    holding several rows (norm_run); LayerNorm's rows that fill their group exactly still take the kernel built for
    their length. Elsewhere, and for the other types, blocks of 256. The outputs have the same bits as the blocks of
    256 (each row's arithmetic is the same) and match float64, for row counts that leave a block of 256's last rows
    empty."""
    fast = fast_memory()
    rows = 37
    x = inputs((rows, n), dtype, "cuda", seed=n, scale=2.0, shift=3.0)
    text = describe(x, op)
    block = group if fast and takes else 256
    if op == "rms_norm" and not fast:  # the H100's RMSNorm rule: 2 packs a thread up to 256 threads a row (norm_run)
        group = warp_threads(n, 2 * 16 // x.element_size())
    assert text.startswith(f"registers: {group} threads per row") and f", {block}-thread blocks" in text, text
    built = op == "layer_norm" and n in (1024, 4096)
    assert ("built for this row length" in text) == built, text
    if op == "layer_norm":
        w, b = params(n, dtype, "cuda")
        got = torch.ops.rowwise.layer_norm(x, w, b, 1e-5, 0, [])
        want = torch.ops.rowwise.layer_norm(x, w, b, 1e-5, 0, [256, 0, 0])
    else:
        w, _ = params(n, dtype, "cuda")
        got = torch.ops.rowwise.rms_norm(x, w, 1e-5, 0, [])
        want = torch.ops.rowwise.rms_norm(x, w, 1e-5, 0, [256, 0, 0])
    for g, r in zip(got, want):
        assert torch.equal(g, r), text
    check(op, x)
    assert ", 256-thread blocks" in describe(x, op, tune=(256, 0, 0))  # tune still rules


SHORT_RMS = [  # (dtype, n, threads of version 6's block where the memory is fast, or 0: the rows' other plan)
    (torch.float32, 1024, 64),
    (torch.float32, 1028, 96),  # 257 packs: a step of 384 packs' room, part of the last warp idle
    (torch.float32, 4096, 256),
    (torch.float32, 8192, 512),  # half the whole-row limit
    (torch.float32, 1020, 0),  # under 1024 elements: not measured
    (torch.float32, 512, 0),  # 2 packs a thread in blocks of 64 (norm_run)
    (torch.bfloat16, 1024, 32),
    (torch.bfloat16, 4096, 128),
    (torch.bfloat16, 16384, 512),
    (torch.float16, 4096, 0),  # not measured
]


@pytest.mark.parametrize(("dtype", "n", "threads"), SHORT_RMS, ids=str)
def test_short_rms_norm_forward_rows_take_one_step_of_version_6_where_the_memory_is_fast(dtype, n, threads):
    """Where the memory is fast (the H200), RMSNorm's forward of float32 and bf16 rows of 16-byte packs from 1024
    elements to half its whole-row limit takes version 6 in one step of 4 packs a thread, a block of the fewest warps
    that hold the row (fast_reread_choice): x read twice, not held in registers. Elsewhere, and for the other rows,
    types and ops, the rows' other plan; tune still rules. Every element of y is written and matches float64, over
    row counts that are not a multiple of anything, and the backward is version 0's."""
    if not fast_memory():
        threads = 0
    rows = 37
    x = inputs((rows, n), dtype, "cuda", seed=n, scale=2.0, shift=1.0)
    text = describe(x, "rms_norm")
    if threads:
        assert text.startswith(f"reread: a {threads}-thread block per row"), text
        assert "4 packs of 16 bytes per thread a step" in text and text.endswith(f", {rows} blocks"), text
    else:
        assert not text.startswith("reread: "), text
    if n <= 4096:  # (longer rows of LayerNorm and the softmax have rules of their own)
        assert not describe(x, "layer_norm").startswith("reread: ") and not describe(x, "softmax").startswith("reread")
    assert not describe(x, "rms_norm", backward=True).startswith("reread: ")
    assert describe(x, "rms_norm", tune=(256, 0, 0)).startswith("registers: ")  # the caller's plan
    w, b = params(n, dtype, "cuda")
    y = poisoned_call(lambda: rms_norm(x, w, 1e-5), x)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(y.double().cpu(), reference("rms_norm", x, w, 1e-5), rtol=rtol, atol=atol * 4)
    dy = inputs((rows, n), dtype, "cuda", seed=n + 1)
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    check_gradients("rms_norm", x, w, b, dy, tol=(tol, tol))


@pytest.mark.parametrize("op", ["rms_norm", "layer_norm"])
def test_bf16_norm_backwards_take_blocks_of_128_where_the_memory_is_fast(op):
    """The bf16 norms' backward of whole rows of 16-byte packs runs in blocks of 128 threads, or a row a block where a
    row takes more, where the memory is fast (norm_run; the H200), and in blocks of 512 elsewhere; float32 and
    float16 keep 512 on both. The gradients match float64 either way."""
    fast = fast_memory()
    for n, group in ((512, 32), (1024, 64), (4096, 256), (8192, 512)):
        x = torch.empty(64, n, device="cuda", dtype=torch.bfloat16)
        text = describe(x, op, backward=True)
        block = max(group, 128) if fast else 512
        assert f"{group} threads per row" in text and f", {block}-thread blocks" in text, (n, text)
        for other in (torch.float16, torch.float32) if n <= 4096 else (torch.float16,):  # float32 8192: a cluster
            assert ", 512-thread blocks" in describe(x.to(other), op, backward=True), (n, other)
    for n in (1024, 4096):
        rows = 37  # a last block of 128 threads (two rows of 64) half full
        x = inputs((rows, n), torch.bfloat16, "cuda")
        w, b = params(n, torch.bfloat16, "cuda")
        dy = inputs((rows, n), torch.bfloat16, "cuda", seed=3)
        check_gradients(op, x, w, b, dy, tol=(2e-2, 2e-2))


def test_odd_rows_take_the_weights_table_where_it_pays():
    """The norms' backward of odd 16-bit rows, many of them, reads the weight from a table of shifted copies (one
    aligned read a pack); few rows, float32 and the forwards shift the weight's packs in registers. The gradients
    of both ways are checked by the tests with gradients (rows from 15 to 3000)."""
    for op in ("layer_norm", "rms_norm"):
        many = torch.empty(64, 4097, device="cuda", dtype=torch.bfloat16)
        assert "shifted copies" in describe(many, op, backward=True)
        assert "shifted copies" in describe(many.half(), op, backward=True)
        assert "shifted copies" not in describe(many, op)
        assert "shifted copies" not in describe(many[:63], op, backward=True)
        assert "shifted copies" not in describe(many.float(), op, backward=True)
        assert "shifted copies" not in describe(many[:, :4096], op, backward=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_long_rows_take_the_switches_by_default(op, dtype):
    """Rows over a cluster take the mailbox, the L2 prefetch of the next row (the norms, forward and backward) and
    the staged next row (forwards: the softmax's, RMSNorm's up to 64 KB of staged rows a block or beside its held
    weight, LayerNorm's in blocks of 512), and the held weight and bias (norm forwards of 8 packs a thread: RMSNorm,
    float32 LayerNorm), unless tune says otherwise, where kernels are built for them (bfloat16, float32); float16
    runs without them. Forwards of 2^18 take 8 packs a thread in float32 and bfloat16; backward rows of 32768 take 16
    blocks a row in the float32 norms and in bfloat16 RMSNorm, and in bfloat16 LayerNorm where the memory is fast
    (CappedBackward), the others 8. (Forward rows of 65536: 16-bit rows of 32768 fit one block of 1024 threads.)"""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    x = torch.empty(2, 32768, device="cuda", dtype=dtype)
    built = dtype != torch.float16
    for backward in (False, True):
        text = describe(x if backward else torch.empty(2, 65536, device="cuda", dtype=dtype), op, backward=backward)
        if text.startswith("reread: ") and not backward:
            continue  # 16-bit rows of 65536 fit L2 for version 6 (reread_choice, its own test)
        assert text.startswith("cluster:"), text
        assert ("mailbox" in text) == built, text
        if op != "softmax":
            assert ("L2 prefetch" in text) == built, text
        if not backward and op != "layer_norm":  # LayerNorm stages rows in blocks of 512 only (2^18, below)
            assert ("staged rows" in text) == built, text
        if backward or op == "layer_norm":
            assert "staged rows" not in text, text
        if backward:
            capped_bf16 = op == "rms_norm" or fast_memory()
            sixteen = op != "softmax" and (dtype == torch.float32 or (dtype == torch.bfloat16 and capped_bf16))
            assert f"{16 if sixteen else 8} blocks per row" in text, text
    long = torch.empty(2, 1 << 18, device="cuda", dtype=dtype)
    text = describe(long, op, version=4)  # (version 0 takes 16-bit LayerNorm's rows of 2^18 to version 6's cluster)
    assert ("8 packs" in text) == built, text  # float32 and bfloat16 forwards over blocks of 2^18: 8 packs a thread
    assert ("staged rows" in text) == built, text  # RMSNorm's beside its held weight, LayerNorm's in one set
    held = built and op != "softmax" and (op == "rms_norm" or dtype == torch.float32)  # bf16 LayerNorm: version 6
    assert ("held weight" in text) == held, text
    if held and op == "layer_norm":
        assert "held weight and bias" in text and "staged rows (one set)" in text, text


@pytest.mark.parametrize(
    "op, dtype, n, packs, fast_packs",
    [
        ("rms_norm", torch.bfloat16, 4096, 2, 0),  # 256 threads a row at 2 packs (fast: 0, version 6)
        ("rms_norm", torch.bfloat16, 1024, 2, 0),  # 64 threads at 2 packs
        ("rms_norm", torch.bfloat16, 512, 2, 2),
        ("rms_norm", torch.float32, 512, 2, 2),
        ("rms_norm", torch.float32, 768, 2, 4),
        ("rms_norm", torch.float32, 2048, 2, 0),
        ("rms_norm", torch.float32, 4096, 4, 0),  # 512 threads at 2 packs: measured slower, 4 kept
        ("rms_norm", torch.bfloat16, 4097, 4, 4),  # odd rows: an aligned body, not 16-byte packs
        ("rms_norm", torch.float16, 4096, 4, 4),  # not measured: 4 kept
        ("layer_norm", torch.bfloat16, 4096, 4, 4),
        ("softmax", torch.bfloat16, 4096, 4, 4),
    ],
    ids=str,
)
def test_rms_norm_whole_row_forwards_take_2_packs_where_a_row_takes_few_threads(op, dtype, n, packs, fast_packs, small):
    """RMSNorm's forward of whole rows of 16-byte packs (bf16, float32) takes 2 packs a thread where that makes at
    most 256 threads a row, or, where the memory is fast (the H200), at most 64, in blocks of 64 (norm_kernels.cu,
    norm_run; rows of 1024 elements or more take version 6 there: fast_packs 0); the other ops and layouts keep 4.
    tune's packs still rule, and the output matches the float64 reference either way."""
    x = inputs((rows_for(n, small), n), dtype, "cuda")
    text = describe(x, op)
    fast = op == "rms_norm" and fast_memory()
    want = fast_packs if fast else packs
    if want == 0:
        assert text.startswith("reread: ") and "4 packs of 16 bytes per thread a step" in text, text
    else:
        assert text.startswith("registers:") and f"{want} packs of 16 bytes" in text, text
    if fast and want == 2:
        assert "64-thread blocks" in text, text
    if op == "rms_norm":
        assert "4 packs of 16 bytes" in describe(x, op, tune=[0, 4, 0, 0, 0])
        check(op, x)
        check(op, x, tune=[0, 4, 0, 0, 0])


CAPPED = [  # (op, dtype, n, blocks a row, threads a block, registers): norm_kernels.cu, CappedBackward; norm_run
    ("layer_norm", torch.float32, 4100, 3, 192, 80),
    ("layer_norm", torch.float32, 20000, 10, 256, 80),
    ("layer_norm", torch.float32, 32768, 16, 256, 80),
    ("rms_norm", torch.float32, 8500, 5, 224, 80),
    ("rms_norm", torch.float32, 20000, 10, 256, 80),
    ("rms_norm", torch.float32, 32768, 16, 256, 80),
    ("rms_norm", torch.bfloat16, 9000, 5, 128, 96),
    ("rms_norm", torch.bfloat16, 20000, 10, 128, 96),
    ("rms_norm", torch.bfloat16, 32768, 16, 128, 96),
    ("layer_norm", torch.bfloat16, 9000, 5, 128, 96),  # where the memory is fast
    ("layer_norm", torch.bfloat16, 20000, 10, 128, 96),
    ("layer_norm", torch.bfloat16, 32768, 16, 128, 96),
]


@pytest.mark.parametrize(
    "op, dtype, n, blocks, threads, registers", CAPPED, ids=[f"{c[0]}-{str(c[1])[6:]}-{c[2]}" for c in CAPPED]
)
def test_backward_rows_over_a_cluster_take_the_capped_kernel(op, dtype, n, blocks, threads, registers):
    """Backward rows over a cluster with the switches run the kernel under a register cap where CappedBackward has
    one (float32: blocks of 256 at 80 registers; bfloat16: blocks of 128 at 96, LayerNorm's where the memory is fast),
    and only there: every row that fits 16 of its blocks takes ceil(n / 2048) of them, also where its segments leave
    part of a block idle (float32 rows of 4100 and 8500). The same dx bits as the kernels without the switches at the
    same blocks a row, and dweight/dbias as a float64 reference has them."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    if op == "layer_norm" and dtype == torch.bfloat16 and not fast_memory():
        pytest.skip("bfloat16 LayerNorm takes the cap only where the memory is fast (its H100 test is below)")
    rows = 400  # more rows than the grid has clusters: blocks walk a second row
    x = inputs((rows, n), dtype, "cuda", scale=2.0)
    w, b = params(n, dtype, "cuda")
    dy = inputs((rows, n), dtype, "cuda", seed=3)
    text = describe(x, op, backward=True)
    want = f"{blocks} blocks per row, {threads}-thread blocks"
    assert want in text and f"a kernel of {registers} registers a thread" in text, text
    plain = [0, 0, blocks, 0, 16]  # the same blocks a row, no switches
    text = describe(x, op, backward=True, tune=plain)
    assert want in text and "registers a thread" not in text, text
    assert "registers a thread" not in describe(torch.empty(2, 1 << 18, device="cuda", dtype=dtype), op, backward=True)
    assert "registers a thread" not in describe(x, op)  # the forward
    stats = _forward(op, x, w, b, 0, [])
    got = _backward(op, None, dy, x, w, stats, 0, [])
    torch.testing.assert_close(got[0], _backward(op, None, dy, x, w, stats, 0, plain)[0], rtol=0, atol=0)
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    check_gradients(op, x, w, b, dy, tol=(tol, tol))


SOFTMAX_CLUSTER = [  # (dtype, n, blocks a row, threads a block): softmax_run, cluster_backward_blocks
    (torch.float32, 6148, 4, 224),  # segments of 1540: part of each block idle
    (torch.float32, 16384, 8, 256),
    (torch.float32, 24576, 6, 512),
    (torch.float32, 32768, 8, 512),
    (torch.bfloat16, 12288, 3, 256),
    (torch.bfloat16, 49152, 6, 512),
]


@pytest.mark.parametrize(
    "dtype, n, blocks, threads", SOFTMAX_CLUSTER, ids=[f"{str(c[0])[6:]}-{c[1]}" for c in SOFTMAX_CLUSTER]
)
def test_softmax_backward_rows_over_a_cluster_take_blocks_of_256_then_512(dtype, n, blocks, threads):
    """The softmax's backward rows over a cluster take the fewest blocks of 256 threads (2 packs a thread) that hold
    the row while that is at most 8 blocks, else the fewest of 512. The same dx bits as the kernel without the
    switches at the same blocks a row, every element written (poisoned output), and dx as a float64 reference has
    it."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    rows = 300  # more rows than the grid has clusters: clusters walk several rows
    y = softmax(inputs((rows, n), dtype, "cuda", scale=3.0))
    dy = inputs((rows, n), dtype, "cuda", seed=3)
    want = f"{blocks} blocks per row, {threads}-thread blocks"
    text = describe(y, "softmax", backward=True)
    assert want in text and "mailbox" in text, text
    plain = [0, 0, blocks, 0, 16]  # the same blocks a row, no switches
    assert want in describe(y, "softmax", backward=True, tune=plain)
    dx = poisoned_call(lambda: torch.ops.rowwise.softmax_backward(y, dy, 0, []), y)
    torch.testing.assert_close(dx, torch.ops.rowwise.softmax_backward(y, dy, 0, plain), rtol=0, atol=0)
    y64, dy64 = y.double().cpu(), dy.double().cpu()
    expected = y64 * (dy64 - (y64 * dy64).sum(-1, keepdim=True))
    scale = expected.abs().max().item()
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(dx.double().cpu() / scale, expected / scale, rtol=tol, atol=tol)


WIDE_ROWS = [  # (n, threads a row at 16 packs, or 0 where version 0 keeps its other plan): wide_row_choice
    (28672, 0),  # 448 threads: a smaller block, version 6
    (28676, 480),  # 449 threads' worth, a block of 480: part of the last warp idle
    (30720, 480),
    (32766, 0),  # not whole 16-byte packs
    (32768, 512),
]


@pytest.mark.parametrize("n, threads", WIDE_ROWS, ids=[str(n) for n, _ in WIDE_ROWS])
def test_float32_softmax_rows_of_a_wide_block_stay_in_registers_where_the_memory_is_fast(n, threads):
    """Where the memory is fast (the H200), version 0 holds float32 softmax rows that fill a block of 480 or 512
    threads at 16 packs a thread in the registers of that block, as Triton's tutorial does, and every element of y is
    written and matches float64; elsewhere, and for the other rows, version 6 or the rows' other plan. The backward
    and the norms keep theirs."""
    if not fast_memory():
        threads = 0
    rows = 5
    x = inputs((rows, n), torch.float32, "cuda", scale=3.0)
    text = describe(x, "softmax")
    wide = f"registers: {threads} threads per row, 16 packs of 16 bytes per thread, 1 block per row"
    assert text.startswith(wide) if threads else "16 packs" not in text, text
    for op in ("layer_norm", "rms_norm"):
        assert "16 packs" not in describe(x, op)
    assert "16 packs" not in describe(x, "softmax", backward=True)
    y = poisoned_call(lambda: softmax(x), x)
    rtol, atol = TOL[torch.float32]
    torch.testing.assert_close(y.double().cpu(), reference("softmax", x), rtol=rtol, atol=atol)
    if threads:  # tune's plans are the caller's: 4 packs, the row's other plan
        assert "16 packs" not in describe(x, "softmax", tune=[0, 4, 0])


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_float32_norm_backward_rows_past_a_cluster_of_capped_blocks_take_the_split(op):
    """float32 norm backward rows over 16 capped blocks (over 32768 elements) take version 5, the split, in blocks of
    up to 512 (norm_run); bf16 rows, rows of 32768 and version 4 by name keep the cluster. The gradients match
    float64."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    n = 36868  # 10 blocks a row of 480 threads (room for 3840 elements) for segments of 3688: part of each idle
    x = inputs((64, n), torch.float32, "cuda", scale=2.0)
    text = describe(x, op, backward=True)
    assert text.startswith("split: ") and "10 blocks per row, 480-thread blocks" in text, text
    assert describe(x, op, backward=True, version=4).startswith("cluster: ")
    assert describe(x.bfloat16(), op, backward=True).startswith("cluster: ")
    assert describe(torch.empty(2, 32768, device="cuda"), op, backward=True).startswith("cluster: ")
    w, b = params(n, torch.float32, "cuda")
    dy = inputs((64, n), torch.float32, "cuda", seed=3)
    check_gradients(op, x, w, b, dy)


def test_bfloat16_layer_norm_backward_takes_the_cap_only_where_the_memory_is_fast():
    """bfloat16 LayerNorm's backward rows over a cluster take the capped kernel where the memory is fast (H200: rows
    of 32768 in 16 blocks of 128 at 96 registers); elsewhere (H100) they keep 8 blocks of n / 128 threads and the
    kernel under __launch_bounds__, rows of 16384 included, whose blocks of 128 are the cap's size."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    for n, old in ((32768, "8 blocks per row, 256-thread blocks"), (16384, "8 blocks per row, 128-thread blocks")):
        text = describe(torch.empty(4, n, device="cuda", dtype=torch.bfloat16), "layer_norm", backward=True)
        if fast_memory():
            assert f"{n // 2048} blocks per row, 128-thread blocks" in text, text
            assert "a kernel of 96 registers a thread" in text, text
        else:
            assert old in text and "registers a thread" not in text, text


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_odd_long_rows_take_no_switches(op, dtype):
    """The switches' kernels are built for 16-byte rows only: odd rows over a cluster take the aligned body without
    them (the kernels before the switches)."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need compute capability 9.0")
    # 40961: over a cluster both ways (bf16 forward rows of 32769 fit a block of 1024 threads; float32 backward rows
    # of 65537 need 17 blocks, more than a cluster has)
    x = torch.empty(2, 40961, device="cuda", dtype=dtype)
    for backward in (False, True):
        text = describe(x, op, backward=backward)
        assert text.startswith("cluster:"), text
        assert "16-byte boundary" in text and "switches" not in text, text


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_whole_rows_walked_or_not_give_the_same_bits(op, dtype):
    """Whole rows take a block per row group by default; tune's waves (4th number) makes blocks walk rows instead,
    the loop that rows over several blocks and the norms' backward always take: both give the same bits."""
    n = 1000  # 20000 rows: more row groups than one or two waves of blocks hold, so that waves 1 and 2 walk
    x = inputs((20000, n), dtype, "cuda", scale=2.0)
    w, b = params(n, dtype, "cuda")
    dy = inputs((20000, n), dtype, "cuda", seed=3)
    assert describe(x, op).startswith("registers:")
    for walk in ([0, 0, 0, 1], [0, 0, 0, 2]):
        want = _forward(op, x, w, b, 0, [])
        got = _forward(op, x, w, b, 0, walk)
        for g, e in zip(got, want):
            torch.testing.assert_close(g, e, rtol=0, atol=0)
        assert describe(x, op, tune=walk) != describe(x, op)  # a smaller grid
        want = _backward(op, want[0], dy, x, w, want, 0, [])
        got = _backward(op, got[0], dy, x, w, got, 0, walk)
        torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("n", [255, 1025, 4097, 12289])
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_odd_rows_many_per_block_with_gradients(op, n, dtype, small):
    """Odd n, more rows than the grid has row walkers: each group walks several rows, which all start at the same
    place relative to a 16-byte boundary (the launcher's phase_rows), so dweight and dbias sum fixed columns. At 255
    and 1025 a block holds several groups whose rows start at different places: the block's sums add each column
    from the thread that held it in each group (ColumnSums::write). bf16 rows take the weight's table in the backward
    (rows of 12289: over a cluster, each block's segment from its own column)."""
    rows = 600 if small else 3000
    x = inputs((rows, n), dtype, "cuda")
    w, b = params(n, dtype, "cuda")
    dy = inputs((rows, n), dtype, "cuda", seed=3)
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    check_gradients(op, x, w, b, dy, tol=(tol, tol))
