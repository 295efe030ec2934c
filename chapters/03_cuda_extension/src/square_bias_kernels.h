/*
 * square_bias_kernels.h — y = x*x + b on the GPU: plain C launchers for the kernels in square_bias_kernels.cu.
 *
 * No PyTorch types: a C program can call these as well as our binding. Pointers are device pointers; `dtype` says
 * what they point to (course_dtype.h, the course's one dtype enum). Every launcher queues work on `stream` and
 * returns at once with the first error it met (cudaSuccess when the work was queued).
 *
 * Broadcast contract (the same as chapter 01's C core, src/square_bias.h there):
 *   x, y, grad_y, grad_x  contiguous, n elements each;
 *   b, grad_b             contiguous, b_n elements, b_n divides n, element i of x pairs with b[i % b_n].
 * Half types (float16, bfloat16) are loaded and stored as such but computed in float32.
 */
#ifndef SQUARE_BIAS_KERNELS_H
#define SQUARE_BIAS_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>

#include "course_dtype.h" /* course_dtype: the element type behind each `const void *` (common/include) */

#ifdef __cplusplus
extern "C" {
#endif

/* y[i] = x[i]^2 + b[i % b_n]. */
cudaError_t square_bias_forward_cuda(course_dtype dtype, const void *x, const void *b, void *y, int64_t n, int64_t b_n,
                                     cudaStream_t stream);

/* The fused backward for a b of x's size (b_n == n): grad_x = 2 x grad_y; grad_b is grad_y itself. */
cudaError_t square_bias_grad_x_cuda(course_dtype dtype, const void *grad_y, const void *x, void *grad_x, int64_t n,
                                    cudaStream_t stream);

/*
 * The fused backward for a broadcast b: one pass over grad_y and x writes grad_x and per-block column sums of
 * grad_y (float32, or float64 for float64 data) into `workspace`; a second small kernel adds those sums up in a
 * fixed order into grad_b. Deterministic: the same input on the same GPU gives the same bits every time.
 * Ask for the workspace's size first (it depends on the GPU's SM count) and pass at least that many bytes.
 */
cudaError_t square_bias_backward_workspace_bytes(course_dtype dtype, int64_t n, int64_t b_n, size_t *bytes);
cudaError_t square_bias_backward_cuda(course_dtype dtype, const void *grad_y, const void *x, void *grad_x, void *grad_b,
                                      int64_t n, int64_t b_n, void *workspace, size_t workspace_bytes,
                                      cudaStream_t stream);

/*
 * The same thread code run on the CPU, one simulated thread at a time, for a grid of `grid` blocks of `block`
 * threads (backward: grid_x column tiles by grid_y row chunks of the 32x8-thread blocks). Host pointers, float32 or
 * float64 only. Lets the course test the kernels' index arithmetic on a machine without a GPU.
 */
int square_bias_emulate_forward(course_dtype dtype, const void *x, const void *b, void *y, int64_t n, int64_t b_n,
                                unsigned grid, unsigned block);
int square_bias_emulate_backward(course_dtype dtype, const void *grad_y, const void *x, void *grad_x, void *grad_b,
                                 int64_t n, int64_t b_n, unsigned grid_x, unsigned grid_y);

/* Pitfalls kept from the seed, for the tests and the lesson (see the .cu file). */
cudaError_t pitfall_seed_index_forward_cuda(const float *x, const float *b, float *y, int64_t rows, int64_t cols,
                                            cudaStream_t stream);
cudaError_t pitfall_rows_grid_forward_cuda(const float *x, const float *b, float *y, int64_t rows, int64_t cols,
                                           cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SQUARE_BIAS_KERNELS_H */
