"""The chapter's pictures of the tiles, drawn with matplotlib into images/ (python -m matmul.plots).

tiles_block.png    block level: the tile of C one block computes, and the panels of A and B it walks along K
tiles_warp.png     warp level: rung 7's 64×256 block tile cut into the 8 warps' 64×32 tiles
tiles_thread.png   thread level: which 64 outputs one thread owns in a warp tile, rung 5 (an 8×8 square) and
                   rungs 6-8 (2×2 blocks of 4×4, spaced by the lanes), with the lanes that share its A values
mma_fragments.png  part 2: mma.sync m16n8k16, which lane of the warp holds which element of A, B and C, and in which
                   of its registers (the PTX ISA's layout for 16-bit inputs and fp32 accumulators)
swizzle.png        part 2: rung 10's B tile in shared memory, 8 rows that one ldmatrix reads, without and with the
                   XOR swizzle: which of the 8 16-byte bank groups each row's chunk lands in
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


# ---- part 2 -------------------------------------------------------------------------------------------------------
# mma.sync.m16n8k16 with .bf16/.f16 inputs (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane = 4·group + t.
#   A (16×16, row-major): register r = 0..3 holds two neighbours (row, 2t), (row, 2t+1) with
#       row = group + 8·(r % 2), columns + 8·(r // 2)
#   B (16×8, k × n): register r = 0..1 holds (k = 2t + 8r, n = group) and (k = 2t + 8r + 1, n = group)
#   C (16×8, fp32): c0, c1 at (group, 2t), (group, 2t+1); c2, c3 at (group + 8, the same columns)
def fragment_owners():
    """(A, B, C): for each element, (lane, register) that holds it. A is 16×16, B 16×8 (k rows), C 16×8."""
    a = [[None] * 16 for _ in range(16)]
    b = [[None] * 8 for _ in range(16)]
    c = [[None] * 8 for _ in range(16)]
    for lane in range(32):
        group, t = lane // 4, lane % 4
        for r in range(4):
            row, col = group + 8 * (r % 2), 2 * t + 8 * (r // 2)
            a[row][col] = a[row][col + 1] = (lane, r)
        for r in range(2):
            b[2 * t + 8 * r][group] = b[2 * t + 8 * r + 1][group] = (lane, r)
        for e in range(4):
            c[group + 8 * (e // 2)][2 * t + e % 2] = (lane, e)
    return a, b, c


REGISTER_COLORS = ["#a8dadc", "#f4a261", "#e9c46a", "#b5e48c"]


def mma_fragments(path: Path) -> Path:
    a, b, c = fragment_owners()
    fig, axes = plt.subplots(1, 3, figsize=(15, 6.5), gridspec_kw={"width_ratios": [16, 8, 8]})
    panels = [
        (
            axes[0],
            a,
            "A, 16×16 (rows m, columns k): lane, register a0-a3\n(each register: two neighbours in a row)",
            "a",
        ),
        (axes[1], b, "B, 16×8 (rows k, columns n): lane, register b0-b1\n(two neighbours in a column)", "b"),
        (axes[2], c, "C and D, 16×8 fp32: lane, register c0-c3", "c"),
    ]
    for ax, owners, title, letter in panels:
        rows, cols = len(owners), len(owners[0])
        for i in range(rows):
            for j in range(cols):
                lane, reg = owners[i][j]
                _box(ax, j, rows - 1 - i, 1, 1, REGISTER_COLORS[reg], text=f"{lane}\n{letter}{reg}", fontsize=6)
        ax.set_xlim(0, cols)
        ax.set_ylim(0, rows)
        ax.set_aspect("equal")
        ax.set_xticks([x + 0.5 for x in range(cols)], [str(x) for x in range(cols)], fontsize=6)
        ax.set_yticks([y + 0.5 for y in range(rows)], [str(rows - 1 - y) for y in range(rows)], fontsize=6)
        ax.set_title(title, fontsize=9)
    fig.suptitle("mma.sync.m16n8k16 (bf16/fp16 in, fp32 out): D = A·B + C for a warp of 32 lanes; lane = 4·group + t",
                 fontsize=10)  # fmt: skip
    return _save(fig, path)


def swizzle(path: Path) -> Path:
    """Rows 0-7 of rung 10's B tile, their first 16 chunks of 16 bytes (of 32: a row is 512 bytes, and the pattern
    repeats every 8 chunks); ldmatrix reads chunk 0 of each. A bank
    group is 16 bytes of the 128 that the 32 banks cover: chunk c of a row sits in group c % 8 unswizzled, and in group
    (c ^ row) % 8 swizzled."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 4))
    for ax, swizzled in zip(axes, (False, True)):
        for row in range(8):
            for chunk in range(16):
                stored = (chunk ^ row) if swizzled else chunk
                read = chunk == 0
                _box(ax, stored, 7 - row, 1, 1, "#e76f51" if read else "#f2f2f2", text=str(chunk), fontsize=7)
        for g in range(16):
            ax.text(g + 0.5, 8.2, f"g{g % 8}", ha="center", fontsize=7)
        ax.set_xlim(0, 16)
        ax.set_ylim(0, 8.6)
        ax.set_aspect("equal")
        ax.set_yticks([y + 0.5 for y in range(8)], [f"k row {7 - y}" for y in range(8)], fontsize=7)
        ax.set_xticks([])
        conflict = "8 rows in bank group 0: an 8-way conflict" if not swizzled else "8 rows in 8 groups: no conflict"
        ax.set_title(("swizzled: chunk c of row r stored at c ^ (r % 8)" if swizzled else "row-major, unswizzled")
                     + f"\nldmatrix reads chunk 0 of rows 0-7 (red): {conflict}", fontsize=9)  # fmt: skip
    fig.suptitle("Rung 10's B tile in shared memory: 16-byte chunks (numbers: the chunk's place in the row of B); "
                 "gN: bank group (4 banks)", fontsize=9)  # fmt: skip
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    for draw, name in ((block_level, "tiles_block.png"), (warp_level, "tiles_warp.png"),
                       (thread_level, "tiles_thread.png"), (mma_fragments, "mma_fragments.png"),
                       (swizzle, "swizzle.png")):  # fmt: skip
        print(draw(IMAGES / name))


if __name__ == "__main__":
    main()
