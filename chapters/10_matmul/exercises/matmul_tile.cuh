/*
 * matmul_tile.cuh — EXERCISE: rung 2's per-thread code, C = A·B with TILE×TILE tiles in shared memory.
 *
 * A block of TILE×TILE threads computes one TILE×TILE tile of C; thread (ty, tx) computes C(row0 + ty, col0 + tx).
 * The kernel (src/matmul_kernels.cu, shared_tiles_kernel) walks K one tile at a time:
 *
 *   for k0 = 0, TILE, 2·TILE, ... < K:
 *       tile_load(...)        phase 1: every thread copies one element of A's tile and one of B's tile
 *       __syncthreads()
 *       acc = tile_dot(...)   phase 2: every thread adds TILE products
 *       __syncthreads()
 *   C(row0 + ty, col0 + tx) = acc      (where inside C)
 *
 * A MatrixView<T> (src/matmul_view.cuh) is {data, rows, cols, row_stride, col_stride}: element (i, j) is
 * data[i*row_stride + j*col_stride]. Use the strides: the tests pass transposed and sliced matrices.
 *
 * Check your work without a GPU:   EXERCISE=1 make test
 * (tests/test_tile_emulation.py runs these two functions on the CPU for every thread of the grid, one phase at a
 * time, with shared memory filled with NaN before each phase 1; on a GPU, rung 2's kernel runs them too.)
 */
#pragma once

#include "matmul_view.cuh"

/*
 * Phase 1 — roughly 6 lines.
 *   As[ty*TILE + tx] = A(row0 + ty, k0 + tx)
 *   Bs[ty*TILE + tx] = B(k0 + ty, col0 + tx)
 * and T(0) where the index is outside the matrix (row ≥ rows or column ≥ cols): the tiles at the edges of A and B
 * hang over, and phase 2 adds all TILE products of every tile.
 */
template <int TILE, typename T>
__host__ __device__ inline void tile_load(MatrixView<T> a, MatrixView<T> b, int64_t row0, int64_t col0, int64_t k0,
                                          int ty, int tx, T *As, T *Bs) {
    /* TODO: one element of A's tile into As, one element of B's tile into Bs */
    (void)a;
    (void)b;
    (void)row0;
    (void)col0;
    (void)k0;
    (void)ty;
    (void)tx;
    (void)As;
    (void)Bs;
}

/*
 * Phase 2 — 1 or 2 lines. Return acc + Σ_k As[ty][k]·Bs[k][tx] for k = 0 .. TILE-1, in that order
 * (row ty of As: As[ty*TILE + k]; column tx of Bs: Bs[k*TILE + tx]).
 */
template <int TILE, typename T>
__host__ __device__ inline T tile_dot(const T *As, const T *Bs, int ty, int tx, T acc) {
    /* TODO */
    (void)As;
    (void)Bs;
    (void)ty;
    (void)tx;
    return acc;
}
