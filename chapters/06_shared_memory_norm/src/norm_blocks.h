/*
 * norm_blocks.h — summing one value per thread over a block: the two ways this chapter teaches.
 *
 * Both are called by EVERY thread of the block (they contain barriers), with blockDim.x = nthreads, a multiple of
 * 32 and a power of two (at most 1024). The sum comes back in thread 0; other threads get a partial value.
 * The sums are in double: each thread has already summed its own elements in fp32, and combining those partials
 * in double keeps the rounding error of the combination out of the result.
 *
 * This file compiles as CUDA device code and as plain C (see norm_device.h), so tests/test_blocks.py checks it on
 * the CPU through an emulation with one POSIX thread per CUDA thread. It is the file of the exercises.
 */
#ifndef NORM_BLOCKS_H
#define NORM_BLOCKS_H

#include "norm_device.h"

/*
 * Rung 1: a tree in shared memory. buf has nthreads entries; thread tid has stored its value in buf[tid].
 *
 *   stride 4:  buf[0] += buf[4]   buf[1] += buf[5]   buf[2] += buf[6]   buf[3] += buf[7]
 *   stride 2:  buf[0] += buf[2]   buf[1] += buf[3]
 *   stride 1:  buf[0] += buf[1]                                       -> buf[0] is the block's sum
 *
 * A barrier before the first step (everyone's value must be in buf) and after every step (the next step reads what
 * other threads just wrote). log2(nthreads) steps; half of the active threads go idle at each one.
 */
NORM_FN double norm_block_tree_sum(double *buf, int tid, int nthreads) {
    NORM_SYNC();
    for (int stride = nthreads / 2; stride > 0; stride /= 2) {
        if (tid < stride) buf[tid] += buf[tid + stride];
        NORM_SYNC();
    }
    return buf[0];
}

/*
 * Rung 2: the 32 threads of a warp add their values through registers with __shfl_down_sync: at each step lane i
 * receives the value of lane i + offset. Five steps (offsets 16, 8, 4, 2, 1), no shared memory, no barrier.
 * Lane 0 ends with the warp's sum.
 */
NORM_FN double norm_warp_sum(double value) {
    for (int offset = NORM_WARP_SIZE / 2; offset > 0; offset /= 2) value += NORM_SHFL_DOWN(value, offset);
    return value;
}

/*
 * Rung 2: the block's sum from warp sums. Every warp sums itself; lane 0 of each warp writes its sum to warp_sums
 * (shared memory, 32 entries); one barrier; then warp 0 sums those. One barrier instead of log2(nthreads).
 * Before calling this again with the same warp_sums, the block must pass a barrier (warp 0 may still be reading).
 */
NORM_FN double norm_block_shuffle_sum(double value, double *warp_sums, int tid, int nthreads) {
    const int lane = tid % NORM_WARP_SIZE, warp = tid / NORM_WARP_SIZE;
    const int nwarps = (nthreads + NORM_WARP_SIZE - 1) / NORM_WARP_SIZE;
    value = norm_warp_sum(value);
    if (lane == 0) warp_sums[warp] = value;
    NORM_SYNC();
    if (warp == 0) value = norm_warp_sum(lane < nwarps ? warp_sums[lane] : 0.0);
    return value;
}

#endif /* NORM_BLOCKS_H */
