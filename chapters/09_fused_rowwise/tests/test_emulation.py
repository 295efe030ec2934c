"""The two exercises, run on the CPU (rowwise/emulate.py): the per-lane logic of the warp-per-row softmax
(src/online_softmax.h), one POSIX thread per lane, and the two-stage dweight sums (src/two_stage.h), one thread per row
group; or the student's copies in exercises/ under EXERCISE=1."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from rowwise import emulate

INF, NAN = float("inf"), float("nan")


def test_online_add_rescales_to_a_new_max():
    pair = (-INF, 0.0)
    for x in (1.0, 3.0, 2.0):
        pair = emulate.add(pair, x)
    assert pair[0] == 3.0
    assert math.isclose(pair[1], math.exp(-2) + 1 + math.exp(-1), rel_tol=1e-6)


def test_online_add_ignores_minus_infinity():
    assert emulate.add((-INF, 0.0), -INF) == (-INF, 0.0)
    assert emulate.add((2.0, 1.5), -INF) == (2.0, 1.5)


def test_merge_of_two_parts():
    a = (1.0, 2.0)  # a part whose max is 1 and whose sum of exp(x - 1) is 2
    b = (3.0, 1.0)
    m, s = emulate.merge(a, b)
    assert m == 3.0 and math.isclose(s, 2.0 * math.exp(-2) + 1.0, rel_tol=1e-6)
    assert emulate.merge(b, a) == (m, s)  # the same bits either way round
    assert emulate.merge((-INF, 0.0), (-INF, 0.0)) == (-INF, 0.0)  # two empty parts: empty, not NaN
    assert emulate.merge((-INF, 0.0), b) == b


@pytest.mark.parametrize("width", [32, 16, 4])
def test_warp_combine_gives_every_lane_its_groups_pair(width):
    rng = np.random.default_rng(width)
    maxes = rng.standard_normal(32).astype(np.float32)
    sums = rng.uniform(0.5, 2.0, 32).astype(np.float32)
    out_max, out_sum = emulate.combine(maxes, sums, width)
    for lane in range(32):
        group = slice(lane - lane % width, lane - lane % width + width)
        m = maxes[group].max()
        s = (sums[group].astype(np.float64) * np.exp(maxes[group].astype(np.float64) - m)).sum()
        assert out_max[lane] == m and math.isclose(out_sum[lane], s, rel_tol=1e-5)
    for start in range(0, 32, width):  # the lanes of a group hold the same bits
        assert len(set(out_sum[start : start + width].tolist())) == 1


@pytest.mark.parametrize("n", [1, 31, 32, 100, 1000])
def test_warp_per_row_softmax(n):
    x = torch.randn(5, n, generator=torch.Generator().manual_seed(n)) * 4
    y = emulate.softmax(x.numpy())
    torch.testing.assert_close(torch.from_numpy(y).double(), torch.softmax(x.double(), -1), rtol=1e-5, atol=1e-7)


def test_warp_per_row_softmax_edge_rows():
    """Rows of -inf (NaN, as torch), a lone finite value, huge logits, and a NaN in a lane that otherwise sees only
    -inf: its pair is (-inf, NaN), which must not merge as an empty part (the whole row is NaN in torch)."""
    x = torch.tensor([[-INF] * 40, [-INF] * 39 + [1.0], [1e4] * 20 + [0.0] * 20, [1.0, NAN, 2.0] + [-INF] * 37])
    torch.testing.assert_close(torch.from_numpy(emulate.softmax(x.numpy())), torch.softmax(x, -1), equal_nan=True)


def _in_order(products: np.ndarray, groups: int) -> np.ndarray:
    """The two stages of two_stage.h, written out in numpy float32 one addition at a time."""
    rows, n = products.shape
    partials = np.zeros((groups, n), np.float32)
    for g in range(groups):
        for row in range(g, rows, groups):
            partials[g] += products[row]
    total = np.zeros(n, np.float32)
    for j in range(16):
        run = np.zeros(n, np.float32)
        for g in range(j, groups, 16):
            run += partials[g]
        total += run
    return total


@pytest.mark.parametrize(("rows", "n", "groups"), [(1, 5, 1), (100, 33, 7), (1000, 17, 40), (3, 8, 16)])
def test_two_stage_dweight_adds_in_the_stated_order(rows, n, groups):
    rng = np.random.default_rng(rows)
    products = (rng.standard_normal((rows, n)) * np.exp(rng.uniform(-6, 6, (rows, 1)))).astype(np.float32)
    got, partials = emulate.dweight(products, groups)
    assert np.array_equal(got, _in_order(products, groups))  # the same bits as the order two_stage.h states
    for g in range(groups):  # each group's partial row: its rows g, g + groups, ...
        np.testing.assert_allclose(partials[g], products[g::groups].astype(np.float64).sum(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got, products.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3 * np.abs(products).max())


def test_two_stage_dweight_has_the_same_bits_every_run():
    """The groups run as threads that finish in any order; the result may not depend on it."""
    products = np.random.default_rng(1).standard_normal((4000, 64)).astype(np.float32) * 1e3
    first, _ = emulate.dweight(products, 64)
    for _ in range(5):
        assert np.array_equal(emulate.dweight(products, 64)[0], first)


def test_another_order_gives_other_bits():
    """Why the order is fixed: float addition is not associative, so the sums a float atomic would make (in whatever
    order the blocks arrive) differ in their last bits from run to run."""
    products = np.random.default_rng(2).standard_normal((4000, 64)).astype(np.float32) * 1e3
    in_order = _in_order(products, 64)
    shuffled = np.zeros(64, np.float32)
    for row in np.random.default_rng(3).permutation(4000):
        shuffled += products[row]
    assert not np.array_equal(in_order, shuffled)
    np.testing.assert_allclose(in_order, shuffled, rtol=1e-3, atol=1.0)
