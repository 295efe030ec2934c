/*
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
    if (grad_b == NULL) {  // only grad_x: one flat loop
        if (grad_x != NULL)
            for (int64_t i = 0; i < n; ++i) grad_x[i] = 2.0f * x[i] * grad_y[i];
        return SQUARE_BIAS_OK;
    }
    if (b_n == 1) {  // a scalar bias: four partial sums keep the additions independent (faster, and more exact)
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) {
            s0 += grad_y[i];
            s1 += grad_y[i + 1];
            s2 += grad_y[i + 2];
            s3 += grad_y[i + 3];
            if (grad_x != NULL) {
                grad_x[i] = 2.0f * x[i] * grad_y[i];
                grad_x[i + 1] = 2.0f * x[i + 1] * grad_y[i + 1];
                grad_x[i + 2] = 2.0f * x[i + 2] * grad_y[i + 2];
                grad_x[i + 3] = 2.0f * x[i + 3] * grad_y[i + 3];
            }
        }
        for (; i < n; ++i) {
            s0 += grad_y[i];
            if (grad_x != NULL) grad_x[i] = 2.0f * x[i] * grad_y[i];
        }
        grad_b[0] = (float)((s0 + s1) + (s2 + s3));
        return SQUARE_BIAS_OK;
    }
    if (b_n == n) {  // b has x's shape: one row, nothing to sum
        if (grad_x == NULL) {
            for (int64_t i = 0; i < n; ++i) grad_b[i] = grad_y[i];
            return SQUARE_BIAS_OK;
        }
        for (int64_t i = 0; i < n; ++i) {
            grad_b[i] = grad_y[i];
            grad_x[i] = 2.0f * x[i] * grad_y[i];
        }
        return SQUARE_BIAS_OK;
    }
    // A block of up to SQUARE_BIAS_BLOCK columns at a time: sum them down all rows into double accumulators.
    for (int64_t j0 = 0; j0 < b_n; j0 += SQUARE_BIAS_BLOCK) {
        const int64_t width = b_n - j0 < SQUARE_BIAS_BLOCK ? b_n - j0 : SQUARE_BIAS_BLOCK;
        double sum[SQUARE_BIAS_BLOCK];
        for (int64_t j = 0; j < width; ++j) sum[j] = 0.0;
        for (int64_t row = 0; row < n; row += b_n) {
            const int64_t start = row + j0;
            if (grad_x != NULL) {  // the branch sits outside the inner loop so that loop vectorises
                for (int64_t j = 0; j < width; ++j) {
                    const float g = grad_y[start + j];
                    sum[j] += g;
                    grad_x[start + j] = 2.0f * x[start + j] * g;
                }
            } else {
                for (int64_t j = 0; j < width; ++j) sum[j] += grad_y[start + j];
            }
        }
        for (int64_t j = 0; j < width; ++j) grad_b[j0 + j] = (float)sum[j];
    }
    return SQUARE_BIAS_OK;
}

int square_bias_backward_f64(const double *restrict x, const double *restrict grad_y, double *restrict grad_x,
                             double *restrict grad_b, int64_t n, int64_t b_n) {
    if (bad_sizes(n, b_n)) return SQUARE_BIAS_EINVAL;
    if (grad_b == NULL) {
        if (grad_x != NULL)
            for (int64_t i = 0; i < n; ++i) grad_x[i] = 2.0 * x[i] * grad_y[i];
        return SQUARE_BIAS_OK;
    }
    if (b_n == 1) {
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) {
            s0 += grad_y[i];
            s1 += grad_y[i + 1];
            s2 += grad_y[i + 2];
            s3 += grad_y[i + 3];
            if (grad_x != NULL) {
                grad_x[i] = 2.0 * x[i] * grad_y[i];
                grad_x[i + 1] = 2.0 * x[i + 1] * grad_y[i + 1];
                grad_x[i + 2] = 2.0 * x[i + 2] * grad_y[i + 2];
                grad_x[i + 3] = 2.0 * x[i + 3] * grad_y[i + 3];
            }
        }
        for (; i < n; ++i) {
            s0 += grad_y[i];
            if (grad_x != NULL) grad_x[i] = 2.0 * x[i] * grad_y[i];
        }
        grad_b[0] = (s0 + s1) + (s2 + s3);
        return SQUARE_BIAS_OK;
    }
    if (b_n == n) {
        if (grad_x == NULL) {
            for (int64_t i = 0; i < n; ++i) grad_b[i] = grad_y[i];
            return SQUARE_BIAS_OK;
        }
        for (int64_t i = 0; i < n; ++i) {
            grad_b[i] = grad_y[i];
            grad_x[i] = 2.0 * x[i] * grad_y[i];
        }
        return SQUARE_BIAS_OK;
    }
    for (int64_t j0 = 0; j0 < b_n; j0 += SQUARE_BIAS_BLOCK) {
        const int64_t width = b_n - j0 < SQUARE_BIAS_BLOCK ? b_n - j0 : SQUARE_BIAS_BLOCK;
        double sum[SQUARE_BIAS_BLOCK];
        for (int64_t j = 0; j < width; ++j) sum[j] = 0.0;
        for (int64_t row = 0; row < n; row += b_n) {
            const int64_t start = row + j0;
            if (grad_x != NULL) {  // the branch sits outside the inner loop so that loop vectorises
                for (int64_t j = 0; j < width; ++j) {
                    const double g = grad_y[start + j];
                    sum[j] += g;
                    grad_x[start + j] = 2.0 * x[start + j] * g;
                }
            } else {
                for (int64_t j = 0; j < width; ++j) sum[j] += grad_y[start + j];
            }
        }
        for (int64_t j = 0; j < width; ++j) grad_b[j0 + j] = sum[j];
    }
    return SQUARE_BIAS_OK;
}
