/*
 * emulate.h — the thread grid, emulated on the CPU in plain C (no GPU needed).
 *
 * Built into a shared library (make build: build/libthread_index_emu-<variant>.so) that Python loads with ctypes.
 * Functions return 0 on success and -1 on bad arguments (nothing is written then).
 */
#ifndef THREAD_INDEX_EMULATE_H
#define THREAD_INDEX_EMULATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How many formulas there are (TI_FORMULA_COUNT) and their names ("grid2d_block2d", "pitfall_seed000", ...). */
int ti_formula_count(void);
const char *ti_formula_name(int formula);
int ti_table_columns(void);

/* Fill `table` (n_blocks * threads_per_block rows of TI_COLUMNS int64 values) as a launch of grid × block would:
 * for blocks first_block .. first_block + n_blocks - 1 (numbered x fastest) and every thread of each, the
 * formula's global index, blockIdx, threadIdx, warp and lane. */
int ti_emulate(int formula, const uint32_t grid[3], const uint32_t block[3], int64_t first_block, int64_t n_blocks,
               int64_t *table);

/* A grid-stride loop over n elements run by blocks × threads threads: owner[i] is the number of the thread that
 * handled element i, counts[i] how many times it was handled (either pointer may be NULL). */
int ti_emulate_grid_stride(uint32_t blocks, uint32_t threads, int64_t n, int64_t *owner, uint8_t *counts);

#ifdef __cplusplus
}
#endif

#endif
