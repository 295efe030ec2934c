"""The lesson's pictures, drawn with matplotlib into images/ (`python -m rowwise.plots`):

rows_to_threads.png   how rows map to threads: several rows per warp, a block per row (16-byte packs, interleaved
                      so that a warp reads contiguous memory), a row over a cluster of blocks
roofline.png          where each op sits on chapter 07's roofline (H100 figures)
h100_vs_h200.png      ours in % of the device copy, each bench line on the H100 against the same line on the H200
                      (from results/h100/summary.md and results/h200/summary.md)
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

IMAGES = Path(__file__).resolve().parents[1] / "images"
RESULTS = Path(__file__).resolve().parents[1] / "results"
COLORS = plt.get_cmap("tab10").colors


def _row(ax, y, owners, label, height=0.8, names=None):
    """A row of cells; owners[i] is the thread (a color) that holds cell i."""
    for i, owner in enumerate(owners):
        ax.add_patch(Rectangle((i, y), 1, height, facecolor=COLORS[owner % 10], edgecolor="white", alpha=0.85))
        if names is not None:
            ax.text(i + 0.5, y + height / 2, names[i], ha="center", va="center", fontsize=6, color="white")
    ax.text(-0.5, y + height / 2, label, ha="right", va="center", fontsize=8)


def rows_to_threads(path: Path) -> Path:
    fig, axes = plt.subplots(3, 1, figsize=(11, 7.5))
    # (a) short rows: a warp holds 4 rows of 8 packs, a group of 8 lanes per row
    ax = axes[0]
    for r in range(4):
        _row(ax, 3 - r, [r] * 8, f"row {r}: lanes {8 * r}-{8 * r + 7}", names=[f"t{8 * r + i}" for i in range(8)])
    ax.set_title(
        "N = 64 bf16 (8 packs of 16 bytes): one warp holds 4 rows, 8 lanes each, one pack per lane; "
        "the lanes of a row combine with xor shuffles",
        fontsize=9,
    )
    # (b) a block per row: thread t holds packs t, t+G, t+2G, t+3G (a warp reads 32 x 16 = 512 contiguous bytes)
    ax = axes[1]
    threads = 8
    owners = [p % threads for p in range(4 * threads)]
    _row(ax, 0, owners, "one row, 4 x G packs", names=[f"t{o}" for o in owners])
    ax.set_title(
        "N = 4096 bf16: a group of G = 128 threads per row (drawn with G = 8): thread t holds packs t, t + G, "
        "t + 2G, t + 3G in registers; warp sums, then one barrier",
        fontsize=9,
    )
    # (c) a row over a cluster
    ax = axes[2]
    for block in range(4):
        _row(ax, 0, [block] * 8, "" if block else "one long row", names=None)
        for i in range(8):
            ax.patches[-8 + i].set_x(block * 8 + i)
        ax.text(block * 8 + 4, 1.1, f"block {block}: partial (max, sum)", ha="center", fontsize=8)
    ax.annotate("", xy=(4, 1.6), xytext=(28, 1.6), arrowprops={"arrowstyle": "<->"})
    ax.text(
        16,
        1.75,
        "each block reads the others' pairs from distributed shared memory (cluster.map_shared_rank)",
        ha="center",
        fontsize=8,
    )
    ax.set_title(
        "N = 2^18: a row over a cluster of C blocks (drawn with C = 4); each block holds N / C elements", fontsize=9
    )
    for ax in axes:
        ax.set_xlim(-6, 33)
        ax.set_ylim(-0.3, 4.2 if ax is axes[0] else 2.2)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


# Bytes and flops per element of a row (bf16): forward reads x, writes y; the backward reads x (or y) and dy, writes
# dx. Flops counted as the kernels do them in float32 (an exp counted as one).
OPS = {
    "softmax fwd": (4, 5),
    "softmax fwd+bwd": (10, 9),
    "LayerNorm fwd": (4, 8),
    "LayerNorm fwd+bwd": (10, 20),
    "RMSNorm fwd": (4, 5),
    "RMSNorm fwd+bwd": (10, 14),
}
H100_COPY_GBS = 3000.0  # device copy, read + write (chapter 07)
H100_FP32_TFLOPS = 67.0


def roofline(path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(8, 5.5))
    peak = H100_FP32_TFLOPS * 1e3
    ridge = peak / H100_COPY_GBS
    ax.loglog([0.05, ridge, 100], [H100_COPY_GBS * 0.05, peak, peak], "k-", label="H100: 3,000 GB/s copy, 67 TFLOP/s")
    for i, (name, (nbytes, flops)) in enumerate(OPS.items()):
        intensity = flops / nbytes
        ax.loglog(intensity, H100_COPY_GBS * intensity, "o", color=COLORS[i], label=f"{name}: {intensity:.2f} FLOP/B")
    ax.set(
        xlabel="arithmetic intensity (FLOP per byte moved)",
        ylabel="GFLOP/s at the roof",
        title=f"Every op sits far left of the ridge ({ridge:.0f} FLOP/B): bytes, not flops, set the time",
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def ours_in_summary(machine: str) -> dict[tuple[str, str, str, str], float]:
    """Ours in % of the copy, per (op, dtype, shape, pass), from results/<machine>/summary.md (make bench's table)."""
    ours = {}
    for line in (RESULTS / machine / "summary.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) > 4 and cells[0] in ("softmax", "layer_norm", "rms_norm"):
            ours[tuple(cells[:4])] = float(cells[4].strip("*"))
    return ours


ROW_KINDS = {  # the bench's shapes by kind of row
    "rows that fit a block": ("16384x4096", "65536x1024"),
    "odd rows (16384 x 4097)": ("16384x4097",),
    "rows longer than a block (4096 x 32768)": ("4096x32768",),
    "rows of 2^18 (512 x 262144)": ("512x262144",),
}


def h100_vs_h200(path: Path) -> Path:
    h100, h200 = ours_in_summary("h100"), ours_in_summary("h200")
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    ax.plot([55, 105], [55, 105], "k-", lw=0.8, label="as fast on both")
    for i, (kind, shapes) in enumerate(ROW_KINDS.items()):
        for pass_, marker in (("fwd", "o"), ("fwd+bwd", "s")):
            keys = [k for k in h100 if k in h200 and k[2] in shapes and k[3] == pass_]
            ax.scatter(
                [h100[k] for k in keys],
                [h200[k] for k in keys],
                color=COLORS[i],
                marker=marker,
                alpha=0.8,
                label=f"{kind}, {pass_}" if keys else None,
            )
    ax.set(
        xlim=(55, 105),
        ylim=(55, 105),
        xlabel="H100: ours, % of the device copy (3.0 TB/s)",
        ylabel="H200: ours, % of the device copy (4.0-4.2 TB/s)",
        title="The same kernels on two GPUs, each with its own plans:\n"
        "under the line, further from the copy on the H200",
    )
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    IMAGES.mkdir(exist_ok=True)
    for path in (
        rows_to_threads(IMAGES / "rows_to_threads.png"),
        roofline(IMAGES / "roofline.png"),
        h100_vs_h200(IMAGES / "h100_vs_h200.png"),
    ):
        print("wrote", path.relative_to(IMAGES.parent))


if __name__ == "__main__":
    main()
