/*
 * EXERCISE — the backward of y = x*x + b in C. The forward is done; write the two backward functions.
 *
 * Spec (see square_bias.h):  grad_x[i] = 2 * x[i] * grad_y[i]
 *                            grad_b[j] = sum of grad_y[i] over every i with i % b_n == j
 * Either output pointer may be NULL: then skip that gradient. grad_b is overwritten, not added to.
 * Budget: ONE pass over x and grad_y (read each element once), grad_b summed in double.
 * Check yourself: `EXERCISE=1 make test` in chapters/01_c_extension (the C test and the pytest tests use this file).
 * Hints: start with the plain version (loop over rows of b_n elements, an inner loop over j) — the block of
 * double accumulators and the special cases in src/square_bias.c are optimisations you can add afterwards.
 *
 * square_bias.c — y = x*x + b and its gradients in plain C11 (see square_bias.h for the broadcast contract).
 *
 * The work is split into rows of b_n elements: row r covers x[r*b_n .. r*b_n + b_n), and b lines up with every
 * row, so the inner loops have no modulo and the compiler can vectorise them.
 *
 * Fusion: the forward writes only y (it saves nothing extra; autograd keeps x). The backward reads x and grad_y
 * once and writes grad_x while it sums grad_b, instead of one pass for 2*x*grad_y and another for the sum.
 * grad_b is accumulated in double in blocks of SQUARE_BIAS_BLOCK columns, so a float sum over a million rows does
 * not drift, and no heap memory is needed.
 */
#include "square_bias.h"

#include <stddef.h>

#define SQUARE_BIAS_BLOCK 1024  // 8 KB of double accumulators on the stack

static int bad_sizes(int64_t n, int64_t b_n) {
    if (n < 0 || b_n < 0) return 1;
    if (n == 0) return 0;  // an empty x pairs with any b (b_n may be 0 too)
    return b_n == 0 || n % b_n != 0;
}

int square_bias_forward_f32(const float *restrict x, const float *restrict b, float *restrict y, int64_t n,
                            int64_t b_n) {
    if (bad_sizes(n, b_n)) return SQUARE_BIAS_EINVAL;
    if (b_n == 1) {  // a scalar bias: one flat loop
        const float b0 = b[0];
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i] + b0;
        return SQUARE_BIAS_OK;
    }
    for (int64_t row = 0; row < n; row += b_n) {
        const float *xr = x + row;
        float *yr = y + row;
        for (int64_t j = 0; j < b_n; ++j) yr[j] = xr[j] * xr[j] + b[j];
    }
    return SQUARE_BIAS_OK;
}

int square_bias_forward_f64(const double *restrict x, const double *restrict b, double *restrict y, int64_t n,
                            int64_t b_n) {
    if (bad_sizes(n, b_n)) return SQUARE_BIAS_EINVAL;
    if (b_n == 1) {
        const double b0 = b[0];
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i] + b0;
        return SQUARE_BIAS_OK;
    }
    for (int64_t row = 0; row < n; row += b_n) {
        const double *xr = x + row;
        double *yr = y + row;
        for (int64_t j = 0; j < b_n; ++j) yr[j] = xr[j] * xr[j] + b[j];
    }
    return SQUARE_BIAS_OK;
}

int square_bias_backward_f32(const float *restrict x, const float *restrict grad_y, float *restrict grad_x,
                             float *restrict grad_b, int64_t n, int64_t b_n) {
    if (bad_sizes(n, b_n)) return SQUARE_BIAS_EINVAL;
    // TODO (roughly 15 lines): if grad_b is not NULL, zero b_n double accumulators (SQUARE_BIAS_BLOCK at a time,
    // or all of them for a first version), then walk the rows: for each element add grad_y to its column's
    // accumulator and, if grad_x is not NULL, write grad_x = 2 * x * grad_y. Finally store the sums in grad_b.
    (void)x, (void)grad_y, (void)grad_x, (void)grad_b;
    return SQUARE_BIAS_OK;
}

int square_bias_backward_f64(const double *restrict x, const double *restrict grad_y, double *restrict grad_x,
                             double *restrict grad_b, int64_t n, int64_t b_n) {
    if (bad_sizes(n, b_n)) return SQUARE_BIAS_EINVAL;
    // TODO (roughly 15 lines): the same as square_bias_backward_f32, with double everywhere.
    (void)x, (void)grad_y, (void)grad_x, (void)grad_b;
    return SQUARE_BIAS_OK;
}
