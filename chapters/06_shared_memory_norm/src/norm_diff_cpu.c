/*
 * norm_diff_cpu.c — ‖a − b‖₂ and its gradient on the CPU: one plain loop, accumulated in double.
 *
 * This is the op's CPU implementation (so the op, opcheck and gradcheck run on any machine) and the chapter's
 * reference: a double accumulator is more exact than any of the GPU rungs, which sum in fp32 per thread.
 * 16-bit inputs arrive as their raw bits and are converted here (IEEE binary16 and bfloat16).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "norm_diff.h"

static double half_to_double(uint16_t h) {
    const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double value;
    if (exponent == 0) {
        value = ldexp(mantissa, -24); /* subnormal: mantissa · 2^-24 */
    } else if (exponent == 31) {
        value = mantissa ? NAN : INFINITY;
    } else {
        value = ldexp(mantissa + 1024, exponent - 25); /* (1 + m/1024) · 2^(e-15) */
    }
    return (h & 0x8000) ? -value : value;
}

static double bfloat16_to_double(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16; /* bfloat16 is the top half of a float */
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Round to nearest even, as the GPU's __float2half_rn does. */
static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    const uint32_t magnitude = x & 0x7fffffff;
    if (magnitude > 0x7f800000) return sign | 0x7e00;  /* NaN */
    if (magnitude >= 0x477ff000) return sign | 0x7c00; /* rounds to 65520 or more: infinity */
    if (magnitude < 0x38800000) {                      /* below 2^-14: a subnormal half (or zero) */
        float small;
        memcpy(&small, &magnitude, sizeof small);
        return sign | (uint16_t)lrintf(small * 16777216.0f); /* · 2^24, exact; lrintf rounds to nearest even */
    }
    uint32_t h = ((((magnitude >> 23) - 127 + 15) << 10) | ((magnitude & 0x7fffff) >> 13));
    const uint32_t rest = magnitude & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* a carry moves into the exponent, as it should */
    return sign | (uint16_t)h;
}

static uint16_t float_to_bfloat16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40); /* NaN stays NaN */
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);                /* round to nearest even */
}

static double load(course_dtype dtype, const void *p, int64_t i) {
    switch (dtype) {
        case COURSE_FLOAT32:
            return ((const float *)p)[i];
        case COURSE_FLOAT64:
            return ((const double *)p)[i];
        case COURSE_FLOAT16:
            return half_to_double(((const uint16_t *)p)[i]);
        case COURSE_BFLOAT16:
            return bfloat16_to_double(((const uint16_t *)p)[i]);
    }
    return NAN;
}

static void store(course_dtype dtype, void *p, int64_t i, double value) {
    switch (dtype) {
        case COURSE_FLOAT32:
            ((float *)p)[i] = (float)value;
            break;
        case COURSE_FLOAT64:
            ((double *)p)[i] = value;
            break;
        case COURSE_FLOAT16:
            ((uint16_t *)p)[i] = float_to_half((float)value);
            break;
        case COURSE_BFLOAT16:
            ((uint16_t *)p)[i] = float_to_bfloat16((float)value);
            break;
    }
}

double norm_diff_sum_squares_cpu(course_dtype dtype, const void *a, const void *b, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double d = load(dtype, a, i) - load(dtype, b, i);
        sum += d * d;
    }
    return sum;
}

double norm_diff_cpu(course_dtype dtype, const void *a, const void *b, int64_t n) {
    return sqrt(norm_diff_sum_squares_cpu(dtype, a, b, n));
}

void norm_diff_backward_cpu(course_dtype dtype, double g, double norm, const void *a, const void *b, void *grad_a,
                            int64_t n) {
    const double scale = norm == 0.0 ? 0.0 : g / norm; /* torch's gradient of the norm at 0 is 0 */
    for (int64_t i = 0; i < n; i++) store(dtype, grad_a, i, scale * (load(dtype, a, i) - load(dtype, b, i)));
}
