"""Independent references, written with torch arithmetic (not the C formulas under test)."""

from __future__ import annotations

import torch


def launch_order(grid: tuple[int, int, int], block: tuple[int, int, int], first_block: int = 0, n_blocks=None):
    """blockIdx, threadIdx (each (n, 3)) and the thread's number in its block, for every thread of a launch in
    launch order: blocks x fastest, then the threads of each block x fastest."""
    gx, gy, gz = grid
    bx, by, bz = block
    per_block = bx * by * bz
    if n_blocks is None:
        n_blocks = gx * gy * gz - first_block
    row = torch.arange(n_blocks * per_block, dtype=torch.int64)
    block_number = first_block + row // per_block
    thread_number = row % per_block
    block_idx = torch.stack([block_number % gx, block_number // gx % gy, block_number // (gx * gy)], dim=1)
    thread_idx = torch.stack([thread_number % bx, thread_number // bx % by, thread_number // (bx * by)], dim=1)
    return block_idx, thread_idx, block_number, thread_number


def hits(index: torch.Tensor, size: int) -> torch.Tensor:
    """How many threads landed on each of the elements 0 .. size-1 (indices outside are ignored)."""
    inside = index[(index >= 0) & (index < size)]
    return torch.bincount(inside, minlength=size)


def as_int32(values: torch.Tensor) -> torch.Tensor:
    """What storing int64 values into a 32-bit int gives (two's complement wrap-around), computed in int64."""
    return (values + 2**31) % 2**32 - 2**31
