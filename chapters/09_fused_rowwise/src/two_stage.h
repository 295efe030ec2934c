/*
 * two_stage.h — dweight = the sum over rows of dy * xhat (and dbias = the sum of dy) in the two stages of the norms'
 * backward (norm_backward.cu), with no atomics, so that two runs give the same bits.
 *
 *   stage 1: `groups` row groups work side by side. Group g takes the rows g, g + groups, g + 2 groups, ... in that
 *            order and adds each row's products into its own partial row. (On the GPU a group is the threads of one
 *            row slot of one block; each thread keeps its columns' sums in registers.)
 *   stage 2: column c of the result adds the groups' partial rows in a fixed order: RW_RUNS runs, run j adding the
 *            groups j, j + RW_RUNS, j + 2 RW_RUNS, ..., then the RW_RUNS runs' sums in order j = 0, 1, ...
 *            (On the GPU: column_sums_kernel, a thread per (column, run).)
 * Every sum starts from 0 and adds in the order written, so the result never depends on which group finishes first.
 *
 * This file compiles as CUDA device code and as plain C (rowwise_device.h). It is the chapter's second exercise:
 * exercises/two_stage.h replaces it under EXERCISE=1, and tests/test_emulation.py runs it on the CPU with one POSIX
 * thread per row group, the groups finishing in whatever order the threads do.
 */
#ifndef TWO_STAGE_H
#define TWO_STAGE_H

#include <stdint.h>

#include "rowwise_device.h"

#define RW_RUNS 16

/* Stage 1 for one group: partial[c] = products[g n + c] + products[(g + groups) n + c] + ..., for c < n. */
RW_FN void rw_stage1(const float *products, int64_t rows, int64_t n, int64_t group, int64_t groups, float *partial) {
    for (int64_t c = 0; c < n; c++) partial[c] = 0.0f;
    for (int64_t row = group; row < rows; row += groups)
        for (int64_t c = 0; c < n; c++) partial[c] += products[row * n + c];
}

/* Stage 2 for one column: the sum of partials[g n + c] over the groups g, in the order above. */
RW_FN float rw_stage2(const float *partials, int64_t groups, int64_t n, int64_t c) {
    float total = 0.0f;
    for (int j = 0; j < RW_RUNS; j++) {
        float run = 0.0f;
        for (int64_t g = j; g < groups; g += RW_RUNS) run += partials[g * n + c];
        total += run;
    }
    return total;
}

#endif /* TWO_STAGE_H */
