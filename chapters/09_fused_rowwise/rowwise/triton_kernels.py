"""The three ops written in Triton the way Triton's tutorials write them (02 fused softmax, 05 layer norm): the
peer many users would pick instead of CUDA C, timed by bench.py.

    y = softmax(x)                                  # one program per row, the whole row in one block
    dx = softmax_backward(y, dy)
    y, mean, rstd = layer_norm(x, w, b, eps)        # one program per row, loops over the row in BLOCK chunks
    dx, dw, db = layer_norm_backward(dy, x, w, mean, rstd)   # dx per row; dw, db: partial sums in GROUP rows
                                                    # guarded by a lock (the tutorial's way), then summed
    y, rstd = rms_norm(x, w, eps);  dx, dw = rms_norm_backward(dy, x, w, rstd)

x is 2-D and contiguous. As in the tutorials, the whole row of softmax sits in one program: rows past 65,536
elements are left to the CUDA kernels (Triton would spill them).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

MAX_FUSED = 65536  # the tutorials' limit on a row held at once


def _warps(block: int) -> int:
    return 4 if block < 2048 else (8 if block < 4096 else 16)


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * n_cols + offsets, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row * n_cols + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_backward_kernel(dx_ptr, y_ptr, dy_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    y = tl.load(y_ptr + row * n_cols + offsets, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n_cols + offsets, mask=mask, other=0.0).to(tl.float32)
    dx = y * (dy - tl.sum(y * dy, axis=0))
    tl.store(dx_ptr + row * n_cols + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def _check_row(n: int) -> int:
    if n > MAX_FUSED:
        raise ValueError(f"the Triton softmax holds a row in one program: at most {MAX_FUSED} elements, got {n}")
    return triton.next_power_of_2(n)


def softmax(x: torch.Tensor) -> torch.Tensor:
    rows, n = x.shape
    block = _check_row(n)
    y = torch.empty_like(x)
    _softmax_kernel[(rows,)](y, x, n, BLOCK=block, num_warps=_warps(block))
    return y


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    rows, n = y.shape
    block = _check_row(n)
    dx = torch.empty_like(y)
    _softmax_backward_kernel[(rows,)](dx, y, dy, n, BLOCK=block, num_warps=_warps(block))
    return dx


@triton.jit
def _norm_forward_kernel(
    x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, n_cols, eps, RMS: tl.constexpr, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * n_cols
    y_ptr += row * n_cols
    mean = 0.0
    if not RMS:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        x = tl.where(cols < n_cols, x - mean, 0.0)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    if not RMS:
        tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w
        if not RMS:
            y += tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        tl.store(y_ptr + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _norm_backward_dx_kernel(
    dx_ptr,
    dy_ptr,
    partial_w_ptr,
    partial_b_ptr,
    x_ptr,
    w_ptr,
    mean_ptr,
    rstd_ptr,
    lock_ptr,
    n_rows,
    n_cols,
    RMS: tl.constexpr,
    GROUP: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    mean = 0.0
    if not RMS:
        mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    g = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * g, axis=0) / n_cols
    if RMS:
        dx = (g - xhat * c1) * rstd
    else:
        c2 = tl.sum(g, axis=0) / n_cols
        dx = (g - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * n_cols + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    # The tutorial's partial sums of dw (and db): rows share GROUP buffers, each guarded by a spin lock.
    lock_id = row % GROUP
    lock_ptr += lock_id
    count_ptr = lock_ptr + GROUP
    partial_w_ptr += lock_id * n_cols + cols
    partial_b_ptr += lock_id * n_cols + cols
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    count = tl.load(count_ptr)
    partial_w = (dy * xhat).to(tl.float32)
    partial_b = dy.to(tl.float32)
    if count == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        partial_w += tl.load(partial_w_ptr, mask=mask)
        partial_b += tl.load(partial_b_ptr, mask=mask)
    tl.store(partial_w_ptr, partial_w, mask=mask)
    if not RMS:
        tl.store(partial_b_ptr, partial_b, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def _norm_backward_dwdb_kernel(
    partial_w_ptr,
    partial_b_ptr,
    dw_ptr,
    db_ptr,
    GROUP,
    n_cols,
    RMS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, GROUP, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < GROUP) & (cols[None, :] < n_cols)
        offsets = rows[:, None] * n_cols + cols[None, :]
        dw += tl.load(partial_w_ptr + offsets, mask=mask, other=0.0)
        if not RMS:
            db += tl.load(partial_b_ptr + offsets, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=cols < n_cols)
    if not RMS:
        tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=cols < n_cols)


def _norm_forward(x, w, b, eps, rms):
    rows, n = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    block = min(65536 // x.element_size(), triton.next_power_of_2(n))
    _norm_forward_kernel[(rows,)](
        x,
        y,
        w,
        b if b is not None else w,
        mean,
        rstd,
        n,
        eps,
        RMS=rms,
        BLOCK=block,
        num_warps=min(max(block // 256, 1), 8),
    )
    return y, mean, rstd


def _norm_backward(dy, x, w, mean, rstd, rms):
    rows, n = x.shape
    block = _check_row(n)
    group = 128 if n <= 1024 else (96 if n <= 4096 else 64)  # the tutorial's GROUP_SIZE_M
    locks = torch.zeros(2 * group, dtype=torch.int32, device=x.device)
    partial_w = torch.zeros((group, n), dtype=torch.float32, device=x.device)
    partial_b = torch.zeros((group, n), dtype=torch.float32, device=x.device)
    dx = torch.empty_like(x)
    dw = torch.empty_like(w)
    db = torch.empty_like(w)
    _norm_backward_dx_kernel[(rows,)](
        dx,
        dy,
        partial_w,
        partial_b,
        x,
        w,
        mean,
        rstd,
        locks,
        rows,
        n,
        RMS=rms,
        GROUP=group,
        BLOCK=block,
        num_warps=min(max(block // 256, 1), 8),
    )
    _norm_backward_dwdb_kernel[(triton.cdiv(n, 128),)](
        partial_w, partial_b, dw, db, group, n, RMS=rms, BLOCK_M=32, BLOCK_N=128
    )
    return dx, dw, db


def layer_norm(x, w, b, eps):
    return _norm_forward(x, w, b, eps, False)


def layer_norm_backward(dy, x, w, mean, rstd):
    return _norm_backward(dy, x, w, mean, rstd, False)


def rms_norm(x, w, eps):
    y, _, rstd = _norm_forward(x, w, None, eps, True)
    return y, rstd


def rms_norm_backward(dy, x, w, rstd):
    dx, dw, _ = _norm_backward(dy, x, w, rstd, rstd, True)
    return dx, dw
