/*
 * grid3d_block3d.h — EXERCISE: the global index of a thread in a 3D grid of 3D blocks.
 *
 * Fill in ti_grid3d_block3d (roughly 4 lines). `t` holds what the kernel sees: t.gridDim, t.blockDim, t.blockIdx,
 * t.threadIdx, each with .x .y .z (unsigned 32-bit, like CUDA's built-ins).
 *
 *   global = (the block's number in the grid) * (threads per block) + (the thread's number in its block)
 *
 * Count x fastest, then y, then z, for both numbers. Widen to int64_t before you multiply: the products pass 2^31.
 * Check yourself: the ti_grid3d_block2d formula in thread_index.h is this one with blockDim.z == 1.
 *
 * Test: EXERCISE=1 make test   (test_emulation.py::test_correct_formula_is_one_to_one[grid3d_block3d-...] and
 * friends pass once this is right). Under EXERCISE=1 this file replaces src/grid3d_block3d.h: the builds put
 * exercises/ first on the include path, and thread_index.h includes <grid3d_block3d.h>.
 */
#ifndef THREAD_INDEX_GRID3D_BLOCK3D_H
#define THREAD_INDEX_GRID3D_BLOCK3D_H

static inline HD int64_t ti_grid3d_block3d(ti_thread t) {
    /* TODO: compute the block's number, the threads per block, the thread's number; return the global index. */
    (void)t;
    return 0;
}

#endif
