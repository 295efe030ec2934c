"""float16 and bfloat16 without a GPU: the op's CPU path (fp32 sums on float32 copies, one rounding at the end, as
the tensor-core rungs compute), its checks, its fake implementation and opcheck. The kernels are tested on a GPU by
test_tensor_gpu.py; here the parts of the op around them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from helpers import make
from matmul import TENSOR_RUNGS, matmul, matmul_out

CHAPTER = Path(__file__).resolve().parents[1]

DTYPES = [torch.bfloat16, torch.float16]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("transposed", "sliced"), ("offset", "expanded")])
def test_cpu_path_sums_in_fp32_and_rounds_once(dtype, layouts):
    a, b = make((37, 45), layouts[0], dtype), make((45, 29), layouts[1], dtype)
    c = matmul(a, b)
    assert c.dtype == dtype and c.shape == (37, 29)
    expected = (a.float() @ b.float()).to(dtype)  # the same float32 sums may add in another order: a few ulps
    torch.testing.assert_close(c, expected)
    out = torch.full((37, 29), float("nan"), dtype=dtype)
    matmul_out(a, b, out)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rungs_are_checked_for_the_dtype(dtype):
    a = torch.randn(4, 3, dtype=dtype)
    for rung in [-1, *TENSOR_RUNGS]:
        assert matmul(a, a.t(), rung).shape == (4, 4)
    with pytest.raises(ValueError, match="rung 8 has no .* kernel: .* float16 and bfloat16 rungs 9-11"):
        matmul(a, a.t(), rung=8)
    with pytest.raises(ValueError, match="rung must be -1"):
        matmul(a, a.t(), rung=12)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gradients_on_the_cpu(dtype):
    a = make((6, 5), "contiguous", dtype).requires_grad_()
    b = make((5, 4), "contiguous", dtype).requires_grad_()
    matmul(a, b).sum().backward()
    torch.testing.assert_close(a.grad, torch.ones(6, 4, dtype=dtype) @ b.detach().t())
    torch.testing.assert_close(b.grad, a.detach().t() @ torch.ones(6, 4, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opcheck_on_the_cpu(dtype):
    a, b = make((8, 16), "contiguous", dtype), make((16, 24), "transposed", dtype)
    torch.library.opcheck(torch.ops.matmul.matmul, (a, b, -1))
    torch.library.opcheck(torch.ops.matmul.matmul, (a, b, 10))
    torch.library.opcheck(torch.ops.matmul.matmul_out, (a, b, torch.empty(8, 24, dtype=dtype), -1))


def test_fake_implementation_takes_bf16():
    a, b = (
        torch.empty(4, 3, device="meta", dtype=torch.bfloat16),
        torch.empty(3, 2, device="meta", dtype=torch.bfloat16),
    )
    c = matmul(a, b, 11)
    assert c.shape == (4, 2) and c.dtype == torch.bfloat16


# ---- rung 10's shared-memory addressing, emulated: the swizzled tiles, the lanes' ldmatrix addresses, and what
# ldmatrix hands each lane, against the mma's fragment layout (matmul.plots.fragment_owners, from the PTX ISA).
# The two index functions and the lane formulas mirror src/matmul_tensor.cu (a_index, b_index, load_fragments), for
# the op's tile (MmaTile) and the other K-tile width the swizzle is written for.
TILES = {  # (BM, BN, BK, warps along M, warps along N)
    "the op's tile": None,  # read from the source below
    "BK = 64": (128, 128, 64, 2, 2),
}


def op_tile() -> tuple[int, ...]:
    source = (CHAPTER / "src" / "matmul_tensor.cu").read_text()
    found = re.search(r"using MmaTile = MmaTileShape<(\d+), (\d+), (\d+), \d+, (\d+), (\d+), \d+>;", source)
    assert found, "matmul_tensor.cu names the op's tile as `using MmaTile = MmaTileShape<...>;`"
    return tuple(int(v) for v in found.groups())


def a_index(r: int, k: int, bk: int) -> int:
    rows_per_128, chunks = 128 // (bk * 2), bk // 8
    return r * bk + (((k // 8) ^ ((r // rows_per_128) & (chunks - 1))) * 8) + k % 8


def b_index(k: int, n: int, bn: int) -> int:
    return k * bn + (((n // 8) ^ (k & 7)) * 8) + n % 8


def ldmatrix_x4(smem: list, addresses: list[int], trans: bool) -> list[list[tuple]]:
    """What each of the 32 lanes receives: 4 registers of 2 elements. Matrix q's 8 rows start at the addresses
    given by lanes 8q..8q+7 (8 contiguous 16-bit elements each); lane t gets row t//4, elements 2(t%4) and +1 of
    each matrix, or with .trans element t//4 of rows 2(t%4) and +1."""
    out = [[None] * 4 for _ in range(32)]
    for q in range(4):
        rows = [smem[addresses[8 * q + i] : addresses[8 * q + i] + 8] for i in range(8)]
        for t in range(32):
            if trans:
                out[t][q] = (rows[2 * (t % 4)][t // 4], rows[2 * (t % 4) + 1][t // 4])
            else:
                out[t][q] = (rows[t // 4][2 * (t % 4)], rows[t // 4][2 * (t % 4) + 1])
    return out


def conflict_free(addresses: list[int]) -> bool:
    """Each group of 8 lanes (one 8×8 matrix, one shared-memory wavefront) reads 8 different 16-byte bank groups."""
    return all(len({(addresses[8 * q + i] * 2 // 16) % 8 for i in range(8)}) == 8 for q in range(4))


@pytest.mark.parametrize("tile", TILES)
def test_rung_10_ldmatrix_hands_each_lane_its_mma_fragment(tile):
    from matmul.plots import fragment_owners

    bm, bn, bk, warps_m, warps_n = TILES[tile] or op_tile()
    wm, wn = bm // warps_m, bn // warps_n  # a warp's piece of C
    owners_a, owners_b, _ = fragment_owners()
    smem_a, smem_b = [None] * (bm * bk), [None] * (bk * bn)
    for r in range(bm):
        for k in range(bk):
            smem_a[a_index(r, k, bk)] = ("A", r, k)
    for k in range(bk):
        for n in range(bn):
            smem_b[b_index(k, n, bn)] = ("B", k, n)
    assert None not in smem_a and None not in smem_b, "the swizzle is a permutation of the tile"
    for warp in range(warps_m * warps_n):
        warp_m, warp_n = warp // warps_n, warp % warps_n
        for kk in range(0, bk, 16):
            for i in range(wm // 16):  # A: the warp's 16-row fragments
                addresses = [a_index(warp_m * wm + i * 16 + lane % 16, kk + (lane // 16) * 8, bk) for lane in range(32)]
                assert conflict_free(addresses)
                got = ldmatrix_x4(smem_a, addresses, trans=False)
                for row in range(16):
                    for col in range(16):
                        lane, reg = owners_a[row][col]
                        assert ("A", warp_m * wm + i * 16 + row, kk + col) in got[lane][reg]
            for j in range(wn // 16):  # B: pairs of 8-column tiles, transposed by ldmatrix
                addresses = [b_index(kk + lane % 16, warp_n * wn + j * 16 + (lane // 16) * 8, bn) for lane in range(32)]
                assert conflict_free(addresses)
                got = ldmatrix_x4(smem_b, addresses, trans=True)
                for half in range(2):  # the kernel's fb[j][2·half], fb[j][2·half + 1] = b0, b1 of tile 2j + half
                    for k in range(16):
                        for n in range(8):
                            lane, reg = owners_b[k][n]
                            element = ("B", kk + k, warp_n * wn + (2 * j + half) * 8 + n)
                            assert element in got[lane][2 * half + reg]


def test_fragment_picture_covers_every_element_once():
    from matmul.plots import fragment_owners

    a, b, c = fragment_owners()
    for owners, per_lane in ((a, 8), (b, 4), (c, 4)):  # 16-bit A and B: 2 per register; C: one fp32 per register
        counts = {}
        for row in owners:
            for lane, _ in row:
                counts[lane] = counts.get(lane, 0) + 1
        assert sorted(counts) == list(range(32)) and set(counts.values()) == {per_lane}
