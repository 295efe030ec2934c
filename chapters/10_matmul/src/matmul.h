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
 *   matmul_tensor_rung             which tensor-core rung runs for a request, a GPU and the operands' layouts
 *   matmul_wgmma_cuda              rung 11 alone (matmul_hopper.cu, built for sm_90a only)
 *
 * Rungs. The fp32 CUDA-core ladder is rungs 0-8 (part 1 of the chapter). float64 runs rungs 0-4, which are
 * written once for any element type. float16 and bfloat16 run the tensor-core rungs 9-11 (part 2: WMMA, mma.sync,
 * wgmma; matmul_tensor.cu and matmul_hopper.cu), with fp32 accumulation and an output of the inputs' dtype.
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
    MATMUL_RUNG_COUNT = 9,        /* the fp32 ladder's length; part 2 (tensor cores) numbers its rungs from here */
    MATMUL_RUNG_WMMA = 9,         /* fp16/bf16: nvcuda::wmma 16×16×16 fragments, shared-memory tiles (sm_80+) */
    MATMUL_RUNG_MMA_SYNC = 10,    /* fp16/bf16: mma.sync m16n8k16, ldmatrix, swizzled tiles, 4-stage cp.async */
    MATMUL_RUNG_WGMMA = 11,       /* fp16/bf16: Hopper wgmma fed by TMA, mbarrier ring, producer/consumers (sm_90a) */
    MATMUL_RUNG_END = 12,         /* one past the last rung */
    MATMUL_RUNG_BEST = -1         /* "the fastest rung for this dtype" (for fp16/bf16: for this GPU too) */
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
        case COURSE_FLOAT16:
        case COURSE_BFLOAT16:
            return rung == MATMUL_RUNG_BEST || (rung >= MATMUL_RUNG_WMMA && rung < MATMUL_RUNG_END);
        default:
            return 0;
    }
}

/* The rung MATMUL_RUNG_BEST stands for: the fastest on an H100 (bench.py measures it), or -1 for no kernel. */
static inline int matmul_best_rung(course_dtype dtype) {
    switch (dtype) {
        case COURSE_FLOAT32:
            return MATMUL_RUNG_SPLIT_K;
        case COURSE_FLOAT64:
            return MATMUL_RUNG_BLOCKTILE_2D;
        case COURSE_FLOAT16:
        case COURSE_BFLOAT16:
            return MATMUL_RUNG_WGMMA; /* on a Hopper GPU; matmul_tensor_rung says what runs on others */
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

/* ---- tensor cores (matmul_tensor.cu, matmul_hopper.cu) -------------------------------------------------------- */
/* The tensor-core rung that matmul_cuda runs for `rung` (9, 10, 11 or MATMUL_RUNG_BEST) on a GPU of compute
 * capability major.minor, for these operands: -1 when the GPU has no tensor-core rung (before 8.0, where WMMA and
 * mma.sync have no bf16). Rung 11 (and BEST) runs on 9.0 only, and only when TMA can read both operands
 * (matmul_tma_compatible); otherwise rung 10 runs instead: the op's rung_used() reports it. */
int matmul_tensor_rung(int rung, int major, int minor, int64_t M, int64_t N, int64_t K, matmul_operand a,
                       matmul_operand b);

/* 1 when TMA can read A (M×K) and B (K×N) as 2-D tiles: each is row-major (column stride 1), its row stride a
 * multiple of 16 bytes (8 elements) and at least its row length, its address 16-byte aligned; and M, N, K ≥ 1. */
int matmul_tma_compatible(int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b);

/* Rung 11 alone: C = A·B for float16/bfloat16 operands that matmul_tma_compatible accepts, on an sm_90 GPU
 * (matmul_hopper.cu is built for sm_90a only). cudaErrorInvalidValue for anything else; the first CUDA error, or
 * cudaErrorNotSupported when the driver has no cuTensorMapEncodeTiled or rejects a tensor map. */
cudaError_t matmul_wgmma_cuda(course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b,
                              void *c, int64_t ldc, cudaStream_t stream);

/* Rungs 9 and 10 (matmul_tensor.cu), any strides; rung 11 through matmul_wgmma_cuda. Called by matmul_cuda. */
cudaError_t matmul_tensor_cuda(int rung, course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a,
                               matmul_operand b, void *c, int64_t ldc, cudaStream_t stream);

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
