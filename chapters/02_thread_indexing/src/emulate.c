/*
 * emulate.c — run the thread grid on the CPU: the loops the hardware runs in parallel, written out in order.
 *
 * For every block of the grid (z, y, x: x fastest) and every thread of the block (z, y, x), build the thread's
 * view of the launch (ti_thread) and call the same formula function the GPU kernel calls (thread_index.h). One
 * CPU thread does all the work; the order of the rows is the launch order, which the GPU's table uses too.
 */
#include "emulate.h"

#include <stddef.h>

#include "thread_index.h"

static const char *const formula_names[TI_FORMULA_COUNT] = {
    "grid1d_block1d",     "grid1d_block2d",  "grid1d_block3d",   "grid2d_block1d", "grid2d_block2d",
    "grid2d_block3d",     "grid3d_block1d",  "grid3d_block2d",   "grid3d_block3d", "pitfall_1d_griddim",
    "pitfall_2d_add_dim", "pitfall_seed000", "pitfall_int32_1d",
};

int ti_formula_count(void) {
    return TI_FORMULA_COUNT;
}

const char *ti_formula_name(int formula) {
    return (formula >= 0 && formula < TI_FORMULA_COUNT) ? formula_names[formula] : NULL;
}

int ti_table_columns(void) {
    return TI_COLUMNS;
}

static int dims_ok(const uint32_t d[3]) {
    return d != NULL && d[0] > 0 && d[1] > 0 && d[2] > 0;
}

int ti_emulate(int formula, const uint32_t grid[3], const uint32_t block[3], int64_t first_block, int64_t n_blocks,
               int64_t *table) {
    if (formula < 0 || formula >= TI_FORMULA_COUNT || !dims_ok(grid) || !dims_ok(block) || table == NULL) return -1;
    int64_t total_blocks = (int64_t)grid[0] * grid[1] * grid[2];
    if (first_block < 0 || n_blocks < 0 || first_block + n_blocks > total_blocks) return -1;

    ti_thread t;
    t.gridDim = (ti_uint3){grid[0], grid[1], grid[2]};
    t.blockDim = (ti_uint3){block[0], block[1], block[2]};
    for (int64_t b = first_block; b < first_block + n_blocks; ++b) {
        /* the block's number -> blockIdx (x fastest) */
        t.blockIdx.x = (unsigned int)(b % grid[0]);
        t.blockIdx.y = (unsigned int)(b / grid[0] % grid[1]);
        t.blockIdx.z = (unsigned int)(b / ((int64_t)grid[0] * grid[1]));
        for (unsigned int z = 0; z < block[2]; ++z) {
            for (unsigned int y = 0; y < block[1]; ++y) {
                for (unsigned int x = 0; x < block[0]; ++x) {
                    t.threadIdx = (ti_uint3){x, y, z};
                    int64_t *row = table + ti_table_row(t, first_block) * TI_COLUMNS;
                    row[TI_COL_GLOBAL] = ti_global_index(formula, t);
                    row[TI_COL_BLOCK_X] = t.blockIdx.x;
                    row[TI_COL_BLOCK_Y] = t.blockIdx.y;
                    row[TI_COL_BLOCK_Z] = t.blockIdx.z;
                    row[TI_COL_THREAD_X] = x;
                    row[TI_COL_THREAD_Y] = y;
                    row[TI_COL_THREAD_Z] = z;
                    row[TI_COL_WARP] = ti_warp_id(t);
                    row[TI_COL_LANE] = ti_lane_id(t);
                }
            }
        }
    }
    return 0;
}

int ti_emulate_grid_stride(uint32_t blocks, uint32_t threads, int64_t n, int64_t *owner, uint8_t *counts) {
    if (blocks == 0 || threads == 0 || n < 0) return -1;
    int64_t stride = (int64_t)blocks * threads; /* gridDim.x * blockDim.x: every thread of the grid, once */
    for (int64_t thread = 0; thread < stride; ++thread) {
        for (int64_t i = thread; i < n; i += stride) {
            if (owner != NULL) owner[i] = thread;
            if (counts != NULL) counts[i] = (uint8_t)(counts[i] + 1);
        }
    }
    return 0;
}
