/*
 * thread_index.h — "which element is mine?": the global index of a thread, for every grid × block shape.
 *
 * Written once as __host__ __device__ functions, so the same code runs inside a kernel (record.cu) and in the
 * plain-C CPU emulation (emulate.c), which loops over blocks and threads the way the hardware launches them.
 *
 * A thread's built-in coordinates are copied into a ti_thread, whose fields carry CUDA's names, so each formula
 * reads exactly as it would inside a kernel. Every formula has the same shape:
 *
 *     global = (block's number in the grid) * (threads per block) + (thread's number in its block)
 *
 * with x varying fastest, then y, then z. The products are taken in 64 bits (int64_t): blockIdx and blockDim are
 * 32-bit unsigned, and their product passes 2^31 as soon as a launch covers more than 2^31 elements.
 *
 * The seeds' wrong formulas are kept as pitfall_* functions beside the right ones; the tests show their
 * collisions (two threads, one element) and gaps (elements no thread touches).
 */
#ifndef THREAD_INDEX_H
#define THREAD_INDEX_H

#include <stdint.h>

#ifdef __CUDACC__
#define HD __host__ __device__
#else
#define HD
#endif

#define TI_WARP_SIZE 32

/* CUDA's uint3 / dim3, in plain C. */
typedef struct {
    unsigned int x, y, z;
} ti_uint3;

/* One thread's view of the launch: what gridDim, blockDim, blockIdx and threadIdx hold inside the kernel. */
typedef struct {
    ti_uint3 gridDim, blockDim, blockIdx, threadIdx;
} ti_thread;

/* ---- the two halves of every formula ------------------------------------------------------------------------ */
/* The block's number in a 1D, 2D or 3D grid (x fastest). */
static inline HD int64_t ti_block_in_grid_1d(ti_thread t) {
    return (int64_t)t.blockIdx.x;
}
static inline HD int64_t ti_block_in_grid_2d(ti_thread t) {
    return (int64_t)t.blockIdx.y * t.gridDim.x + t.blockIdx.x;
}
static inline HD int64_t ti_block_in_grid_3d(ti_thread t) {
    return ((int64_t)t.blockIdx.z * t.gridDim.y + t.blockIdx.y) * t.gridDim.x + t.blockIdx.x;
}
/* The thread's number in a 1D, 2D or 3D block (x fastest): also how the hardware cuts a block into warps. */
static inline HD int64_t ti_thread_in_block_1d(ti_thread t) {
    return (int64_t)t.threadIdx.x;
}
static inline HD int64_t ti_thread_in_block_2d(ti_thread t) {
    return (int64_t)t.threadIdx.y * t.blockDim.x + t.threadIdx.x;
}
static inline HD int64_t ti_thread_in_block_3d(ti_thread t) {
    return ((int64_t)t.threadIdx.z * t.blockDim.y + t.threadIdx.y) * t.blockDim.x + t.threadIdx.x;
}
static inline HD int64_t ti_threads_per_block(ti_thread t) {
    return (int64_t)t.blockDim.x * t.blockDim.y * t.blockDim.z;
}

/* Warps are cut from the thread's 3D number in its block: threads 0–31 form warp 0, 32–63 warp 1, ... */
static inline HD int64_t ti_warp_id(ti_thread t) {
    return ti_thread_in_block_3d(t) / TI_WARP_SIZE;
}
static inline HD int64_t ti_lane_id(ti_thread t) {
    return ti_thread_in_block_3d(t) % TI_WARP_SIZE;
}

/* ---- the nine correct formulas: grid shape × block shape ---------------------------------------------------- */
/* Each assumes the launch has that shape (the unused dimensions are 1). */
static inline HD int64_t ti_grid1d_block1d(ti_thread t) {
    return (int64_t)t.blockIdx.x * t.blockDim.x + t.threadIdx.x;
}
static inline HD int64_t ti_grid1d_block2d(ti_thread t) {
    return ti_block_in_grid_1d(t) * ((int64_t)t.blockDim.x * t.blockDim.y) + ti_thread_in_block_2d(t);
}
static inline HD int64_t ti_grid1d_block3d(ti_thread t) {
    return ti_block_in_grid_1d(t) * ti_threads_per_block(t) + ti_thread_in_block_3d(t);
}
static inline HD int64_t ti_grid2d_block1d(ti_thread t) {
    return ti_block_in_grid_2d(t) * t.blockDim.x + ti_thread_in_block_1d(t);
}
static inline HD int64_t ti_grid2d_block2d(ti_thread t) {
    return ti_block_in_grid_2d(t) * ((int64_t)t.blockDim.x * t.blockDim.y) + ti_thread_in_block_2d(t);
}
static inline HD int64_t ti_grid2d_block3d(ti_thread t) {
    return ti_block_in_grid_2d(t) * ti_threads_per_block(t) + ti_thread_in_block_3d(t);
}
static inline HD int64_t ti_grid3d_block1d(ti_thread t) {
    return ti_block_in_grid_3d(t) * t.blockDim.x + ti_thread_in_block_1d(t);
}
static inline HD int64_t ti_grid3d_block2d(ti_thread t) {
    return ti_block_in_grid_3d(t) * ((int64_t)t.blockDim.x * t.blockDim.y) + ti_thread_in_block_2d(t);
}

/* The ninth, the most general one, is the chapter's exercise: it lives in its own file, included with angle
 * brackets so that the include path picks it. The builds put exercises/ first on that path under EXERCISE=1 (the
 * Makefile's $(EXERCISE_INCLUDES), setup.py's setup_extension), so the student's exercises/grid3d_block3d.h
 * replaces src/grid3d_block3d.h; otherwise src/ (-Isrc) holds the only copy. */
#include <grid3d_block3d.h>

/* ---- pitfalls from the seeds: wrong formulas kept for the tests and the pictures ---------------------------- */
/* Seed 002, 1D grid × 1D block: multiplies by the number of blocks instead of the block's size. Threads collide
 * when gridDim.x < blockDim.x and leave gaps when gridDim.x > blockDim.x; right only when the two are equal. */
static inline HD int64_t ti_pitfall_1d_griddim(ti_thread t) {
    return (int64_t)t.blockIdx.x * t.gridDim.x + t.threadIdx.x;
}
/* Seed 002, 2D grid × 2D block: "thread in block" = threadIdx.y * blockDim.x + blockDim.x and "block in grid" =
 * blockIdx.y * gridDim.x + gridDim.x add the size where the index belongs, so threadIdx.x and blockIdx.x are
 * lost: all threads of a block row collide. */
static inline HD int64_t ti_pitfall_2d_add_dim(ti_thread t) {
    int64_t thread_in_block = (int64_t)t.threadIdx.y * t.blockDim.x + t.blockDim.x;
    int64_t block_in_grid = (int64_t)t.blockIdx.y * t.gridDim.x + t.gridDim.x;
    return block_in_grid * ((int64_t)t.blockDim.x * t.blockDim.y) + thread_in_block;
}
/* Seed 000 §8.1.2: `blockIdx.x + blockDim.x * blockIdx.y`, launched with a grid sized (rows, cols) and 4-thread
 * blocks. threadIdx never appears, so all 4 threads of a block write the same element. */
static inline HD int64_t ti_pitfall_seed000(ti_thread t) {
    return (int64_t)t.blockIdx.x + (int64_t)t.blockDim.x * t.blockIdx.y;
}
/* `int i = blockIdx.x * blockDim.x + threadIdx.x;` the product is taken in 32-bit unsigned arithmetic and then
 * squeezed into a 32-bit int: past 2^31 threads it turns negative (and past 2^32 it wraps to small numbers).
 * ti_grid1d_block1d is the fix: widen to 64 bits before multiplying. */
static inline HD int64_t ti_pitfall_int32_1d(ti_thread t) {
    int32_t i = (int32_t)(t.blockIdx.x * t.blockDim.x + t.threadIdx.x);
    return i;
}

/* ---- choosing a formula by number (the emulation and the kernel launcher use the same list) ---------------- */
enum {
    TI_GRID1D_BLOCK1D,
    TI_GRID1D_BLOCK2D,
    TI_GRID1D_BLOCK3D,
    TI_GRID2D_BLOCK1D,
    TI_GRID2D_BLOCK2D,
    TI_GRID2D_BLOCK3D,
    TI_GRID3D_BLOCK1D,
    TI_GRID3D_BLOCK2D,
    TI_GRID3D_BLOCK3D,
    TI_PITFALL_1D_GRIDDIM,
    TI_PITFALL_2D_ADD_DIM,
    TI_PITFALL_SEED000,
    TI_PITFALL_INT32_1D,
    TI_FORMULA_COUNT
};

/* The formula's value for one thread. The caller checks 0 <= formula < TI_FORMULA_COUNT first. */
static inline HD int64_t ti_global_index(int formula, ti_thread t) {
    switch (formula) {
        case TI_GRID1D_BLOCK1D:
            return ti_grid1d_block1d(t);
        case TI_GRID1D_BLOCK2D:
            return ti_grid1d_block2d(t);
        case TI_GRID1D_BLOCK3D:
            return ti_grid1d_block3d(t);
        case TI_GRID2D_BLOCK1D:
            return ti_grid2d_block1d(t);
        case TI_GRID2D_BLOCK2D:
            return ti_grid2d_block2d(t);
        case TI_GRID2D_BLOCK3D:
            return ti_grid2d_block3d(t);
        case TI_GRID3D_BLOCK1D:
            return ti_grid3d_block1d(t);
        case TI_GRID3D_BLOCK2D:
            return ti_grid3d_block2d(t);
        case TI_GRID3D_BLOCK3D:
            return ti_grid3d_block3d(t);
        case TI_PITFALL_1D_GRIDDIM:
            return ti_pitfall_1d_griddim(t);
        case TI_PITFALL_2D_ADD_DIM:
            return ti_pitfall_2d_add_dim(t);
        case TI_PITFALL_SEED000:
            return ti_pitfall_seed000(t);
        case TI_PITFALL_INT32_1D:
            return ti_pitfall_int32_1d(t);
        default:
            return INT64_MIN; /* unreachable after the caller's check */
    }
}

/* The table both the kernel and the emulation fill: one row per thread, these columns. */
enum {
    TI_COL_GLOBAL,
    TI_COL_BLOCK_X,
    TI_COL_BLOCK_Y,
    TI_COL_BLOCK_Z,
    TI_COL_THREAD_X,
    TI_COL_THREAD_Y,
    TI_COL_THREAD_Z,
    TI_COL_WARP,
    TI_COL_LANE,
    TI_COLUMNS
};

/* Where a thread's row goes: threads in launch order (block number in the 3D grid, then thread number in the 3D
 * block), counted from the first recorded block. Deliberately not the formula under test, so a wrong formula
 * cannot hide its collisions by overwriting rows. */
static inline HD int64_t ti_table_row(ti_thread t, int64_t first_block) {
    return (ti_block_in_grid_3d(t) - first_block) * ti_threads_per_block(t) + ti_thread_in_block_3d(t);
}

#endif /* THREAD_INDEX_H */
