"""Pictures of the thread -> element mapping (matplotlib, Agg: no display needed). Used by `make run`."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from thread_index.emulate import emulate  # noqa: E402

SAVE = {"dpi": 80, "metadata": {"Software": None}}  # small files that do not change from run to run


def thread_canvas(name: str, grid: tuple[int, int], block: tuple[int, int]) -> torch.Tensor:
    """The formula's index for every thread, laid out as the threads sit: row = global y, column = global x."""
    table = emulate(name, grid, block)
    x = table.block_idx[:, 0] * block[0] + table.thread_idx[:, 0]
    y = table.block_idx[:, 1] * block[1] + table.thread_idx[:, 1]
    canvas = torch.empty(grid[1] * block[1], grid[0] * block[0], dtype=torch.int64)
    canvas[y, x] = table.global_index
    return canvas


def draw_canvas(ax, canvas: torch.Tensor, grid, block, title: str) -> None:
    total = canvas.numel()
    counts = torch.bincount(canvas.flatten().clamp(0, total), minlength=total + 1)
    ax.imshow(canvas.numpy(), cmap="viridis", vmin=0, vmax=total - 1)
    for (row, col), value in zip(
        torch.cartesian_prod(torch.arange(canvas.shape[0]), torch.arange(canvas.shape[1])), canvas.flatten()
    ):
        clash = value >= total or counts[value] > 1
        ax.text(
            int(col),
            int(row),
            str(int(value)),
            ha="center",
            va="center",
            fontsize=7,
            color="red" if clash else "white",
            fontweight="bold" if clash else "normal",
        )
    for k in range(1, grid[0]):
        ax.axvline(k * block[0] - 0.5, color="black", linewidth=2)
    for k in range(1, grid[1]):
        ax.axhline(k * block[1] - 0.5, color="black", linewidth=2)
    ax.set_xticks([])
    ax.set_yticks([])
    distinct = int(canvas.unique().numel())
    ax.set_title(f"{title}\n{total} threads -> {distinct} distinct elements", fontsize=9)


def draw_mapping(out_dir: Path, grid=(3, 2), block=(4, 3)) -> Path:
    """Each thread of a 2D grid of 2D blocks, labelled with its global index: correct formula vs the seed's."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    draw_canvas(axes[0], thread_canvas("grid2d_block2d", grid, block), grid, block, "grid2d_block2d (correct)")
    draw_canvas(
        axes[1],
        thread_canvas("pitfall_2d_add_dim", grid, block),
        grid,
        block,
        "pitfall_2d_add_dim (seed 002): red = shared or out of range",
    )
    fig.suptitle(f"grid = {grid} blocks of {block} threads; thick lines: block borders", fontsize=10)
    fig.tight_layout()
    path = out_dir / "mapping_2d.png"
    fig.savefig(path, **SAVE)
    plt.close(fig)
    return path


# (formula, grid, block, elements, title): seed 000 meant one element per block (a 5 x 3 tensor, 15 blocks)
COVERAGE_CASES = [
    ("grid1d_block1d", 3, 8, 24, "correct 1D: grid 3 x block 8"),
    ("pitfall_1d_griddim", 3, 8, 24, "blockIdx.x * gridDim.x + threadIdx.x"),
    ("pitfall_2d_add_dim", (3, 2), (4, 3), 72, "seed 002's 2D formula, grid (3,2) x block (4,3)"),
    ("pitfall_seed000", (5, 3), 4, 15, "seed 000, 5 x 3 tensor: grid (5,3) x 4 threads"),
]


def draw_coverage(out_dir: Path) -> Path:
    """How many threads land on each element: 1 everywhere when the formula is right."""
    fig, axes = plt.subplots(len(COVERAGE_CASES), 1, figsize=(10, 6.4))
    for ax, (name, grid, block, total, title) in zip(axes, COVERAGE_CASES):
        index = emulate(name, grid, block).global_index
        counts = torch.bincount(index[(index >= 0) & (index < total)], minlength=total)
        outside = int(((index < 0) | (index >= total)).sum())
        colors = ["tab:red" if c == 0 else "tab:green" if c == 1 else "tab:orange" for c in counts.tolist()]
        heights = counts.float()
        heights[counts == 0] = -0.25 * max(1, int(counts.max()))  # gaps drawn as red stubs below the axis
        ax.bar(range(total), heights.numpy(), color=colors, width=0.9)
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xlim(-0.5, total - 0.5)
        ax.set_ylabel("threads")
        gaps, shared = int((counts == 0).sum()), int((counts > 1).sum())
        ax.set_title(f"{name}: {title} — {gaps} gaps, {shared} shared, {outside} threads out of range", fontsize=9)
    axes[-1].set_xlabel("element index (red: no thread, green: one, orange: several)")
    fig.tight_layout()
    path = out_dir / "coverage.png"
    fig.savefig(path, **SAVE)
    plt.close(fig)
    return path


def draw_warps(out_dir: Path, block=(16, 6)) -> Path:
    """Which warp each thread of a 2D block belongs to: warps are cut from x-fastest numbering."""
    table = emulate("grid1d_block2d", 1, block)
    warp = torch.empty(block[1], block[0], dtype=torch.int64)
    lane = torch.empty_like(warp)
    warp[table.thread_idx[:, 1], table.thread_idx[:, 0]] = table.warp
    lane[table.thread_idx[:, 1], table.thread_idx[:, 0]] = table.lane
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.imshow(warp.numpy(), cmap="Pastel1", vmin=0, vmax=8)
    for y in range(block[1]):
        for x in range(block[0]):
            ax.text(x, y, f"w{int(warp[y, x])}\n{int(lane[y, x])}", ha="center", va="center", fontsize=6)
    ax.set_xlabel("threadIdx.x")
    ax.set_ylabel("threadIdx.y")
    ax.set_title(f"a {block[0]} x {block[1]} block: warp (w) and lane of each thread", fontsize=9)
    fig.tight_layout()
    path = out_dir / "warps_2d_block.png"
    fig.savefig(path, **SAVE)
    plt.close(fig)
    return path


def draw_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [draw_mapping(out_dir), draw_coverage(out_dir), draw_warps(out_dir)]
