/*
 * square_bias_kernels.h — y = x*x + b on the GPU: the plain C launcher of the one kernel this chapter ships.
 *
 * No PyTorch types. Pointers are device pointers; `dtype` (course_dtype.h) says what they point to. The launcher
 * queues the work on `stream` and returns at once with the first error it met (cudaSuccess when the work was queued).
 * Broadcast contract (chapter 01's): x and y contiguous, n elements; b contiguous, b_n elements, b_n divides n, and
 * element i of x pairs with b[i % b_n]. float16 and bfloat16 are computed in float32 and rounded once.
 */
#ifndef SQUARE_BIAS_KERNELS_H
#define SQUARE_BIAS_KERNELS_H

#include <stdint.h>
#include <cuda_runtime.h>

#include "course_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t square_bias_forward_cuda(course_dtype dtype, const void *x, const void *b, void *y, int64_t n, int64_t b_n,
                                     cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SQUARE_BIAS_KERNELS_H */
