/*
 * matmul_tile.cuh — rung 2's per-thread code: C = A·B with 32×32 tiles of A and B in shared memory.
 *
 * A block of TILE×TILE threads computes one TILE×TILE tile of C; thread (ty, tx) computes C(row0 + ty, col0 + tx).
 * It walks K one tile at a time, in two phases separated by barriers:
 *
 *   phase 1 (tile_load)   each thread copies ONE element of A's tile and ONE of B's tile into shared memory
 *   __syncthreads()       every element is there before anyone reads
 *   phase 2 (tile_dot)    each thread adds TILE products: its row of As times its column of Bs
 *   __syncthreads()       everyone is done reading before the next phase 1 overwrites the tiles
 *
 *        k0 ────────── k0+TILE                      col0 ─── col0+TILE
 *   row0 ┌──────────────┐                      k0   ┌──────────┐
 *        │  As (A's     │  row ty   ×               │ Bs (B's  │ column tx
 *        │  tile)       │                     k0+T  │ tile)    │
 *        └──────────────┘                           └──────────┘
 *
 * Each element of A and B is read from global memory once per tile instead of once per product: TILE times fewer
 * global loads than rung 1 (32 here). The functions are __host__ __device__, so matmul_emulate.cu runs them on the
 * CPU for every thread of a grid (that is how the exercise is checked without a GPU), and matmul_kernels.cu runs
 * them in the kernel of rung 2.
 *
 * This is the file of the exercise: exercises/matmul_tile.cuh replaces it under EXERCISE=1.
 */
#pragma once

#include "matmul_view.cuh"

/*
 * Phase 1. Thread (ty, tx) of the block whose C tile starts at (row0, col0), for the K-tile starting at k0:
 *   As[ty*TILE + tx] = A(row0 + ty, k0 + tx)     (0 where that index is outside A)
 *   Bs[ty*TILE + tx] = B(k0 + ty, col0 + tx)     (0 where that index is outside B)
 * Zeros outside the matrices let phase 2 always add TILE products: the extra ones add 0.
 * In a warp, tx runs over 32 consecutive columns: with A and B row-major both loads are coalesced.
 */
template <int TILE, typename T>
__host__ __device__ inline void tile_load(MatrixView<T> a, MatrixView<T> b, int64_t row0, int64_t col0, int64_t k0,
                                          int ty, int tx, T *As, T *Bs) {
    const int64_t a_row = row0 + ty, a_col = k0 + tx;
    As[ty * TILE + tx] =
        (a_row < a.rows && a_col < a.cols) ? a.data[a_row * a.row_stride + a_col * a.col_stride] : T(0);
    const int64_t b_row = k0 + ty, b_col = col0 + tx;
    Bs[ty * TILE + tx] =
        (b_row < b.rows && b_col < b.cols) ? b.data[b_row * b.row_stride + b_col * b.col_stride] : T(0);
}

/*
 * Phase 2. Returns acc + Σ_k As[ty][k]·Bs[k][tx] over the TILE values of k, added in order k = 0, 1, ...
 * In a warp all threads share ty (one broadcast read of As) and read 32 consecutive floats of Bs: no bank conflict.
 */
template <int TILE, typename T>
__host__ __device__ inline T tile_dot(const T *As, const T *Bs, int ty, int tx, T acc) {
    for (int k = 0; k < TILE; ++k) acc += As[ty * TILE + k] * Bs[k * TILE + tx];
    return acc;
}
