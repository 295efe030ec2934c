"""The block sums of src/norm_blocks.h (or exercises/norm_blocks.h under EXERCISE=1), run on the CPU.

build/libnorm_emulate-<variant>.so compiles that header as plain C and runs it with one POSIX thread per CUDA
thread (src/norm_emulate.c). So the exercises can be checked, and the tree drawn, on a machine without a GPU.

    tree_sum(values)      norm_block_tree_sum with len(values) threads (a power of two, 32..1024)
    warp_sum(values)      norm_warp_sum over 32 lanes
    shuffle_sum(values)   norm_block_shuffle_sum
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
from course.build import load_c_library

CHAPTER_DIR = Path(__file__).resolve().parents[1]
_lib = None


def _library() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        _lib = load_c_library(CHAPTER_DIR, "libnorm_emulate")
        pointer = ctypes.POINTER(ctypes.c_double)
        _lib.norm_emulate_tree_sum.argtypes = [pointer, ctypes.c_int, pointer]
        _lib.norm_emulate_warp_sum.argtypes = [pointer, pointer]
        _lib.norm_emulate_shuffle_sum.argtypes = [pointer, ctypes.c_int, pointer]
    return _lib


def _run(name: str, values, *count) -> float:
    values = np.ascontiguousarray(values, dtype=np.float64)
    result = ctypes.c_double(float("nan"))
    status = getattr(_library(), name)(
        values.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), *count, ctypes.byref(result)
    )
    if status != 0:
        raise ValueError(f"{name}: the block must have 32..1024 threads, a multiple of 32 (got {len(values)})")
    return result.value


def tree_sum(values) -> float:
    return _run("norm_emulate_tree_sum", values, len(values))


def warp_sum(values) -> float:
    if len(values) != 32:
        raise ValueError(f"a warp has 32 lanes, got {len(values)} values")
    return _run("norm_emulate_warp_sum", values)


def shuffle_sum(values) -> float:
    return _run("norm_emulate_shuffle_sum", values, len(values))
