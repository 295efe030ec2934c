/*
 * norm_blocks.h — EXERCISES: summing one value per thread over a block, two ways.
 *
 * Both functions are called by EVERY thread of the block (they contain barriers), with nthreads = blockDim.x, a
 * multiple of 32 and a power of two (at most 1024). The sum must come back in thread 0.
 *
 * Tools (norm_device.h): NORM_SYNC() is __syncthreads(); NORM_SHFL_DOWN(v, offset) is
 * __shfl_down_sync(0xffffffff, v, offset): lane i receives lane (i + offset)'s v (its own v past the warp's end).
 * NORM_WARP_SIZE is 32.
 *
 * Check your work without a GPU:   EXERCISE=1 make test      (tests/test_blocks.py runs this file on the CPU,
 * one POSIX thread per CUDA thread; the GPU tests use it inside rungs 1-4 on a GPU machine).
 */
#ifndef NORM_BLOCKS_H
#define NORM_BLOCKS_H

#include "norm_device.h"

/*
 * Exercise 1 — the tree in shared memory (rung 1).
 * buf has nthreads entries; thread tid has already stored its value in buf[tid]. Fold the upper half onto the lower
 * half, then the upper quarter onto the lower quarter, ... until buf[0] holds the sum:
 *
 *   stride 4:  buf[0] += buf[4]   buf[1] += buf[5]   buf[2] += buf[6]   buf[3] += buf[7]
 *   stride 2:  buf[0] += buf[2]   buf[1] += buf[3]
 *   stride 1:  buf[0] += buf[1]
 *
 * Where do barriers go? Before the first step, and after every step. Return buf[0].
 * Budget: roughly 5 lines.
 */
NORM_FN double norm_block_tree_sum(double *buf, int tid, int nthreads) {
    /* TODO: the loop over strides nthreads/2, nthreads/4, ..., 1 with NORM_SYNC() where it is needed */
    (void)buf;
    (void)tid;
    (void)nthreads;
    return 0.0;
}

/*
 * Exercise 2a — the warp shuffle (rung 2).
 * Sum `value` over the 32 lanes of the warp with NORM_SHFL_DOWN, offsets 16, 8, 4, 2, 1. Lane 0 ends with the sum.
 * No shared memory, no barrier. Budget: 1-2 lines.
 */
NORM_FN double norm_warp_sum(double value) {
    /* TODO */
    return value;
}

/*
 * Exercise 2b — the block's sum from warp sums (rung 2).
 * 1. each warp sums its values with norm_warp_sum;
 * 2. lane 0 of warp w writes that sum to warp_sums[w] (shared memory, 32 entries);
 * 3. one barrier;
 * 4. warp 0 sums warp_sums[0 .. nthreads/32) (lanes past that count add 0.0) with norm_warp_sum again.
 * Thread 0 returns the block's sum. Budget: roughly 6 lines.
 */
NORM_FN double norm_block_shuffle_sum(double value, double *warp_sums, int tid, int nthreads) {
    /* TODO: lane = tid % NORM_WARP_SIZE, warp = tid / NORM_WARP_SIZE, then steps 1-4 */
    (void)warp_sums;
    (void)tid;
    (void)nthreads;
    return value;
}

#endif /* NORM_BLOCKS_H */
