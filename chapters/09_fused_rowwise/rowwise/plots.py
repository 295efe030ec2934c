"""The lesson's pictures, drawn with matplotlib into images/ (`python -m rowwise.plots`):

rows_to_threads.png   how a row's 16-byte packs map to its G threads (src/row_reduce.cuh): slot k of thread g holds
                      pack k * G + g, so each slot is one coalesced load of consecutive packs; (a) short rows sharing
                      a 256-thread block, (b) an odd row with its scalar head and partial last pack, (c) a row over a
                      cluster of blocks whose (max, sum) pairs merge through distributed shared memory
roofline.png          where each op sits on chapter 07's roofline (H100 figures)
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

IMAGES = Path(__file__).resolve().parents[1] / "images"
COLORS = plt.get_cmap("tab10").colors


def _row(ax, y, owners, label, height=0.8, names=None, x0=0.0, widths=None):
    """A row of cells from x0; owners[i] is the thread (a color) that holds cell i, widths[i] its width (1: a pack)."""
    x = x0
    for i, owner in enumerate(owners):
        width = 1.0 if widths is None else widths[i]
        ax.add_patch(Rectangle((x, y), width, height, facecolor=COLORS[owner % 10], edgecolor="white", alpha=0.85))
        if names is not None:
            ax.text(x + width / 2, y + height / 2, names[i], ha="center", va="center", fontsize=6, color="white")
        x += width
    ax.text(x0 - 0.5, y + height / 2, label, ha="right", va="center", fontsize=8)


def _slots(ax, x0, y, height, slots, per_slot, first_label=True):
    """Marks the slots of a row drawn from x0: a bar between slots and 'slot k: packs ...' above each."""
    for k in range(slots):
        left = x0 + k * per_slot
        if k:
            ax.plot([left, left], [y - 0.12, y + height + 0.12], color="black", lw=1.6)
        if first_label:
            ax.text(
                left + per_slot / 2,
                y + height + 0.12,
                f"slot {k}: packs {k * per_slot}-{(k + 1) * per_slot - 1}",
                ha="center",
                va="bottom",
                fontsize=7.5,
            )


def rows_to_threads(path: Path) -> Path:
    fig, axes = plt.subplots(3, 1, figsize=(11, 7.5), gridspec_kw={"height_ratios": [1.25, 1.0, 1.55]})
    g, slots = 8, 4  # drawn small: 8 threads a row for 128 (or 256), 4 slots

    # (a) short rows: a 256-thread block holds 2 rows of G = 128 threads, 4 packs a thread
    ax = axes[0]
    for r in range(2):
        y = 1.3 * (1 - r)
        owners = [p % g for p in range(slots * g)]
        _row(ax, y, owners, f"row {r}: threads {128 * r}-{128 * r + 127}", names=[f"g{o}" for o in owners])
        _slots(ax, 0, y, 0.8, slots, g, first_label=r == 0)
    ax.set_title(
        "(a) short rows, n = 4096 bf16 (512 packs of 16 bytes): G = 128 threads a row, 2 rows a 256-thread block "
        "(8 threads shown for 128)\n"
        "slot k of thread g is pack k·G + g: in each slot the row's threads load consecutive packs (coalesced)",
        fontsize=9,
    )
    ax.set_ylim(-0.25, 2.55)

    # (b) an odd row: 3 head elements, one each in threads 0-2, then the packs; the last pack holds 6 of 8
    ax = axes[1]
    head = 3
    owners = list(range(head)) + [p % g for p in range(slots * g)]
    widths = [0.5] * head + [1.0] * (slots * g - 1) + [0.75]
    names = [str(t) for t in range(head)] + [f"g{p % g}" for p in range(slots * g)]
    _row(ax, 0, owners, "row 5 (odd n)", names=names, widths=widths)
    x0 = head * 0.5
    end = x0 + slots * g - 0.25  # the 2 elements the last pack lacks: past the row's end
    ax.add_patch(Rectangle((end, 0), 0.25, 0.8, facecolor="none", edgecolor="gray", linestyle="--", lw=0.8))
    _slots(ax, x0, 0, 0.8, slots, g)
    ax.annotate(
        "head: 3 elements before the\nfirst 16-byte boundary, one each\nin threads 0, 1, 2",
        xy=(0.75, 0),
        xytext=(0.75, -0.75),
        ha="center",
        va="top",
        fontsize=7.5,
        arrowprops={"arrowstyle": "->", "lw": 0.8},
    )
    ax.annotate(
        "last pack partial:\n6 of 8 elements",
        xy=(x0 + slots * g - 0.625, 0),
        xytext=(x0 + slots * g - 0.625, -0.75),
        ha="center",
        va="top",
        fontsize=7.5,
        arrowprops={"arrowstyle": "->", "lw": 0.8},
    )
    ax.set_title(
        "(b) odd rows, n = 4097 bf16: row 5 starts 5 elements past a 16-byte boundary, so head = 3 "
        "(drawn small: 8 threads, 4 slots)\n"
        "the packs start after the head: slot k of thread g covers columns head + (k·G + g)·8 ... + 7",
        fontsize=9,
    )
    ax.set_ylim(-1.75, 1.45)

    # (c) a row over a cluster of C = 4 blocks: thread g = rank * blockDim + t, same formula
    ax = axes[2]
    blocks, per_block, cslots = 4, 4, 2
    cg = blocks * per_block
    y = 1.9
    owners = [(p % cg) // per_block for p in range(cslots * cg)]
    names = [f"g{p % cg}" for p in range(cslots * cg)]
    _row(ax, y, owners, "one long row", names=names)
    _slots(ax, 0, y, 0.8, cslots, cg)
    for block in range(blocks):
        center = 4 + block * 8
        ax.add_patch(
            FancyBboxPatch(
                (center - 3.2, 0.35),
                6.4,
                0.7,
                boxstyle="round,pad=0.05",
                facecolor=COLORS[block],
                edgecolor="none",
                alpha=0.85,
            )
        )
        ax.text(center, 0.7, f"block {block}: (max, sum)", ha="center", va="center", fontsize=8, color="white")
        for k in range(cslots):  # the block's threads in each slot feed its partial pair
            left = k * cg + block * per_block
            ax.plot([left + per_block / 2, center], [y, 1.1], color=COLORS[block], lw=0.8, alpha=0.7)
    ax.annotate("", xy=(1.0, 0.05), xytext=(31.0, 0.05), arrowprops={"arrowstyle": "<->", "lw": 1.2})
    ax.text(
        16,
        -0.12,
        "every block reads the 4 pairs from distributed shared memory (cluster.map_shared_rank) and merges them in "
        "rank order\n(rung 5; rung 4, without a cluster, passes them through global memory between two launches)",
        ha="center",
        va="top",
        fontsize=8,
    )
    ax.set_title(
        "(c) n = 2¹⁸ bf16: 32768 packs over G = 8192 threads in a cluster of C blocks (16 of 512 or 8 of 1024); "
        "drawn with C = 4 blocks of 4 threads\n"
        "thread g = rank·blockDim + t: block r holds packs r·blockDim ... of every slot",
        fontsize=9,
    )
    ax.set_ylim(-0.85, 3.25)

    for ax in axes:
        ax.set_xlim(-7.5, 34)
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


def main() -> None:
    IMAGES.mkdir(exist_ok=True)
    for path in (
        rows_to_threads(IMAGES / "rows_to_threads.png"),
        roofline(IMAGES / "roofline.png"),
    ):
        print("wrote", path.relative_to(IMAGES.parent))


if __name__ == "__main__":
    main()
