"""The chapter's two exercise files, run on the CPU: the per-lane logic of the warp-per-row softmax
(src/online_softmax.h) and the two-stage dweight sums (src/two_stage.h), or the student's copies in exercises/ under
EXERCISE=1.

build/librowwise_emulate-<variant>.so compiles those headers as plain C (src/rowwise_emulate.c): the softmax with one
POSIX thread per lane of a warp, the dweight with one thread per row group, so both are checked without a GPU.

    softmax(x)              the warp-per-row softmax of a 2-D float32 array, one warp walking the rows
    combine(maxes, sums)    rw_warp_combine over 32 lanes' (max, sum) pairs: every lane's answer
    add(pair, x)            rw_online_add: a pair with one more element
    merge(a, b)             rw_merge: the pair of two parts
    dweight(products, groups)   the column sums of a 2-D float32 array in two stages: (result, partial rows)
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
from course.build import load_c_library

CHAPTER_DIR = Path(__file__).resolve().parents[1]
_lib = None
_float_p = ctypes.POINTER(ctypes.c_float)


def _library() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        _lib = load_c_library(CHAPTER_DIR, "librowwise_emulate")
        _lib.rw_emulate_softmax.argtypes = [_float_p, _float_p, ctypes.c_int64, ctypes.c_int64]
        _lib.rw_emulate_combine.argtypes = [_float_p, _float_p, ctypes.c_int, _float_p, _float_p]
        _lib.rw_emulate_add.argtypes = [ctypes.c_float] * 3 + [_float_p, _float_p]
        _lib.rw_emulate_merge.argtypes = [ctypes.c_float] * 4 + [_float_p, _float_p]
        _lib.rw_emulate_dweight.argtypes = [
            _float_p,
            ctypes.c_int64,
            ctypes.c_int64,
            ctypes.c_int64,
            _float_p,
            _float_p,
        ]
    return _lib


def _pointer(array: np.ndarray):
    return array.ctypes.data_as(_float_p)


def _check(status: int, what: str) -> None:
    if status != 0:
        raise ValueError(f"{what}: bad arguments")


def softmax(x) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (rows, n), got shape {x.shape}")
    y = np.full_like(x, np.nan)
    _check(_library().rw_emulate_softmax(_pointer(x), _pointer(y), x.shape[0], x.shape[1]), "softmax")
    return y


def combine(maxes, sums, width: int = 32) -> tuple[np.ndarray, np.ndarray]:
    maxes = np.ascontiguousarray(maxes, dtype=np.float32)
    sums = np.ascontiguousarray(sums, dtype=np.float32)
    if maxes.shape != (32,) or sums.shape != (32,):
        raise ValueError("a warp has 32 lanes: give 32 maxes and 32 sums")
    out_max, out_sum = np.full(32, np.nan, np.float32), np.full(32, np.nan, np.float32)
    _check(
        _library().rw_emulate_combine(_pointer(maxes), _pointer(sums), width, _pointer(out_max), _pointer(out_sum)),
        "combine",
    )
    return out_max, out_sum


def add(pair: tuple[float, float], x: float) -> tuple[float, float]:
    m, s = ctypes.c_float(), ctypes.c_float()
    _check(_library().rw_emulate_add(pair[0], pair[1], x, ctypes.byref(m), ctypes.byref(s)), "add")
    return m.value, s.value


def merge(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    m, s = ctypes.c_float(), ctypes.c_float()
    _check(_library().rw_emulate_merge(a[0], a[1], b[0], b[1], ctypes.byref(m), ctypes.byref(s)), "merge")
    return m.value, s.value


def dweight(products, groups: int) -> tuple[np.ndarray, np.ndarray]:
    products = np.ascontiguousarray(products, dtype=np.float32)
    if products.ndim != 2:
        raise ValueError(f"products must be 2-D (rows, n), got shape {products.shape}")
    rows, n = products.shape
    partials = np.full((groups, n), np.nan, np.float32)
    out = np.full(n, np.nan, np.float32)
    _check(
        _library().rw_emulate_dweight(_pointer(products), rows, n, groups, _pointer(partials), _pointer(out)), "dweight"
    )
    return out, partials
