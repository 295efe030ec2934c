"""The thread grid on the CPU: Python's view of the C emulation in src/emulate.c (loaded with ctypes).

    table = emulate("grid2d_block2d", grid=(3, 2), block=(4, 3))
    table.global_index      # one entry per thread, in launch order
    table.block_idx         # (threads, 3): blockIdx.x, .y, .z of each thread
    table.thread_idx        # (threads, 3): threadIdx.x, .y, .z

The formulas themselves are C (src/thread_index.h); this module only loads the library, checks arguments and
wraps the table the C code fills in torch tensors, so it can be compared with the GPU's table directly.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path
from typing import NamedTuple

import torch
from course.build import load_c_library

CHAPTER_DIR = Path(__file__).resolve().parent.parent
COLUMNS = ("global", "block_x", "block_y", "block_z", "thread_x", "thread_y", "thread_z", "warp", "lane")
MAX_ROWS = 1 << 24  # a table of 16 M threads is 1.2 GB: more is surely a mistake


@functools.cache
def library() -> ctypes.CDLL:
    lib = load_c_library(CHAPTER_DIR, "libthread_index_emu")
    u32x3 = ctypes.c_uint32 * 3
    lib.ti_formula_count.restype = ctypes.c_int
    lib.ti_formula_name.restype = ctypes.c_char_p
    lib.ti_formula_name.argtypes = [ctypes.c_int]
    lib.ti_table_columns.restype = ctypes.c_int
    lib.ti_emulate.restype = ctypes.c_int
    lib.ti_emulate.argtypes = [ctypes.c_int, u32x3, u32x3, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    lib.ti_emulate_grid_stride.restype = ctypes.c_int
    lib.ti_emulate_grid_stride.argtypes = [
        ctypes.c_uint32,
        ctypes.c_uint32,
        ctypes.c_int64,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    if lib.ti_table_columns() != len(COLUMNS):
        raise ImportError(f"{lib._name} writes {lib.ti_table_columns()} columns, this module expects {len(COLUMNS)}")
    return lib


@functools.cache
def formulas() -> dict[str, int]:
    """Every formula's name and number, as src/thread_index.h lists them."""
    lib = library()
    return {lib.ti_formula_name(k).decode(): k for k in range(lib.ti_formula_count())}


def correct_formulas() -> list[str]:
    return [name for name in formulas() if not name.startswith("pitfall_")]


def pitfalls() -> list[str]:
    return [name for name in formulas() if name.startswith("pitfall_")]


def formula_dims(name: str) -> tuple[int, int]:
    """How many dimensions the formula's grid and block have: "grid2d_block3d" -> (2, 3)."""
    if name.startswith("pitfall_"):
        return {"pitfall_1d_griddim": (1, 1), "pitfall_2d_add_dim": (2, 2), "pitfall_seed000": (2, 1)}.get(name, (1, 1))
    grid, block = name.split("_")
    return int(grid[4]), int(block[5])


class ThreadTable(NamedTuple):
    """One row per launched thread, in launch order (blocks x fastest, then threads x fastest)."""

    global_index: torch.Tensor  # (n,) int64: what the formula computed
    block_idx: torch.Tensor  # (n, 3) int64
    thread_idx: torch.Tensor  # (n, 3) int64
    warp: torch.Tensor  # (n,) int64: the thread's warp in its block
    lane: torch.Tensor  # (n,) int64: its lane in that warp

    @classmethod
    def from_table(cls, table: torch.Tensor) -> ThreadTable:
        return cls(table[:, 0], table[:, 1:4], table[:, 4:7], table[:, 7], table[:, 8])

    def as_table(self) -> torch.Tensor:
        return torch.cat(
            [self.global_index[:, None], self.block_idx, self.thread_idx, self.warp[:, None], self.lane[:, None]], dim=1
        )


def dim3(name: str, value: int | tuple[int, ...] | list[int]) -> tuple[int, int, int]:
    """Like CUDA's dim3: an int or 1 to 3 ints, missing ones are 1. Each must fit an unsigned 32-bit int."""
    values = (value,) if isinstance(value, int) else tuple(value) if isinstance(value, (tuple, list)) else None
    if (
        values is None
        or not 1 <= len(values) <= 3
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
    ):
        raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints, got {value!r}")
    for v in values:
        if not 1 <= v < 2**32:
            raise ValueError(f"{name} entries must be in [1, 2^32), got {value!r}")
    return (*values, 1, 1)[:3]  # type: ignore[return-value]


def formula_number(formula: str | int) -> int:
    known = formulas()
    if isinstance(formula, str):
        if formula not in known:
            raise ValueError(f"unknown formula {formula!r}; the formulas are: {', '.join(known)}")
        return known[formula]
    if isinstance(formula, int) and not isinstance(formula, bool) and 0 <= formula < len(known):
        return formula
    raise ValueError(f"formula must be a name or a number in [0, {len(known)}), got {formula!r}")


def check_launch(formula, grid, block, first_block: int, n_blocks: int | None):
    """Checks shared by the emulation and the GPU op; returns (number, grid, block, first_block, n_blocks, rows)."""
    number = formula_number(formula)
    grid, block = dim3("grid", grid), dim3("block", block)
    total_blocks = grid[0] * grid[1] * grid[2]
    if n_blocks is None:
        n_blocks = total_blocks - first_block
    if not 0 <= first_block <= total_blocks or not 0 <= n_blocks <= total_blocks - first_block:
        raise ValueError(
            f"first_block={first_block}, n_blocks={n_blocks}: the grid {grid} has blocks 0 .. {total_blocks - 1}"
        )
    rows = n_blocks * block[0] * block[1] * block[2]
    if rows > MAX_ROWS:
        raise ValueError(
            f"that is {rows:,} threads to record (more than {MAX_ROWS:,}): record fewer blocks with "
            "first_block= and n_blocks="
        )
    return number, grid, block, first_block, n_blocks, rows


def emulate(formula: str | int, grid, block, *, first_block: int = 0, n_blocks: int | None = None) -> ThreadTable:
    """What a launch of grid × block threads computes with `formula`, thread by thread, on the CPU.

    first_block/n_blocks record only some blocks (numbered x fastest), so a grid of billions of threads can be
    examined at its end without a table for all of them."""
    number, grid, block, first_block, n_blocks, rows = check_launch(formula, grid, block, first_block, n_blocks)
    table = torch.full((rows, len(COLUMNS)), -1, dtype=torch.int64)
    u32x3 = ctypes.c_uint32 * 3
    status = library().ti_emulate(number, u32x3(*grid), u32x3(*block), first_block, n_blocks, table.data_ptr())
    if status != 0:
        raise RuntimeError(f"ti_emulate refused formula={formula!r}, grid={grid}, block={block}")
    return ThreadTable.from_table(table)


def emulate_grid_stride(n: int, blocks: int, threads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A grid-stride loop over n elements by blocks × threads threads: (owner, counts) per element."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    if n > MAX_ROWS:
        raise ValueError(f"n={n:,} is more than this emulation handles ({MAX_ROWS:,})")
    dim3("blocks", blocks), dim3("threads", threads)
    owner = torch.full((n,), -1, dtype=torch.int64)
    counts = torch.zeros(n, dtype=torch.uint8)
    if library().ti_emulate_grid_stride(blocks, threads, n, owner.data_ptr(), counts.data_ptr()) != 0:
        raise RuntimeError("ti_emulate_grid_stride refused its arguments")
    return owner, counts
