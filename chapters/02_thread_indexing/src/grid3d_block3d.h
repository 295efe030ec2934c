/*
 * grid3d_block3d.h — the most general formula: a 3D grid of 3D blocks (included by thread_index.h).
 *
 * The block's number in the grid times the threads per block, plus the thread's number in its block; both numbers
 * count x fastest, then y, then z. Every other formula is this one with some dimensions equal to 1.
 */
#ifndef THREAD_INDEX_GRID3D_BLOCK3D_H
#define THREAD_INDEX_GRID3D_BLOCK3D_H

static inline HD int64_t ti_grid3d_block3d(ti_thread t) {
    int64_t block = ((int64_t)t.blockIdx.z * t.gridDim.y + t.blockIdx.y) * t.gridDim.x + t.blockIdx.x;
    int64_t threads_per_block = (int64_t)t.blockDim.x * t.blockDim.y * t.blockDim.z;
    int64_t thread = ((int64_t)t.threadIdx.z * t.blockDim.y + t.threadIdx.y) * t.blockDim.x + t.threadIdx.x;
    return block * threads_per_block + thread;
}

#endif
