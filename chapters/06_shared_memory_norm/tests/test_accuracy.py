"""Why the kernels sum in a tree (and per-thread runs), not in one long line: fp32 rounding error, measured on the
CPU with NumPy's float32 arithmetic against a float64 reference."""

from __future__ import annotations

import numpy as np


def squares(n: int) -> tuple[np.ndarray, float]:
    rng = np.random.default_rng(0)
    d = (rng.standard_normal(n) - rng.standard_normal(n)).astype(np.float32)
    x = d * d  # float32 squares, as a kernel computes them
    return x, float(np.sum(x.astype(np.float64)))


def sequential_fp32(x: np.ndarray) -> float:
    return float(np.cumsum(x, dtype=np.float32)[-1])  # cumsum adds strictly left to right


def tree_fp32(x: np.ndarray) -> float:
    while len(x) > 1:  # pairs, then pairs of pairs: log2(n) levels, like the shared-memory tree
        if len(x) % 2:
            x = np.append(x, np.float32(0))
        x = x[0::2] + x[1::2]
    return float(x[0])


def test_sequential_fp32_drifts_and_the_tree_stays_close():
    x, exact = squares(1 << 22)
    sequential_error = abs(sequential_fp32(x) - exact) / exact
    tree_error = abs(tree_fp32(x) - exact) / exact
    # One running fp32 sum of 4M terms: once the sum is large, each small term loses most of its bits.
    assert sequential_error > 1e-4, sequential_error
    # The tree adds numbers of similar size at every level: the error stays near fp32's epsilon (6e-8).
    assert tree_error < 1e-6, tree_error
    assert sequential_error > 100 * tree_error


def test_short_fp32_runs_combined_in_double_are_accurate():
    # What rungs 3-4 do: each "thread" sums a short run in fp32, the partials are added in double.
    x, exact = squares(1 << 22)
    runs = x.reshape(-1, 256)
    partials = np.cumsum(runs, axis=1, dtype=np.float32)[:, -1]
    combined = float(np.sum(partials.astype(np.float64)))
    assert abs(combined - exact) / exact < 1e-6
