/*
 * add2.h — c = a + b on the GPU, the C interface of this chapter's kernels.
 *
 * Two versions of one op (see add2_seed.cu and add2_vec.cu):
 *   v1  add2_seed_launch   the seed's kernel: a grid-stride loop, 1024-thread blocks, n passed separately.
 *   v2  add2_vec_launch    16-byte loads and stores, a scalar tail, a grid sized from the GPU's occupancy.
 * Both take raw device pointers, an element count, the element type (course_dtype, the course's one dtype enum)
 * and PyTorch's current stream, and return the first cudaError_t they meet instead of exiting: the caller (a
 * PyTorch binding) turns an error into a Python exception.
 *
 * add2_seed_emulate_f32 runs v1's loop on the CPU, one (block, thread) at a time, so the loop can be tested on a
 * machine without a GPU (it calls the very function the kernel calls).
 */
#ifndef ADD2_H
#define ADD2_H

#include <stdint.h>
#include <cuda_runtime.h>

#include "course_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* v1: grid = ceil(n / 1024) blocks of 1024 threads (capped at the grid limit; the loop covers the rest).
 * n is trusted: it must not exceed the length of a, b and c (the seed's pitfall — see README). */
cudaError_t add2_seed_launch(void *c, const void *a, const void *b, int64_t n, course_dtype dtype, cudaStream_t stream);

/* v2: 16-byte vectors when a, b and c are all 16-byte aligned, one element per step otherwise.
 * blocks_per_sm = 0: enough 256-thread blocks for one vector per thread, at most 64 full waves (a wave: every
 *                   block the GPU holds at once, from the occupancy API);
 * blocks_per_sm > 0: at most that many blocks per SM, every thread loops (the "capped grid" variant). */
cudaError_t add2_vec_launch(void *c, const void *a, const void *b, int64_t n, course_dtype dtype, int blocks_per_sm,
                            cudaStream_t stream);

/* v1's loop on the host: for every block in [0, grid) and thread in [0, block), run what that GPU thread runs. */
void add2_seed_emulate_f32(float *c, const float *a, const float *b, int64_t n, int64_t grid, int64_t block);

#ifdef __cplusplus
}
#endif

#endif /* ADD2_H */
