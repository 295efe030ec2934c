/*
 * square_bias.h — the chapter's C core: y = x*x + b, forward and backward, over plain float/double arrays.
 *
 * No PyTorch types here: any C or C++ program (our binding, the C test, chapter 03's CPU path) can call it.
 *
 * Broadcast contract (the caller prepares the memory):
 *   x, y, grad_y, grad_x  contiguous, n elements each;
 *   b, grad_b             contiguous, b_n elements, where b_n divides n and b repeats every b_n elements:
 *                         element i of x pairs with b[i % b_n].
 *                         a scalar b has b_n = 1, a row (x's last dim) b_n = x.size(-1), b of x's shape b_n = n.
 *   Other broadcasts (a column, say) are materialised by the caller (expand + contiguous) and their gradient
 *   reduced afterwards (sum_to_size).
 *
 * Every function returns SQUARE_BIAS_OK, or SQUARE_BIAS_EINVAL (and touches nothing) when n < 0, b_n < 1 while
 * n > 0, or b_n does not divide n. Sizes are int64_t, so arrays of more than 2^31 elements work.
 */
#ifndef SQUARE_BIAS_H
#define SQUARE_BIAS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SQUARE_BIAS_OK = 0, SQUARE_BIAS_EINVAL = 1 };

/* y[i] = x[i] * x[i] + b[i % b_n]   for i in [0, n). */
int square_bias_forward_f32(const float *x, const float *b, float *y, int64_t n, int64_t b_n);
int square_bias_forward_f64(const double *x, const double *b, double *y, int64_t n, int64_t b_n);

/*
 * One pass over x and grad_y computes both gradients:
 *   grad_x[i] = 2 * x[i] * grad_y[i]
 *   grad_b[j] = sum of grad_y[i] over all i with i % b_n == j   (accumulated in double, then stored)
 * Either output may be NULL when that gradient is not needed. grad_b is overwritten, not added to.
 */
int square_bias_backward_f32(const float *x, const float *grad_y, float *grad_x, float *grad_b, int64_t n, int64_t b_n);
int square_bias_backward_f64(const double *x, const double *grad_y, double *grad_x, double *grad_b, int64_t n,
                             int64_t b_n);

#ifdef __cplusplus
}
#endif

#endif /* SQUARE_BIAS_H */
