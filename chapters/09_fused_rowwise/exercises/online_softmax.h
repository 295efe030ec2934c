/*
 * online_softmax.h — EXERCISE COPY of src/online_softmax.h: the per-lane logic of the warp-per-row softmax
 * (rung 2). Fill in the three bodies marked TODO, then `EXERCISE=1 make test`: tests/test_emulation.py runs your
 * code on the CPU with one POSIX thread per lane (no GPU needed); on a GPU the rung-2 kernel runs it for real.
 *
 * softmax(x)_i = exp(x_i - m) / s with m = max(x), s = sum_j exp(x_j - m). A pair (m, s) summarizes any part of a
 * row: s is that part's sum of exp(x_j - m) for its own max m. Two pairs merge into the pair of both parts by
 * rescaling each sum to the larger max:   (m, s) = (max(ma, mb), sa exp(ma - m) + sb exp(mb - m)).
 */
#ifndef ONLINE_SOFTMAX_H
#define ONLINE_SOFTMAX_H

#include "rowwise_device.h"

#ifdef __CUDACC__
#pragma nv_diag_suppress 177 /* until the TODOs are done, rw_rescaled is never called: nvcc would warn */
#endif

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

/* TODO 1 (about 8 lines): s with one more element x.
 *   - x = -inf adds nothing: return s unchanged (computing exp(-inf - (-inf)) would give NaN).
 *   - x > s.max: the old sum is rescaled to the new max, then x's own term is added:
 *       sum = sum * rw_exp(max - x) + rw_exp(x - x);  max = x
 *     (write rw_exp(x - x), not 1: for x = +inf it is NaN, which is what torch gives for such a row).
 *   - otherwise: sum += rw_exp(x - max).                                                                        */
RW_FN rw_max_sum rw_online_add(rw_max_sum s, float x) {
    (void)x;
    return s;
}

/* The sum of s rescaled to a max m >= s.max. An s with nothing to add (sum 0: empty, or only -inf) counts 0, not
 * 0 * exp(NaN) (for m = -inf); a NaN sum (a NaN seen, even in a lane whose max is still -inf) stays NaN. */
RW_FN float rw_rescaled(rw_max_sum s, float m) {
    return s.sum == 0.0f ? 0.0f : s.sum * rw_exp(s.max - m);
}

/* TODO 2 (about 3 lines): the pair of two disjoint parts of a row: the larger max (fmaxf), and the two sums rescaled
 * to it (rw_rescaled) and added. */
RW_FN rw_max_sum rw_merge(rw_max_sum a, rw_max_sum b) {
    (void)b;
    return a;
}

/* TODO 3 (about 6 lines): every lane of a group of `width` lanes (a power of two, at most 32) ends with the pair of
 * the whole group. A butterfly: for mask = width/2, ..., 2, 1, fetch the other lane's max and sum with
 * RW_SHFL_XOR(value, mask) (lane i receives lane i ^ mask's value) and merge. Every lane must make the same shuffle
 * calls in the same order. */
RW_FN rw_max_sum rw_warp_combine(rw_max_sum s, int width) {
    (void)width;
    return s;
}

#endif /* ONLINE_SOFTMAX_H */
