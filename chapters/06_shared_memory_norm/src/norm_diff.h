/*
 * norm_diff.h — ‖a − b‖₂ and its gradient: the C interface of this chapter's kernels.
 *
 * Everything here is plain C, so C programs, the CPU reference and the PyTorch binding share one set of
 * declarations. Tensors are flat and contiguous; sizes are int64_t (the chapter tests more than 2^31 elements).
 * The element type is a course_dtype (course_dtype.h); 16-bit types are passed as their raw bits.
 *
 *   norm_diff_cpu / norm_diff_backward_cpu        a plain loop with double accumulation: the CPU op and the reference
 *   norm_diff_cuda(version, ...)                  the ladder of GPU kernels, one dispatcher (see norm_diff_kernels.cu)
 *   norm_diff_backward_cuda                       grad_a = g·(a − b)/‖a − b‖ (0 where the norm is 0)
 *   norm_diff_sum_squares_cpu / _cuda             Σ (a − b)² in double, before the square root: the piece that
 *                                                 each GPU of a sharded norm adds to the others' (chapter 08)
 */
#ifndef NORM_DIFF_H
#define NORM_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "course_dtype.h" /* course_dtype: the element types, one enum for the whole course */

#ifdef __cplusplus
extern "C" {
#endif

/* The rungs of the ladder. NORM_VERSION_BEST is the one the op uses by default. */
enum { NORM_VERSION_FIRST = 0, NORM_VERSION_LAST = 4, NORM_VERSION_BEST = 3 };

/* Rung 0 (the seed's design) holds every squared difference in one fixed shared buffer of this many floats. */
#define NORM_SEED_CAPACITY 4096

/* ---- CPU (norm_diff_cpu.c) ------------------------------------------------------------------------------------ */
/* Returns ‖a − b‖₂ accumulated in double. */
double norm_diff_cpu(course_dtype dtype, const void *a, const void *b, int64_t n);
/* Σ (a − b)², accumulated in double: the norm before its square root. */
double norm_diff_sum_squares_cpu(course_dtype dtype, const void *a, const void *b, int64_t n);
/* grad_a[i] = g·(a[i] − b[i])/norm, or 0 when norm == 0 (what torch.norm's gradient gives there). */
void norm_diff_backward_cpu(course_dtype dtype, double g, double norm, const void *a, const void *b, void *grad_a,
                            int64_t n);

/* ---- CUDA (norm_diff_kernels.cu) ------------------------------------------------------------------------------ */
/* Every function returns the first CUDA error it meets (cudaSuccess otherwise); the caller turns it into an exception.
 *
 * *bytes = the device scratch memory rung `version` needs for n elements of `dtype` on the current device (block
 * partials and a counter). The caller allocates it (PyTorch's caching allocator makes that cheap) and passes it in.
 * The grid, and so the size, comes from the occupancy API: that query can fail, and its error is returned. */
cudaError_t norm_diff_workspace_bytes(int version, course_dtype dtype, int64_t n, size_t *bytes);

/* out (one element of `dtype`) = ‖a − b‖₂, computed by rung `version` on `stream`. Returns cudaErrorInvalidValue for
 * a version outside NORM_VERSION_FIRST..NORM_VERSION_LAST or a workspace that is too small. */
cudaError_t norm_diff_cuda(int version, course_dtype dtype, const void *a, const void *b, int64_t n, void *out,
                           void *workspace, size_t workspace_bytes, cudaStream_t stream);

/* *sum_squares (one double in device memory) = Σ (a − b)², by the best rung (NORM_VERSION_BEST) with its final
 * square root left out; the workspace is norm_diff_workspace_bytes(NORM_VERSION_BEST, dtype, n). Sums of several
 * pieces of a and b add up to the sum of the whole, so a norm split across devices takes one root at the end. */
cudaError_t norm_diff_sum_squares_cuda(course_dtype dtype, const void *a, const void *b, int64_t n, double *sum_squares,
                                       void *workspace, size_t workspace_bytes, cudaStream_t stream);

/* grad_a = (*g)·(a − b)/(*norm), 0 where *norm == 0; g and norm are one element of `dtype` in device memory. */
cudaError_t norm_diff_backward_cuda(course_dtype dtype, const void *g, const void *norm, const void *a, const void *b,
                                    void *grad_a, int64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* NORM_DIFF_H */
