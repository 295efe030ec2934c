"""Chapter 02: which element is mine? Thread index formulas, emulated on the CPU and recorded on the GPU.

from thread_index import emulate, record_threads
emulate("grid2d_block2d", grid=(3, 2), block=(4, 3)).global_index      # CPU, any machine
record_threads("grid2d_block2d", grid=(3, 2), block=(4, 3))            # the same table, from the GPU
"""

from thread_index.emulate import (
    COLUMNS,
    ThreadTable,
    correct_formulas,
    emulate,
    emulate_grid_stride,
    formula_dims,
    formulas,
    pitfalls,
)
from thread_index.ops import (
    DIVERGENCE_MODES,
    device_limits,
    divergence,
    grid_stride_count,
    grid_stride_owner,
    record_threads,
)

__all__ = [
    "COLUMNS",
    "DIVERGENCE_MODES",
    "ThreadTable",
    "correct_formulas",
    "device_limits",
    "divergence",
    "emulate",
    "emulate_grid_stride",
    "formula_dims",
    "formulas",
    "grid_stride_count",
    "grid_stride_owner",
    "pitfalls",
    "record_threads",
]
