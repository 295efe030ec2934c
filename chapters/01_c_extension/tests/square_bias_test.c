/*
 * square_bias_test.c — checks the C core without Python: forward and backward for float and double, for a
 * scalar, a row and a full-shape bias, empty input, and bad sizes. The expected values come from a slow,
 * obviously-correct loop with i % b_n. Exit status 0 when everything passes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "square_bias.h"

static int failures = 0;

#define EXPECT(cond, ...)                                        \
    do {                                                         \
        if (!(cond)) {                                           \
            ++failures;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

static double close_enough(double got, double want, double tol) {
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

/* Values in [-2, 2) from a fixed LCG, so runs are repeatable. */
static double next_value(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return ((*state >> 8) / 16777216.0) * 4.0 - 2.0;
}

static void check_f64(int64_t n, int64_t b_n) {
    unsigned state = 12345u + (unsigned)n + 7u * (unsigned)b_n;
    const int64_t nb = b_n > 0 ? b_n : 1;
    double *x = malloc(sizeof(double) * (size_t)(n + 1)), *gy = malloc(sizeof(double) * (size_t)(n + 1));
    double *y = malloc(sizeof(double) * (size_t)(n + 1)), *gx = malloc(sizeof(double) * (size_t)(n + 1));
    double *b = malloc(sizeof(double) * (size_t)nb), *gb = malloc(sizeof(double) * (size_t)nb);
    double *want_gb = calloc((size_t)nb, sizeof(double));
    for (int64_t i = 0; i < n; ++i) x[i] = next_value(&state), gy[i] = next_value(&state);
    for (int64_t j = 0; j < b_n; ++j) b[j] = next_value(&state), gb[j] = 99.0;  // gb must be overwritten

    EXPECT(square_bias_forward_f64(x, b, y, n, b_n) == SQUARE_BIAS_OK, "f64 forward n=%lld", (long long)n);
    EXPECT(square_bias_backward_f64(x, gy, gx, gb, n, b_n) == SQUARE_BIAS_OK, "f64 backward n=%lld", (long long)n);
    for (int64_t i = 0; i < n; ++i) {
        const double want_y = x[i] * x[i] + b[i % b_n];
        EXPECT(close_enough(y[i], want_y, 1e-14), "f64 y[%lld]=%g want %g (b_n=%lld)", (long long)i, y[i], want_y,
               (long long)b_n);
        EXPECT(close_enough(gx[i], 2.0 * x[i] * gy[i], 1e-14), "f64 grad_x[%lld]", (long long)i);
        want_gb[i % b_n] += gy[i];
    }
    for (int64_t j = 0; j < b_n; ++j)
        EXPECT(close_enough(gb[j], want_gb[j], 1e-10), "f64 grad_b[%lld]=%g want %g (n=%lld b_n=%lld)", (long long)j,
               gb[j], want_gb[j], (long long)n, (long long)b_n);

    // NULL outputs: only the requested gradient is written.
    for (int64_t j = 0; j < b_n; ++j) gb[j] = 99.0;
    EXPECT(square_bias_backward_f64(x, gy, NULL, gb, n, b_n) == SQUARE_BIAS_OK, "f64 backward grad_x=NULL");
    for (int64_t j = 0; j < b_n; ++j)
        EXPECT(close_enough(gb[j], want_gb[j], 1e-10), "f64 grad_b only [%lld]", (long long)j);
    for (int64_t i = 0; i < n; ++i) gx[i] = 0.0;
    EXPECT(square_bias_backward_f64(x, gy, gx, NULL, n, b_n) == SQUARE_BIAS_OK, "f64 backward grad_b=NULL");
    for (int64_t i = 0; i < n; ++i)
        EXPECT(close_enough(gx[i], 2.0 * x[i] * gy[i], 1e-14), "f64 grad_x only [%lld]", (long long)i);
    free(x), free(gy), free(y), free(gx), free(b), free(gb), free(want_gb);
}

static void check_f32(int64_t n, int64_t b_n) {
    unsigned state = 777u + (unsigned)n + 3u * (unsigned)b_n;
    const int64_t nb = b_n > 0 ? b_n : 1;
    float *x = malloc(sizeof(float) * (size_t)(n + 1)), *gy = malloc(sizeof(float) * (size_t)(n + 1));
    float *y = malloc(sizeof(float) * (size_t)(n + 1)), *gx = malloc(sizeof(float) * (size_t)(n + 1));
    float *b = malloc(sizeof(float) * (size_t)nb), *gb = malloc(sizeof(float) * (size_t)nb);
    double *want_gb = calloc((size_t)nb, sizeof(double));
    for (int64_t i = 0; i < n; ++i) x[i] = (float)next_value(&state), gy[i] = (float)next_value(&state);
    for (int64_t j = 0; j < b_n; ++j) b[j] = (float)next_value(&state), gb[j] = 99.0f;

    EXPECT(square_bias_forward_f32(x, b, y, n, b_n) == SQUARE_BIAS_OK, "f32 forward n=%lld", (long long)n);
    EXPECT(square_bias_backward_f32(x, gy, gx, gb, n, b_n) == SQUARE_BIAS_OK, "f32 backward n=%lld", (long long)n);
    for (int64_t i = 0; i < n; ++i) {
        const double want_y = (double)x[i] * x[i] + b[i % b_n];
        EXPECT(close_enough(y[i], want_y, 1e-6), "f32 y[%lld]=%g want %g (b_n=%lld)", (long long)i, y[i], want_y,
               (long long)b_n);
        EXPECT(close_enough(gx[i], 2.0 * x[i] * gy[i], 1e-6), "f32 grad_x[%lld]", (long long)i);
        want_gb[i % b_n] += gy[i];
    }
    // Summed in double, the float result is within float rounding of the exact sum even over many rows.
    for (int64_t j = 0; j < b_n; ++j)
        EXPECT(close_enough(gb[j], want_gb[j], 1e-6), "f32 grad_b[%lld]=%g want %g (n=%lld b_n=%lld)", (long long)j,
               gb[j], want_gb[j], (long long)n, (long long)b_n);
    free(x), free(gy), free(y), free(gx), free(b), free(gb), free(want_gb);
}

int main(void) {
    // (n, b_n): scalar, rows of several widths (below, at and above the 256-column block), full shape, empty.
    const int64_t cases[][2] = {{1, 1},     {7, 1},      {1 << 20, 1},   {12, 3},         {12, 12}, {1000, 250},
                                {600, 300}, {5130, 513}, {1 << 16, 256}, {1 << 18, 1024}, {0, 1},   {0, 4}};
    const int count = (int)(sizeof(cases) / sizeof(cases[0]));
    for (int c = 0; c < count; ++c) {
        check_f64(cases[c][0], cases[c][1]);
        check_f32(cases[c][0], cases[c][1]);
    }
    // Bad sizes are refused and nothing is written.
    float x[6] = {1, 2, 3, 4, 5, 6}, b[4] = {0}, y[6] = {-1, -1, -1, -1, -1, -1};
    EXPECT(square_bias_forward_f32(x, b, y, 6, 4) == SQUARE_BIAS_EINVAL, "b_n=4 does not divide n=6");
    EXPECT(square_bias_forward_f32(x, b, y, 6, 0) == SQUARE_BIAS_EINVAL, "b_n=0 with n>0");
    EXPECT(square_bias_forward_f32(x, b, y, -1, 1) == SQUARE_BIAS_EINVAL, "n<0");
    EXPECT(square_bias_backward_f32(x, x, y, b, 6, 4) == SQUARE_BIAS_EINVAL, "backward b_n=4, n=6");
    EXPECT(y[0] == -1.0f, "a refused call wrote its output");

    if (failures) {
        fprintf(stderr, "square_bias_test: %d check(s) FAILED\n", failures);
        return 1;
    }
    printf("square_bias_test: all %d size cases passed for float and double\n", count);
    return 0;
}
