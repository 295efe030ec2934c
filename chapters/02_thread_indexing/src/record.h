/*
 * record.h — launchers for the chapter's kernels (CUDA C, callable from C and C++).
 *
 * Each launcher enqueues its kernel on `stream` and returns the launch's cudaError_t (cudaErrorInvalidValue for
 * arguments it refuses before launching). Pointers are device pointers.
 */
#ifndef THREAD_INDEX_RECORD_H
#define THREAD_INDEX_RECORD_H

#include <stdint.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launch grid × block threads; the threads of blocks first_block .. first_block + n_blocks - 1 (numbered x
 * fastest) each write one row of `table` (TI_COLUMNS int64 values, see thread_index.h): the formula's global index,
 * blockIdx, threadIdx, warp and the hardware's lane id. The other blocks return at once. */
cudaError_t ti_launch_record(int formula, const uint32_t grid[3], const uint32_t block[3], int64_t first_block,
                             int64_t n_blocks, int64_t *table, cudaStream_t stream);

/* A grid-stride loop over n elements with blocks × threads threads: counts[i] += 1 and owner[i] = the thread's
 * number, for every element i the thread visits (either pointer may be NULL). */
cudaError_t ti_launch_grid_stride(uint32_t blocks, uint32_t threads, int64_t n, uint8_t *counts, int64_t *owner,
                                  cudaStream_t stream);

/* Warp divergence demo: n threads each run `iters` steps of one of two different loops; which loop is chosen by
 * mode: 0 every thread the same, 1 odd/even lanes (both loops run inside every warp), 2 odd/even warps. */
cudaError_t ti_launch_divergence(int mode, int iters, float *out, int64_t n, cudaStream_t stream);

/* The device's launch limits, in this order. */
enum {
    TI_LIMIT_MAX_GRID_X,
    TI_LIMIT_MAX_GRID_Y,
    TI_LIMIT_MAX_GRID_Z,
    TI_LIMIT_MAX_BLOCK_X,
    TI_LIMIT_MAX_BLOCK_Y,
    TI_LIMIT_MAX_BLOCK_Z,
    TI_LIMIT_MAX_THREADS_PER_BLOCK,
    TI_LIMIT_WARP_SIZE,
    TI_LIMIT_SM_COUNT,
    TI_LIMIT_MAX_THREADS_PER_SM,
    TI_LIMIT_SHARED_BYTES_PER_BLOCK,
    TI_LIMIT_COUNT
};
cudaError_t ti_device_limits(int device, int64_t limits[TI_LIMIT_COUNT]);

#ifdef __cplusplus
}
#endif

#endif
