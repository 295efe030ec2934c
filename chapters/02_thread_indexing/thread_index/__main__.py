"""`make run`: the thread grid emulated on the CPU, pictures into images/, and with a GPU the same on the hardware."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from course import gpu_skip_reason

import thread_index as ti
from thread_index.plots import draw_all

CHAPTER_DIR = Path(__file__).resolve().parent.parent


def show_table(table: ti.ThreadTable, rows: int) -> None:
    print("  global  blockIdx   threadIdx  warp lane")
    for k in range(rows):
        b, t = table.block_idx[k].tolist(), table.thread_idx[k].tolist()
        print(f"  {int(table.global_index[k]):6d}  {b}  {t}  {int(table.warp[k]):3d} {int(table.lane[k]):4d}")


def coverage_line(index: torch.Tensor, total: int | None = None) -> str:
    """How the threads' indices cover the elements 0 .. total-1 (default: one element per thread)."""
    total = index.numel() if total is None else total
    counts = torch.bincount(index[(index >= 0) & (index < total)], minlength=total)
    outside = int(((index < 0) | (index >= total)).sum())
    gaps, shared = int((counts == 0).sum()), int((counts > 1).sum())
    distinct = int(index.unique().numel())
    return (
        f"{index.numel()} threads -> {distinct} distinct indices; "
        f"{gaps} elements untouched, {shared} shared, {outside} out of range"
    )


def cpu_part(images: Path) -> None:
    print("== 1. The emulation: grid (3, 2) of blocks (4, 3), formula grid2d_block2d (first 6 threads)")
    table = ti.emulate("grid2d_block2d", (3, 2), (4, 3))
    show_table(table, 6)
    print("  " + coverage_line(table.global_index))

    print("\n== 2. Every correct formula on a launch of its own shape")
    for name in ti.correct_formulas():
        grid_dims, block_dims = ti.formula_dims(name)
        grid, block = (3, 2, 2)[:grid_dims], (5, 3, 2)[:block_dims]
        print(
            f"  {name:16s} grid {str(grid):10s} block {str(block):10s} "
            f"{coverage_line(ti.emulate(name, grid, block).global_index)}"
        )

    print("\n== 3. The seeds' wrong formulas")
    for name, grid, block, elements in [
        ("pitfall_1d_griddim", 3, 8, 24),
        ("pitfall_2d_add_dim", (3, 2), (4, 3), 72),
        ("pitfall_seed000", (5, 3), 4, 15),
    ]:
        print(f"  {name:20s} {coverage_line(ti.emulate(name, grid, block).global_index, elements)}")
    print("  (seed 000 meant one element per block: a 5 x 3 tensor, so 15 elements for 60 threads)")

    print("\n== 4. A 32-bit index past 2^31 (the last block of 2^23 + 1 blocks of 256 threads, emulated alone)")
    blocks = 2**31 // 256 + 1
    wide = ti.emulate("grid1d_block1d", blocks, 256, first_block=blocks - 1).global_index
    narrow = ti.emulate("pitfall_int32_1d", blocks, 256, first_block=blocks - 1).global_index
    print(f"  int i = blockIdx.x * blockDim.x + threadIdx.x   -> {narrow[0].item():,} .. {narrow[-1].item():,}")
    print(f"  int64_t i = (int64_t)blockIdx.x * blockDim.x + ... -> {wide[0].item():,} .. {wide[-1].item():,}")

    print("\n== 5. A grid-stride loop: 2 blocks of 4 threads cover 20 elements (element -> thread)")
    owner, counts = ti.emulate_grid_stride(20, 2, 4)
    print(f"  owner  {owner.tolist()}\n  visits {counts.tolist()}")

    print("\n== 6. Pictures")
    for path in draw_all(images):
        print(f"  wrote {path.relative_to(CHAPTER_DIR) if path.is_relative_to(CHAPTER_DIR) else path}")


def gpu_part() -> None:
    print("\n== 7. The device's limits")
    for key, value in ti.device_limits().items():
        print(f"  {key:24s} {value:,}")

    print("\n== 8. The GPU's table vs the emulation")
    for name, grid, block in [
        ("grid2d_block2d", (3, 2), (4, 3)),
        ("grid3d_block3d", (3, 2, 2), (8, 4, 2)),
        ("pitfall_seed000", (5, 3), 4),
    ]:
        same = torch.equal(
            ti.record_threads(name, grid, block).as_table().cpu(), ti.emulate(name, grid, block).as_table()
        )
        print(f"  {name:16s} GPU table {'==' if same else '!='} emulated table")

    print("\n== 9. grid.y = 65,536 (a 2D grid sized by a tensor with 65,536 columns)")
    try:
        ti.record_threads("pitfall_seed000", (2, 65536), 4)
        print("  launched?! (this device allows a larger grid.y)")
    except RuntimeError as error:
        print(f"  RuntimeError: {str(error).splitlines()[0]}")
    owner = ti.grid_stride_owner(2 * 65536, 132, 256)
    print(
        f"  the fix, a 1D grid-stride loop with 132 x 256 threads: every element visited once: "
        f"{bool(torch.equal(owner.cpu(), torch.arange(2 * 65536) % (132 * 256)))}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=Path, default=CHAPTER_DIR / "images", help="where to write the PNGs")
    args = parser.parse_args()
    cpu_part(args.images)
    reason = gpu_skip_reason()
    if reason:
        print(f"\n[skipped the GPU part (device limits, GPU table vs emulation, grid.y > 65535): {reason}]")
    else:
        gpu_part()


if __name__ == "__main__":
    main()
