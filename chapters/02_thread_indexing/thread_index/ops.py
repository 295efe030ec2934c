"""The GPU side: the kernels of src/record.cu through PyTorch's dispatcher (torch.ops.thread_index.*).

Each op checks its own arguments, once, in C++ (src/binding.cpp, with the course's checks: the same messages and
exception types as course.checks). What is checked here is only what this module needs before it calls an op:
the formula, grid and block that decide how large a table to allocate (the emulation's checks, thread_index.emulate),
and n. The device's grid limits are left to the launch, whose checked error is part of the lesson (a grid.y of
65,536, say).
"""

from __future__ import annotations

import torch
from course.build import import_extension

from thread_index.emulate import COLUMNS, ThreadTable, check_launch

_C = import_extension("thread_index")  # registers torch.ops.thread_index.*
_ops = torch.ops.thread_index

LIMIT_NAMES = (
    "max_grid_x",
    "max_grid_y",
    "max_grid_z",
    "max_block_x",
    "max_block_y",
    "max_block_z",
    "max_threads_per_block",
    "warp_size",
    "sm_count",
    "max_threads_per_sm",
    "shared_bytes_per_block",
)


# The ops only write into tensors they are given: tracing (torch.compile, opcheck) needs no output shapes.
@torch.library.register_fake("thread_index::record_threads_")
def _(table, formula, grid, block, first_block):
    return None


@torch.library.register_fake("thread_index::grid_stride_count_")
def _(counts, blocks, threads):
    return None


@torch.library.register_fake("thread_index::grid_stride_owner_")
def _(owner, blocks, threads):
    return None


@torch.library.register_fake("thread_index::divergence_")
def _(out, branching, iters):
    return None


def record_threads(
    formula: str | int, grid, block, *, first_block: int = 0, n_blocks: int | None = None, device="cuda"
) -> ThreadTable:
    """Launch grid × block threads on the GPU; each records the index `formula` gives it, its blockIdx, threadIdx,
    warp and (hardware) lane. Rows in launch order, like thread_index.emulate, so the two tables compare equal."""
    number, grid, block, first_block, n_blocks, rows = check_launch(formula, grid, block, first_block, n_blocks)
    table = torch.full((rows, len(COLUMNS)), -1, dtype=torch.int64, device=device)
    if rows:
        _ops.record_threads_(table, number, list(grid), list(block), first_block)
    return ThreadTable.from_table(table)


def _check_n(n: int) -> None:
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")


def grid_stride_owner(n: int, blocks: int, threads: int, *, device="cuda") -> torch.Tensor:
    """owner[i]: the number of the thread whose grid-stride loop handled element i (int64). blocks and threads are
    checked by the op, against the device's limits."""
    _check_n(n)
    owner = torch.full((n,), -1, dtype=torch.int64, device=device)
    if n:
        _ops.grid_stride_owner_(owner, blocks, threads)
    return owner


def grid_stride_count(n: int, blocks: int, threads: int, *, device="cuda") -> torch.Tensor:
    """counts[i]: how many times a grid-stride loop visited element i (uint8; 1 everywhere when it is right)."""
    _check_n(n)
    counts = torch.zeros(n, dtype=torch.uint8, device=device)
    if n:
        _ops.grid_stride_count_(counts, blocks, threads)
    return counts


DIVERGENCE_MODES = {"uniform": 0, "odd_even_lanes": 1, "odd_even_warps": 2}


def divergence(out: torch.Tensor, mode: str, iters: int) -> torch.Tensor:
    """Run the divergence kernel into `out` (float32, CUDA, contiguous); see src/record.cu. Returns out. The op
    checks out and iters; the mode's name is this function's own argument."""
    if mode not in DIVERGENCE_MODES:
        raise ValueError(f"mode must be one of {', '.join(DIVERGENCE_MODES)}, got {mode!r}")
    _ops.divergence_(out, DIVERGENCE_MODES[mode], iters)
    return out


def device_limits(device: int | None = None) -> dict[str, int]:
    """The launch limits of a CUDA device (cudaDeviceGetAttribute): max grid and block sizes, warp size, SMs."""
    if device is None:
        device = torch.cuda.current_device() if torch.cuda.is_available() else 0
    return dict(zip(LIMIT_NAMES, _ops.device_limits(device)))
