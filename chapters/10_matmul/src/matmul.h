/*
 * matmul.h — C = A·B: the C interface of this chapter's CPU code and GPU kernels.
 *
 * Plain C, so the CPU code (C11), the kernels (CUDA C) and the PyTorch binding (C++) share one set of declarations.
 * A is M×K, B is K×N, C is M×N. The inputs are described by their strides, not copied: element (i, j) of an operand
 * is at data[i*row_stride + j*col_stride]. A transposed view (a.t() in PyTorch) is the same memory with the two
 * strides swapped, so Aᵀ, Bᵀ and sliced views reach the kernels without a copy. C is written with a row stride ldc
 * and column stride 1.
 *
 *   matmul_cpu                     a cache-blocked loop in C (float32 or float64): the op on the CPU
 *   matmul_cuda(rung, dtype, ...)  the dispatcher of the GPU kernels: by dtype, then by rung (matmul_kernels.cu)
 *   matmul_emulate_shared_tiles    rung 2's per-thread code run on the CPU, phase by phase (matmul_emulate.cu)
 *   matmul_fma_chains_cuda         a kernel that only does FMAs: it measures the GPU's fp32 FMA rate (the roof)
 *
 * Rungs. The fp32 CUDA-core ladder is rungs 0-8 (this part of the chapter). float64 runs rungs 0-4, which are
 * written once for any element type. The dispatcher switches on the dtype first, so the tensor-core rungs of the
 * chapter's second part (fp16/bf16: WMMA, mma.sync, wgmma) slot in as new cases beside these, with rung numbers
 * from MATMUL_RUNG_COUNT on, without touching the fp32 ladder.
 */
#ifndef MATMUL_H
#define MATMUL_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#include "course_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One input matrix: element (i, j) at ((const T *)data)[i*row_stride + j*col_stride], strides in elements. */
typedef struct {
    const void *data;
    int64_t row_stride, col_stride;
} matmul_operand;

/* The rungs of the ladder (matmul_kernels.cu says what each one changes). */
enum {
    MATMUL_RUNG_NAIVE = 0,        /* one thread per output, threadIdx.x walks rows: the pitfall */
    MATMUL_RUNG_COALESCED = 1,    /* threadIdx.x walks columns */
    MATMUL_RUNG_SHARED_TILES = 2, /* 32×32 tiles of A and B in shared memory (the exercise) */
    MATMUL_RUNG_BLOCKTILE_1D = 3, /* each thread computes 8 outputs of a column */
    MATMUL_RUNG_BLOCKTILE_2D = 4, /* each thread computes an 8×8 block of outputs */
    MATMUL_RUNG_VECTORIZED = 5,   /* 16-byte loads, A stored transposed in shared memory */
    MATMUL_RUNG_WARPTILE = 6,     /* warp tiles: each thread's 8×8 spread as 2×2 blocks of 4×4 */
    MATMUL_RUNG_PIPELINED = 7,    /* the next tiles load during the arithmetic: a 3-stage ring, cp.async */
    MATMUL_RUNG_SPLIT_K = 8,      /* rung 7, and K split across blocks when the output is too small */
    MATMUL_RUNG_COUNT = 9,        /* part 2 (tensor cores) numbers its rungs from here */
    MATMUL_RUNG_BEST = -1         /* "the fastest rung for this dtype" */
};

/* Rung 2's tile: a block of MATMUL_SHARED_TILE² threads computes that many elements of C (matmul_tile.cuh). */
#define MATMUL_SHARED_TILE 32

/* 1 when `rung` has a kernel for `dtype` (MATMUL_RUNG_BEST has one for every dtype the GPU takes), else 0. */
static inline int matmul_rung_supported(int rung, course_dtype dtype) {
    switch (dtype) {
        case COURSE_FLOAT32:
            return rung == MATMUL_RUNG_BEST || (rung >= 0 && rung < MATMUL_RUNG_COUNT);
        case COURSE_FLOAT64:
            return rung == MATMUL_RUNG_BEST || (rung >= 0 && rung <= MATMUL_RUNG_BLOCKTILE_2D);
        default:
            return 0; /* float16, bfloat16: the tensor-core part of the chapter */
    }
}

/* The rung MATMUL_RUNG_BEST stands for: the fastest on an H100 (bench.py measures it), or -1 for no kernel. */
static inline int matmul_best_rung(course_dtype dtype) {
    switch (dtype) {
        case COURSE_FLOAT32:
            return MATMUL_RUNG_SPLIT_K;
        case COURSE_FLOAT64:
            return MATMUL_RUNG_BLOCKTILE_2D;
        default:
            return -1;
    }
}

/* ---- CPU (matmul_cpu.c) --------------------------------------------------------------------------------------- */
/* C = A·B for float32 or float64; any strides for A and B (0 included), C row-major with row stride ldc ≥ N.
 * K = 0 writes zeros. Returns 0, or -1 for a bad argument or when its packing buffers cannot be allocated. */
int matmul_cpu(course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, void *c,
               int64_t ldc);

/* ---- CUDA (matmul_kernels.cu) --------------------------------------------------------------------------------- */
/* *bytes = the device scratch memory matmul_cuda needs for this rung and shape on the current GPU: rung 8 keeps the
 * partial sums of its splits of K there (splits·M·N floats), when it splits; 0 for every other case. The caller
 * allocates it (PyTorch's caching allocator makes that cheap) and passes it in. */
cudaError_t matmul_workspace_bytes(int rung, course_dtype dtype, int64_t M, int64_t N, int64_t K, size_t *bytes);

/* C = A·B by rung `rung` (or MATMUL_RUNG_BEST) on `stream`; every element of C is written, zeros when K = 0.
 * Returns cudaErrorInvalidValue for a rung or dtype with no kernel (matmul_rung_supported), a bad size, or a
 * workspace smaller than matmul_workspace_bytes says; otherwise the first CUDA error. */
cudaError_t matmul_cuda(int rung, course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a,
                        matmul_operand b, void *c, int64_t ldc, void *workspace, size_t workspace_bytes,
                        cudaStream_t stream);

/* y[i] = the result of 8 independent chains of `iterations` FMAs each, started from x[i]: 16·iterations flops per
 * element, nearly no memory traffic. Timing it gives the fp32 FMA rate the roofline's compute roof is drawn at. */
cudaError_t matmul_fma_chains_cuda(const float *x, float *y, int64_t n, int iterations, cudaStream_t stream);

/* ---- CPU emulation of rung 2 (matmul_emulate.cu) -------------------------------------------------------------- */
/* Runs rung 2's per-thread functions (matmul_tile.cuh) on the CPU for every block and thread of its grid, one
 * phase at a time, as its barriers order them: every thread loads its tile elements, then every thread adds its
 * products. Shared memory is filled with NaN before each load phase, so an element that no thread writes shows.
 * Same arguments and result as matmul_cpu; returns -1 for a dtype other than float32/float64. */
int matmul_emulate_shared_tiles(course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b,
                                void *c, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif /* MATMUL_H */
