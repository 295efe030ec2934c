/*
 * online_softmax.h — the per-lane logic of the warp-per-row softmax (rung 2, softmax_2_warp.cu; README "Rung 2"): each
 * lane keeps a running (max, sum) of its elements, then the 32 lanes combine their pairs through warp shuffles.
 *
 * softmax(x)_i = exp(x_i - m) / s with m = max(x), s = sum_j exp(x_j - m). A pair (m, s) summarizes any part of a
 * row: s is that part's sum of exp(x_j - m) for its own max m. Two pairs merge into the pair of both parts by
 * rescaling each sum to the larger max:   (m, s) = (max(ma, mb), sa exp(ma - m) + sb exp(mb - m)).
 * So one pass over x gives (m, s): no pass for the max first.
 *
 * This file compiles as CUDA device code and as plain C (rowwise_device.h): tests/test_emulation.py runs it on the
 * CPU with one POSIX thread per lane. It is the exercise file: exercises/online_softmax.h replaces it under
 * EXERCISE=1, in the GPU kernel and in the emulation alike.
 */
#ifndef ONLINE_SOFTMAX_H
#define ONLINE_SOFTMAX_H

#include "rowwise_device.h"

typedef struct {
    float max; /* the largest element seen, -inf for none */
    float sum; /* sum of exp(x - max) over the elements seen */
} rw_max_sum;

RW_FN rw_max_sum rw_max_sum_empty(void) {
    rw_max_sum s = {-INFINITY, 0.0f};
    return s;
}

RW_FN float rw_exp(float x) {
    return exp2f(x * RW_LOG2E);
}

/* s with one more element x. A larger x rescales the sum to the new max. -inf adds nothing (exp(-inf - max) = 0,
 * but -inf - (-inf) would be NaN); exp(x - x) is written out because for x = +inf it is NaN, which is what torch
 * gives for such a row. A NaN x fails the comparison and makes the sum NaN: the whole row is NaN, as in torch. */
RW_FN rw_max_sum rw_online_add(rw_max_sum s, float x) {
    if (x == -INFINITY) return s;
    if (x > s.max) {
        s.sum = s.sum * rw_exp(s.max - x) + rw_exp(x - x);
        s.max = x;
    } else {
        s.sum += rw_exp(x - s.max);
    }
    return s;
}

/* The sum of s rescaled to a max m >= s.max. An s with nothing to add (sum 0: empty, or only -inf) counts 0, not
 * 0 * exp(NaN) (for m = -inf); a NaN sum (a NaN seen, even in a lane whose max is still -inf) stays NaN. */
RW_FN float rw_rescaled(rw_max_sum s, float m) {
    return s.sum == 0.0f ? 0.0f : s.sum * rw_exp(s.max - m);
}

/* The pair of two disjoint parts of a row. merge(a, b) and merge(b, a) give the same bits (max and + commute), so
 * the lanes of a butterfly all end with the same pair. */
RW_FN rw_max_sum rw_merge(rw_max_sum a, rw_max_sum b) {
    rw_max_sum r;
    r.max = fmaxf(a.max, b.max);
    r.sum = rw_rescaled(a, r.max) + rw_rescaled(b, r.max);
    return r;
}

/* Every lane of a group of `width` lanes (a power of two, at most 32, groups aligned to it) ends with the pair of the
 * whole group: a butterfly, lane i merging with lane i ^ mask for mask = width/2, ..., 2, 1. All 32 lanes of the warp
 * must call it (the shuffles name the full warp). */
RW_FN rw_max_sum rw_warp_combine(rw_max_sum s, int width) {
    for (int mask = width / 2; mask > 0; mask /= 2) {
        rw_max_sum other;
        other.max = RW_SHFL_XOR(s.max, mask);
        other.sum = RW_SHFL_XOR(s.sum, mask);
        s = rw_merge(s, other);
    }
    return s;
}

#endif /* ONLINE_SOFTMAX_H */
