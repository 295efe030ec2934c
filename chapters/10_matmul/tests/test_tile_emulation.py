"""Rung 2's per-thread code (src/matmul_tile.cuh — the exercise) run on the CPU for every thread of its grid, one
phase at a time (src/matmul_emulate.cu). These run without a GPU: they compile the header the kernel of rung 2 uses.
Shared memory starts as NaN before every load phase, so a tile element that no thread writes shows up."""

from __future__ import annotations

import pytest
import torch
from helpers import LAYOUTS, assert_close_to_reference, make
from matmul import matmul  # noqa: F401 (importing the package loads the ops)

emulate = torch.ops.matmul.emulate_shared_tiles


@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (32, 32, 32), (7, 33, 127), (33, 7, 1), (64, 96, 40), (100, 70, 65)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_emulated_tiles_match_float64(M, N, K, dtype):
    a, b = make((M, K), "contiguous", dtype, seed=M), make((K, N), "contiguous", dtype, seed=K)
    assert_close_to_reference(emulate(a, b), a, b, f"{M}x{N}x{K}")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_emulated_tiles_read_through_strides(layout):
    a, b = make((45, 38), layout, seed=1), make((38, 50), layout, seed=2)
    assert_close_to_reference(emulate(a, b), a, b, layout)


def test_one_tile_in_the_emulation_by_hand():
    """A 32×32 block, one K-tile: every output is the dot product of a row and a column (small integers: exact)."""
    a = torch.arange(32 * 32, dtype=torch.float64).reshape(32, 32) % 7
    b = torch.arange(32 * 32, dtype=torch.float64).reshape(32, 32).t() % 5
    assert torch.equal(emulate(a, b), a @ b)


def test_k_zero_gives_zeros():
    assert torch.equal(emulate(torch.empty(3, 0), torch.empty(0, 4)), torch.zeros(3, 4))
