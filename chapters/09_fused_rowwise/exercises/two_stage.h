/*
 * two_stage.h — EXERCISE COPY of src/two_stage.h: dweight = the sum over rows of dy * xhat in the two stages of the
 * norms' backward, with no atomics, so that two runs give the same bits. Fill in the two bodies marked TODO, then
 * `EXERCISE=1 make test`: tests/test_emulation.py runs your code on the CPU, one POSIX thread per row group.
 *
 *   stage 1: `groups` row groups work side by side. Group g takes the rows g, g + groups, g + 2 groups, ... in that
 *            order and adds each row's products into its own partial row.
 *   stage 2: column c of the result adds the groups' partial rows in a fixed order: RW_RUNS runs, run j adding the
 *            groups j, j + RW_RUNS, j + 2 RW_RUNS, ..., then the RW_RUNS runs' sums in order j = 0, 1, ...
 * Every sum starts from 0 and adds in the order written.
 */
#ifndef TWO_STAGE_H
#define TWO_STAGE_H

#include <stdint.h>

#include "rowwise_device.h"

#define RW_RUNS 16

/* TODO 1 (about 4 lines): stage 1 for one group. Set partial[0..n) to 0, then for row = group, group + groups, ...
 * (while row < rows) add products[row * n + c] to partial[c] for every column c < n. */
RW_FN void rw_stage1(const float *products, int64_t rows, int64_t n, int64_t group, int64_t groups, float *partial) {
    (void)products, (void)rows, (void)n, (void)group, (void)groups, (void)partial;
}

/* TODO 2 (about 7 lines): stage 2 for one column c. For each run j = 0 .. RW_RUNS-1: run = 0, then add
 * partials[g * n + c] for g = j, j + RW_RUNS, ... (while g < groups); add each run to a total that starts at 0, in
 * the order j = 0, 1, ...; return the total. */
RW_FN float rw_stage2(const float *partials, int64_t groups, int64_t n, int64_t c) {
    (void)partials, (void)groups, (void)n, (void)c;
    return 0.0f;
}

#endif /* TWO_STAGE_H */
