"""The formulas on the CPU emulation: correct ones map threads one-to-one onto [0, threads); the seeds' wrong ones
collide and leave gaps; the 32-bit index overflows past 2^31. Runs anywhere (no GPU)."""

import pytest
import thread_index as ti
import torch
from reference import as_int32, hits, launch_order

# Awkward launch shapes per number of dimensions: ones, odd sizes, sizes that are not multiples of a warp.
SHAPES = {
    1: [(1,), (7,), (33,), (130,)],
    2: [(1, 1), (5, 3), (3, 2), (33, 2), (1, 17)],
    3: [(1, 1, 1), (3, 2, 2), (5, 1, 3), (2, 7, 3)],
}
BLOCK_SHAPES = {1: [(1,), (32,), (37,)], 2: [(4, 3), (16, 6), (1, 5)], 3: [(4, 2, 3), (3, 3, 3), (8, 4, 2)]}


def launches(name):
    grid_dims, block_dims = ti.formula_dims(name)
    for k, grid in enumerate(SHAPES[grid_dims]):
        yield pytest.param(
            name,
            grid,
            BLOCK_SHAPES[block_dims][k % len(BLOCK_SHAPES[block_dims])],
            id=f"{name}-g{'x'.join(map(str, grid))}",
        )


ALL_CORRECT = [p for name in ti.correct_formulas() for p in launches(name)]


def pad(shape):
    return (*shape, 1, 1)[:3]


@pytest.mark.parametrize("name, grid, block", ALL_CORRECT)
def test_correct_formula_is_one_to_one(name, grid, block):
    table = ti.emulate(name, grid, block)
    block_idx, thread_idx, _, thread_number = launch_order(pad(grid), pad(block))
    total = block_idx.shape[0]
    # launch order is also index order: thread k of the launch gets element k, so every element exactly once
    torch.testing.assert_close(table.global_index, torch.arange(total))
    assert hits(table.global_index, total).eq(1).all()
    torch.testing.assert_close(table.block_idx, block_idx)
    torch.testing.assert_close(table.thread_idx, thread_idx)
    torch.testing.assert_close(table.warp, thread_number // 32)
    torch.testing.assert_close(table.lane, thread_number % 32)


def test_all_correct_formulas_agree_where_their_shapes_meet():
    # a 1 x 1 x 1-shaped extra dimension changes nothing: on a 1D launch every formula is the 1D one
    expected = torch.arange(5 * 37)
    for name in ti.correct_formulas():
        torch.testing.assert_close(ti.emulate(name, 5, 37).global_index, expected, msg=name)


def test_general_formula_on_a_big_3d_launch():
    grid, block = (7, 5, 3), (8, 4, 4)
    table = ti.emulate("grid3d_block3d", grid, block)
    torch.testing.assert_close(table.global_index, torch.arange(7 * 5 * 3 * 8 * 4 * 4))


# ---- the seeds' pitfalls ---------------------------------------------------------------------------------------


def test_pitfall_1d_griddim_collides_and_leaves_gaps():
    grid, block = 3, 8  # fewer blocks than threads per block
    table = ti.emulate("pitfall_1d_griddim", grid, block)
    block_idx, thread_idx, _, _ = launch_order(pad((grid,)), pad((block,)))
    expected = block_idx[:, 0] * grid + thread_idx[:, 0]  # the seed's blockIdx.x * gridDim.x + threadIdx.x
    torch.testing.assert_close(table.global_index, expected)
    count = hits(table.global_index, grid * block)
    assert count.max() > 1, "two threads should share an element"
    assert (count == 0).any(), "some elements should be left out"
    # and the fix, on the same launch:
    assert hits(ti.emulate("grid1d_block1d", grid, block).global_index, grid * block).eq(1).all()


def test_pitfall_1d_griddim_looks_right_when_grid_equals_block():
    # why the bug survives casual testing: with gridDim.x == blockDim.x the two formulas agree
    torch.testing.assert_close(ti.emulate("pitfall_1d_griddim", 8, 8).global_index, torch.arange(64))


def test_pitfall_2d_add_dim_collides_and_leaves_gaps():
    grid, block = (3, 2), (4, 3)
    table = ti.emulate("pitfall_2d_add_dim", grid, block)
    b, t, _, _ = launch_order(pad(grid), pad(block))
    thread_in_block = t[:, 1] * block[0] + block[0]  # seed: threadIdx.y * blockDim.x + blockDim.x
    block_in_grid = b[:, 1] * grid[0] + grid[0]  # seed: blockIdx.y * gridDim.x + gridDim.x
    expected = block_in_grid * (block[0] * block[1]) + thread_in_block
    torch.testing.assert_close(table.global_index, expected)
    total = 6 * 12
    count = hits(table.global_index, total)
    assert count.max() >= block[0] * grid[0], "a whole row of threads across the grid lands on one element"
    assert (count == 0).sum() > total // 2
    assert (table.global_index >= total).any(), "and some threads write past the end"


@pytest.mark.parametrize("rows, cols", [(3, 5), (4, 5), (6, 4)])
def test_pitfall_seed000_whole_block_on_one_element(rows, cols):
    # seed 000 §8.1.2: grid (rows, cols), 4 threads per block, index blockIdx.x + blockDim.x * blockIdx.y
    table = ti.emulate("pitfall_seed000", (rows, cols), 4)
    b, _, block_number, _ = launch_order((rows, cols, 1), (4, 1, 1))
    torch.testing.assert_close(table.global_index, b[:, 0] + 4 * b[:, 1])
    per_block = table.global_index.view(-1, 4)
    assert per_block.eq(per_block[:, :1]).all(), "all 4 threads of every block compute the same element"
    count = hits(table.global_index, rows * cols)
    assert count.max() >= 4
    if rows != 4:  # only rows == blockDim.x == 4 happens to reach every element (each 4 times)
        assert (count == 0).any() or count.max() > 4


# ---- 32-bit index overflow, without 2^31 elements -------------------------------------------------------------


def test_int32_index_overflows_past_2_31_and_64_bit_fixes_it():
    threads = 256
    blocks = 2**31 // threads + 1  # the last block starts exactly at element 2^31
    last = blocks - 1
    reference = last * threads + torch.arange(threads)  # in int64: 2^31 .. 2^31 + 255
    wide = ti.emulate("grid1d_block1d", blocks, threads, first_block=last)
    narrow = ti.emulate("pitfall_int32_1d", blocks, threads, first_block=last)
    torch.testing.assert_close(wide.global_index, reference)
    torch.testing.assert_close(narrow.global_index, as_int32(reference))
    assert (narrow.global_index < 0).all(), "int32 turns negative: an out-of-bounds address, before the buffer"
    # one block earlier everything still fits, which is why small tests never see it
    before = ti.emulate("pitfall_int32_1d", blocks, threads, first_block=last - 1, n_blocks=1)
    torch.testing.assert_close(before.global_index, (last - 1) * threads + torch.arange(threads))


def test_int32_index_wraps_onto_small_numbers_past_2_32():
    threads = 1024
    blocks = 2**32 // threads + 2
    reference = (blocks - 1) * threads + torch.arange(threads)
    narrow = ti.emulate("pitfall_int32_1d", blocks, threads, first_block=blocks - 1)
    torch.testing.assert_close(narrow.global_index, as_int32(reference))
    assert narrow.global_index.min() >= 0, "past 2^32 it wraps to small positive numbers: silent collisions"
    torch.testing.assert_close(
        ti.emulate("grid1d_block1d", blocks, threads, first_block=blocks - 1).global_index, reference
    )


# ---- grid-stride loop ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, blocks, threads", [(0, 2, 4), (1, 2, 4), (7, 2, 4), (1000, 3, 32), (12345, 5, 96)])
def test_grid_stride_covers_n_larger_than_the_grid(n, blocks, threads):
    owner, counts = ti.emulate_grid_stride(n, blocks, threads)
    assert counts.eq(1).all()
    torch.testing.assert_close(owner, torch.arange(n) % (blocks * threads))


# ---- bad input -------------------------------------------------------------------------------------------------


def test_unknown_formula_is_named():
    with pytest.raises(ValueError, match="unknown formula 'grid4d'"):
        ti.emulate("grid4d", 1, 1)
    with pytest.raises(ValueError, match="formula must be"):
        ti.emulate(99, 1, 1)


@pytest.mark.parametrize(
    "grid, block, error, match",
    [
        (0, 1, ValueError, "grid entries"),
        (1, (2, 0), ValueError, "block entries"),
        ((1, 1, 1, 1), 1, TypeError, "grid must be"),
        (1, 2.0, TypeError, "block must be"),
        (2**32, 1, ValueError, "grid entries"),
    ],
)
def test_bad_launch_shapes(grid, block, error, match):
    with pytest.raises(error, match=match):
        ti.emulate("grid1d_block1d", grid, block)


def test_bad_block_range_and_size():
    with pytest.raises(ValueError, match="first_block=5"):
        ti.emulate("grid1d_block1d", 4, 32, first_block=5)
    with pytest.raises(ValueError, match="threads to record"):
        ti.emulate("grid1d_block1d", 2**20, 1024)
    with pytest.raises(ValueError, match="n must be"):
        ti.emulate_grid_stride(-1, 1, 1)


def test_formula_names_and_shapes():
    names = ti.formulas()
    assert len(ti.correct_formulas()) == 9 and len(ti.pitfalls()) == 4
    assert list(names.values()) == list(range(len(names)))
    assert ti.formula_dims("grid2d_block3d") == (2, 3)
