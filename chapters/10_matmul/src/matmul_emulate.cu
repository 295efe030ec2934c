/*
 * matmul_emulate.cu — rung 2 run on the CPU: the per-thread functions of matmul_tile.cuh (the exercise) called for
 * every block and every thread of the kernel's grid, one phase at a time.
 *
 * Rung 2's kernel is two phases per K-tile with a barrier after each:
 *
 *   phase 1: every thread calls tile_load     (one element of A's tile and one of B's into shared memory)
 *   __syncthreads()
 *   phase 2: every thread calls tile_dot      (TILE products added to its own sum)
 *   __syncthreads()
 *
 * A barrier means "no thread starts the next phase before every thread finished this one". Running the phases one
 * after the other, each as a loop over all the block's threads, gives exactly that order, so this host code
 * computes what the kernel computes: the same products, added in the same order. (Only the last bits may differ:
 * the GPU fuses each multiply-add into one FMA, rounded once, where the CPU rounds the product and the sum.)
 * Shared memory is filled with NaN before each phase 1: an element that no thread writes turns its row of C into
 * NaN. What this cannot show is a missing barrier (here the phases never overlap): on a GPU, racecheck finds that
 * (make sanitize).
 *
 * Host code only; nvcc compiles it so that the __host__ __device__ functions are the very ones the kernel uses.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <new>
#include <vector>

#include "matmul.h"
#include "matmul_view.cuh"
#include <matmul_tile.cuh> /* <...>: EXERCISE=1 builds put exercises/ first on the include path */

namespace {

constexpr int kTile = MATMUL_SHARED_TILE;

template <typename T>
void emulate(int64_t M, int64_t N, int64_t K, matmul_operand a_in, matmul_operand b_in, T *c, int64_t ldc) {
    const MatrixView<T> a{static_cast<const T *>(a_in.data), M, K, a_in.row_stride, a_in.col_stride};
    const MatrixView<T> b{static_cast<const T *>(b_in.data), K, N, b_in.row_stride, b_in.col_stride};
    std::vector<T> As(kTile * kTile), Bs(kTile * kTile), acc(kTile * kTile); /* a block's shared memory, sums */
    for (int64_t row0 = 0; row0 < M; row0 += kTile) {                        /* every block of the grid ... */
        for (int64_t col0 = 0; col0 < N; col0 += kTile) { /* ... in any order: blocks do not talk to each other */
            for (T &sum : acc) sum = T(0);
            for (int64_t k0 = 0; k0 < K; k0 += kTile) {
                for (T &x : As) x = T(NAN);
                for (T &x : Bs) x = T(NAN);
                for (int ty = 0; ty < kTile; ++ty) /* phase 1, every thread */
                    for (int tx = 0; tx < kTile; ++tx)
                        tile_load<kTile>(a, b, row0, col0, k0, ty, tx, As.data(), Bs.data());
                /* __syncthreads() */
                for (int ty = 0; ty < kTile; ++ty) /* phase 2, every thread */
                    for (int tx = 0; tx < kTile; ++tx)
                        acc[ty * kTile + tx] = tile_dot<kTile>(As.data(), Bs.data(), ty, tx, acc[ty * kTile + tx]);
                /* __syncthreads() */
            }
            for (int ty = 0; ty < kTile; ++ty) /* the kernel's guarded store */
                for (int tx = 0; tx < kTile; ++tx)
                    if (row0 + ty < M && col0 + tx < N) c[(row0 + ty) * ldc + col0 + tx] = acc[ty * kTile + tx];
        }
    }
}

}  // namespace

extern "C" int matmul_emulate_shared_tiles(course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a,
                                           matmul_operand b, void *c, int64_t ldc) {
    if (M < 0 || N < 0 || K < 0 || (M > 1 && ldc < N)) return -1;
    try {
        switch (dtype) {
            case COURSE_FLOAT32:
                emulate(M, N, K, a, b, static_cast<float *>(c), ldc);
                return 0;
            case COURSE_FLOAT64:
                emulate(M, N, K, a, b, static_cast<double *>(c), ldc);
                return 0;
            default:
                return -1;
        }
    } catch (const std::bad_alloc &) {
        return -1;
    }
}
