/*
 * record.cu — kernels that show how threads are numbered, and their launchers.
 *
 * record_<formula>: one kernel per formula in thread_index.h. Every launched thread computes its global index with
 *   that formula and writes it, with its blockIdx, threadIdx, warp number and hardware lane id, into its own row of
 *   a table (row = its place in launch order, ti_table_row). One thread, one row; no thread reads another's.
 * grid_stride: a fixed number of threads covers any n: thread g handles elements g, g + stride, g + 2 stride, ...
 *   where stride = gridDim.x * blockDim.x, all in 64-bit.
 * divergence: threads of one warp take different branches (mode 1) or whole warps do (mode 2).
 */
#include "record.h"

#include "course_check.h"
#include "thread_index.h"

/* The built-in coordinates, copied into the struct the formulas take. */
static __device__ ti_thread this_thread(void) {
    ti_thread t;
    t.gridDim = ti_uint3{gridDim.x, gridDim.y, gridDim.z};
    t.blockDim = ti_uint3{blockDim.x, blockDim.y, blockDim.z};
    t.blockIdx = ti_uint3{blockIdx.x, blockIdx.y, blockIdx.z};
    t.threadIdx = ti_uint3{threadIdx.x, threadIdx.y, threadIdx.z};
    return t;
}

/* The lane as the hardware numbers it (PTX %laneid), to check that warps are cut as ti_lane_id says. */
static __device__ int64_t hardware_lane(void) {
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

static __device__ void write_row(int64_t *table, int64_t first_block, int64_t n_blocks, ti_thread t, int64_t global) {
    int64_t block = ti_block_in_grid_3d(t);
    if (block < first_block || block >= first_block + n_blocks) return;
    int64_t *row = table + ti_table_row(t, first_block) * TI_COLUMNS;
    row[TI_COL_GLOBAL] = global;
    row[TI_COL_BLOCK_X] = t.blockIdx.x;
    row[TI_COL_BLOCK_Y] = t.blockIdx.y;
    row[TI_COL_BLOCK_Z] = t.blockIdx.z;
    row[TI_COL_THREAD_X] = t.threadIdx.x;
    row[TI_COL_THREAD_Y] = t.threadIdx.y;
    row[TI_COL_THREAD_Z] = t.threadIdx.z;
    row[TI_COL_WARP] = ti_thread_in_block_3d(t) / warpSize;
    row[TI_COL_LANE] = hardware_lane();
}

/* The kernel family: the same body around each formula. */
#define RECORD_KERNEL(formula)                                                                       \
    static __global__ void record_##formula(int64_t first_block, int64_t n_blocks, int64_t *table) { \
        ti_thread t = this_thread();                                                                 \
        write_row(table, first_block, n_blocks, t, ti_##formula(t));                                 \
    }
RECORD_KERNEL(grid1d_block1d)
RECORD_KERNEL(grid1d_block2d)
RECORD_KERNEL(grid1d_block3d)
RECORD_KERNEL(grid2d_block1d)
RECORD_KERNEL(grid2d_block2d)
RECORD_KERNEL(grid2d_block3d)
RECORD_KERNEL(grid3d_block1d)
RECORD_KERNEL(grid3d_block2d)
RECORD_KERNEL(grid3d_block3d)
RECORD_KERNEL(pitfall_1d_griddim)
RECORD_KERNEL(pitfall_2d_add_dim)
RECORD_KERNEL(pitfall_seed000)
RECORD_KERNEL(pitfall_int32_1d)

typedef void (*record_kernel)(int64_t, int64_t, int64_t *);

static record_kernel pick_record_kernel(int formula) {
    switch (formula) {
        case TI_GRID1D_BLOCK1D:
            return record_grid1d_block1d;
        case TI_GRID1D_BLOCK2D:
            return record_grid1d_block2d;
        case TI_GRID1D_BLOCK3D:
            return record_grid1d_block3d;
        case TI_GRID2D_BLOCK1D:
            return record_grid2d_block1d;
        case TI_GRID2D_BLOCK2D:
            return record_grid2d_block2d;
        case TI_GRID2D_BLOCK3D:
            return record_grid2d_block3d;
        case TI_GRID3D_BLOCK1D:
            return record_grid3d_block1d;
        case TI_GRID3D_BLOCK2D:
            return record_grid3d_block2d;
        case TI_GRID3D_BLOCK3D:
            return record_grid3d_block3d;
        case TI_PITFALL_1D_GRIDDIM:
            return record_pitfall_1d_griddim;
        case TI_PITFALL_2D_ADD_DIM:
            return record_pitfall_2d_add_dim;
        case TI_PITFALL_SEED000:
            return record_pitfall_seed000;
        case TI_PITFALL_INT32_1D:
            return record_pitfall_int32_1d;
        default:
            return NULL; /* an unknown number launches nothing: the launcher reports it */
    }
}

extern "C" cudaError_t ti_launch_record(int formula, const uint32_t grid[3], const uint32_t block[3],
                                        int64_t first_block, int64_t n_blocks, int64_t *table, cudaStream_t stream) {
    record_kernel kernel = pick_record_kernel(formula);
    if (kernel == NULL || grid == NULL || block == NULL || table == NULL || first_block < 0 || n_blocks < 0) {
        return cudaErrorInvalidValue;
    }
    /* No check of grid and block against the device's limits here: the launch itself reports them (grid.y > 65535
     * gives cudaErrorInvalidValue with CUDA 13, cudaErrorInvalidConfiguration with older releases), which is what the
     * lesson shows. */
    dim3 grid_dim(grid[0], grid[1], grid[2]);
    dim3 block_dim(block[0], block[1], block[2]);
    kernel<<<grid_dim, block_dim, 0, stream>>>(first_block, n_blocks, table);
    return cudaGetLastError();
}

/* ---- grid-stride loop ------------------------------------------------------------------------------------------ */
static __global__ void grid_stride(int64_t n, uint8_t *counts, int64_t *owner) {
    int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = first; i < n; i += stride) {
        if (counts != NULL) counts[i] += 1;
        if (owner != NULL) owner[i] = first;
    }
}

extern "C" cudaError_t ti_launch_grid_stride(uint32_t blocks, uint32_t threads, int64_t n, uint8_t *counts,
                                             int64_t *owner, cudaStream_t stream) {
    if (blocks == 0 || threads == 0 || n < 0) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    grid_stride<<<blocks, threads, 0, stream>>>(n, counts, owner);
    return cudaGetLastError();
}

/* ---- warp divergence --------------------------------------------------------------------------------------------- */
/* Two loops of equal cost that the compiler cannot merge. A warp whose threads disagree on the branch runs both,
 * one after the other, with half its threads idle each time. */
static __global__ void divergence(int mode, int iters, float *out, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int branch = 0;
    if (mode == 1) branch = threadIdx.x & 1;              /* odd and even lanes: every warp diverges */
    if (mode == 2) branch = (threadIdx.x / warpSize) & 1; /* odd and even warps: no warp diverges */
    float x = (float)(i & 1023) * 1e-3f;
    if (branch == 0) {
        for (int k = 0; k < iters; ++k) x = x * 0.999f + 0.5f;
    } else {
        for (int k = 0; k < iters; ++k) x = x * 1.001f - 0.25f;
    }
    out[i] = x;
}

extern "C" cudaError_t ti_launch_divergence(int mode, int iters, float *out, int64_t n, cudaStream_t stream) {
    if (mode < 0 || mode > 2 || iters < 0 || n < 0 || out == NULL) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
    divergence<<<(unsigned int)blocks, threads, 0, stream>>>(mode, iters, out, n);
    return cudaGetLastError();
}

/* ---- device query ---------------------------------------------------------------------------------------------- */
extern "C" cudaError_t ti_device_limits(int device, int64_t limits[TI_LIMIT_COUNT]) {
    static const cudaDeviceAttr attributes[TI_LIMIT_COUNT] = {
        cudaDevAttrMaxGridDimX,
        cudaDevAttrMaxGridDimY,
        cudaDevAttrMaxGridDimZ,
        cudaDevAttrMaxBlockDimX,
        cudaDevAttrMaxBlockDimY,
        cudaDevAttrMaxBlockDimZ,
        cudaDevAttrMaxThreadsPerBlock,
        cudaDevAttrWarpSize,
        cudaDevAttrMultiProcessorCount,
        cudaDevAttrMaxThreadsPerMultiProcessor,
        cudaDevAttrMaxSharedMemoryPerBlock,
    };
    for (int k = 0; k < TI_LIMIT_COUNT; ++k) {
        int value = 0;
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&value, attributes[k], device));
        limits[k] = value;
    }
    return cudaSuccess;
}
