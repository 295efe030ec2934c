"""The chapter's pictures of the tiles, drawn with matplotlib into images/ (python -m matmul.plots).

tiles_block.png    block level: the tile of C one block computes, and the panels of A and B it walks along K
tiles_warp.png     warp level: rung 7's 64×256 block tile cut into the 8 warps' 64×32 tiles
tiles_thread.png   thread level: which 64 outputs one thread owns in a warp tile, rung 5 (an 8×8 square) and
                   rungs 6-8 (2×2 blocks of 4×4, spaced by the lanes), with the lanes that share its A values
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

IMAGES = Path(__file__).resolve().parents[1] / "images"


def _box(ax, x, y, w, h, color, alpha=1.0, text=None, **kw):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black", alpha=alpha, lw=kw.pop("lw", 1)))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=kw.pop("fontsize", 9))


def block_level(path: Path) -> Path:
    """C (M×N) with one block's tile; A's row panel and B's column panel; the K-tile in flight."""
    fig, ax = plt.subplots(figsize=(9, 6))
    M, N, K, bm, bn, bk = 8, 10, 6, 1, 2, 1  # in tiles
    # B above C, A left of C (the usual picture of C = A·B)
    ox, oy = K + 1, 0
    for i in range(M):
        for j in range(N):
            _box(ax, ox + j, oy + M - 1 - i, 1, 1, "#f2f2f2")
    _box(ax, ox + 4, oy + M - 1 - 3, bn, bm, "#f4a261", text="block's\nC tile", fontsize=8)
    for k in range(K):
        for i in range(M):
            _box(ax, k, M - 1 - i, 1, 1, "#f2f2f2")
        for j in range(N):
            _box(ax, ox + j, M + 1 + K - 1 - k, 1, 1, "#f2f2f2")
    for k in range(K):
        _box(ax, k, M - 1 - 3, 1, bm, "#a8dadc")
        _box(ax, ox + 4, M + 1 + K - 1 - k, bn, 1, "#a8dadc")
    _box(ax, 2, M - 1 - 3, bk, bm, "#457b9d", text="A tile", fontsize=7)
    _box(ax, ox + 4, M + 1 + K - 1 - 2, bn, bk, "#457b9d", text="B tile", fontsize=7)
    ax.text(K / 2, -0.8, "A (M×K): a row panel,\none K-tile at a time", ha="center", va="top", fontsize=9)
    ax.text(ox + N / 2, M + K + 1.5, "B (K×N): ... and B's column panel", ha="center", fontsize=9)
    ax.text(ox + N / 2, -0.8, "C (M×N): one block per tile", ha="center", va="top", fontsize=9)
    ax.set_xlim(-0.5, ox + N + 0.5)
    ax.set_ylim(-2.5, M + K + 2.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("Block level: each K-tile of A and B is loaded once into shared memory, then used BN (A) or BM (B)"
                 " times", fontsize=9)  # fmt: skip
    return _save(fig, path)


def warp_level(path: Path) -> Path:
    """Rung 7's block tile: 64 rows × 256 columns, 8 warps of 64×32 side by side."""
    fig, ax = plt.subplots(figsize=(11, 3.6))
    colors = plt.cm.tab10.colors
    for w in range(8):
        _box(ax, w * 32, 0, 32, 64, colors[w], alpha=0.5, text=f"warp {w}\n64×32")
    ax.set_xlim(-2, 258)
    ax.set_ylim(-12, 70)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.text(128, -8, "rung 7's block tile of C: 64 × 256, 8 warps × 32 threads; each thread 8×8 = 64 outputs",
            ha="center", fontsize=9)  # fmt: skip
    ax.set_title("Warp level: a warp reads a 64-row strip of A's tile and a 32-column strip of B's per k", fontsize=9)
    return _save(fig, path)


def thread_level(path: Path) -> Path:
    """A 64×32 warp tile: the outputs of lane 0 and lane 5, rung 5's square layout next to rungs 6-8's spread one."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 9.5))
    for ax, spread in zip(axes, (False, True)):
        for i in range(64):
            for j in range(32):
                _box(ax, j, 63 - i, 1, 1, "white", lw=0.2)
        for lane, color in ((0, "#e63946"), (5 if spread else 1, "#2a9d8f")):
            if spread:  # lanes are 8 (m) × 4 (n); a thread's outputs: rows s·32 + tm·4 + 0..3, cols s·16 + tn·4 + 0..3
                tm, tn = lane // 4, lane % 4
                rows = [s * 32 + tm * 4 + r for s in range(2) for r in range(4)]
                cols = [s * 16 + tn * 4 + c for s in range(2) for c in range(4)]
            else:  # rung 5: thread (trow, tcol) = (t / 16, t mod 16) owns the 8×8 square at (8·trow, 8·tcol)
                trow, tcol = lane // 16, lane % 16
                rows = [trow * 8 + r for r in range(8)]
                cols = [tcol * 8 + c for c in range(8)]
            for r in rows:
                for c in cols:
                    _box(ax, c, 63 - r, 1, 1, color, lw=0.2)
            ax.text(cols[0], 63 - rows[-1] - 0.3, f"lane {lane}", color=color, fontsize=8, va="top")
        ax.set_xlim(-1, 33)
        ax.set_ylim(-2, 65)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(
            "rungs 6-8 (lanes 0 and 5): 2×2 blocks of 4×4, 32 rows and\n16 columns apart: the lanes reading B at one k"
            " read 64\ncontiguous bytes, those reading A 128: no bank conflict"
            if spread
            else "rung 5 (lanes 0 and 1): an 8×8 square each: lanes 0-15\nread B 32 bytes apart at one k (256 bytes"
            " for 8 lanes):\n2-way bank conflicts",
            fontsize=9,
        )
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    for draw, name in ((block_level, "tiles_block.png"), (warp_level, "tiles_warp.png"),
                       (thread_level, "tiles_thread.png")):  # fmt: skip
        print(draw(IMAGES / name))


if __name__ == "__main__":
    main()
