"""What the compiler says about the kernels, without a GPU: every kernel compiles for sm_90, and the fast rungs keep
their accumulators in registers (no spills) within the register budget their occupancy was designed for."""

from __future__ import annotations

import pytest

# The layouts the op meets most: the forward with row-major A and B (A along K, B along MN), and the backward's
# dA = dC·Bᵀ (both along K) and dB = Aᵀ·dC (both along MN). Aᵀ·Bᵀ (MN, K) and kScalar may spill a little:
# make ptxas-report shows by how much (NOTES.md).
COMMON_LAYOUTS = ("kContigK, kContigMN>", "kContigK, kContigK>", "kContigMN, kContigMN>")


@pytest.mark.nvcc
def test_kernels_compile_and_fast_rungs_do_not_spill():
    from course.gpu import find_nvcc
    from matmul.ptxas import compile_report, parse

    kernels = parse(compile_report(find_nvcc()))
    functions = {k.function for k in kernels}
    assert {"naive_rows_kernel", "coalesced_kernel", "shared_tiles_kernel", "blocktile_1d_kernel",
            "blocktile_2d_kernel", "vectorized_kernel", "warptile_kernel", "pipelined_kernel", "sum_splits_kernel",
            "fma_chains_kernel"} <= functions  # fmt: skip
    fast = [k for k in kernels if k.function in ("vectorized_kernel", "warptile_kernel", "pipelined_kernel")]
    checked = [k for k in fast if k.name.endswith(COMMON_LAYOUTS) or any(x in k.name for x in COMMON_LAYOUTS)]
    assert len(checked) == 9, [k.name for k in checked]
    for k in checked:
        assert k.spills == 0, f"{k.name}: {k.spills} bytes spilled"
        assert k.registers <= 128, f"{k.name}: {k.registers} registers, more than 2 blocks of 256 threads allow"
