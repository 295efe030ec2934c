/*
 * rowwise.h — softmax, LayerNorm and RMSNorm over the last dimension: the C interface of this chapter's code.
 *
 * Every op sees its input as a matrix of `rows` rows of `n` elements, contiguous, and normalizes each row:
 *
 *   softmax     y = exp(x - max) / sum(exp(x - max))                    backward dx = y (dy - sum(y dy))
 *   layer_norm  y = (x - mean) rstd w + b, rstd = 1/sqrt(var + eps)       backward dx, dw = sum_rows dy xhat,
 *                                                                                  db = sum_rows dy
 *   rms_norm    y = x rstd w,              rstd = 1/sqrt(mean(x^2) + eps)  backward dx, dw = sum_rows dy xhat
 *
 * w and b are optional (NULL). mean and rstd are saved per row for the backward, in the accumulation type: float for
 * float32/float16/bfloat16 inputs, double for float64.
 *
 *   rowwise_*_cpu_f32 / _f64      plain C11 loops, accumulated in double: the CPU ops and the chapter's reference
 *   rowwise_forward_cuda          the GPU kernels (rowwise_kernels.cuh), one launcher per direction
 *   rowwise_backward_cuda
 */
#ifndef ROWWISE_H
#define ROWWISE_H

#include <stddef.h>
#include <stdint.h>

#include "course_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ROWWISE_SOFTMAX = 0, ROWWISE_LAYER_NORM = 1, ROWWISE_RMS_NORM = 2 } rowwise_op;

/* The ladder (README, "The kernels"). 0 picks the best for the shape. */
typedef enum {
    ROWWISE_AUTO = 0,
    ROWWISE_NAIVE = 1,       /* softmax forward only: a block per row, three passes over global memory */
    ROWWISE_WARP_ONLINE = 2, /* softmax forward only: a warp per row, online (max, sum), x read twice */
    ROWWISE_REGISTERS = 3,   /* the row in registers: one read, one write; a warp, part of one or a block per row */
    ROWWISE_CLUSTER = 4,     /* a row split over a thread-block cluster, partial statistics through DSMEM (sm_90) */
    ROWWISE_SPLIT = 5,       /* a row split over blocks: a kernel for partial statistics, one to combine and write */
    ROWWISE_REREAD = 6,      /* forwards only, rows of whole 16-byte packs: a block per row walks it
                                twice, the statistics then the output, the second read from L2 (cache hints) */
    ROWWISE_VERSION_LAST = 6
} rowwise_version;

/* Optional launch settings for experiments (the bench's variants); 0 in a field means "choose". A field other than 0
 * also keeps the kernels built for any row length (LayerNorm's and the 16-bit softmax's forwards have builds for a
 * few row lengths: pick_fixed). */
typedef struct {
    int block_threads;    /* threads per block (rows that fit a block; a row over blocks takes the block it needs) */
    int packs_per_thread; /* 16-byte packs each thread holds of a row (1, 2, 4 or 8) */
    int blocks_per_row;   /* cluster size or split count, versions 4 and 5 */
    int waves;            /* most waves of blocks in the grid, each walking rows (0: 4 forward, 1 backward; a large
                             number: one row per block or cluster, no walking) */
    int flags;            /* switches for rows over several blocks: ROWWISE_FLAG_* or'ed (0: the op's defaults) */
} rowwise_tuning;

/* The switches for rows longer than a block (tuning.flags). Rows over a cluster take them by default (flags 0: the
 * mailbox, plus staged rows for the softmax forward, the L2 prefetch for the norms', and held weights where the norms
 * take 8 packs a thread; NOTES.md, "Long rows: the switches measured", "Twentieth pass"); 16 runs the kernels without
 * them, which stay as they were. They take separately built kernels (16-byte rows over several blocks, bfloat16 and
 * float32). Whole rows ignore them; none changes a result's bits; a switch that does not apply to a launch is dropped
 * from its plan (rowwise_describe names those kept). */
enum {
    ROWWISE_FLAG_PREFETCH_L2 = 1,  /* each block asks L2 for its segment of its next row before this row's reductions */
    ROWWISE_FLAG_STAGE_NEXT = 2,   /* forward: each thread copies its packs of the next row into shared memory
                                      (cp.async) before this row's reductions, and reads them from there */
    ROWWISE_FLAG_MAILBOX = 4,      /* version 4: each block sends its part to every block of the cluster (st.async,
                                      mbarrier) instead of a cluster barrier and reads of the others' shared memory */
    ROWWISE_FLAG_REBUILT = 8,      /* nothing more than the kernels built for these switches, which any flag takes:
                                      their norm forwards read the weight and bias per row (L1), as for whole rows,
                                      instead of holding them in registers (no spill); 8 alone measures just that */
    ROWWISE_FLAG_HOLD_PARAMS = 32, /* norm forwards of 8 packs a thread: each thread keeps its packs of the weight
                                      (and the bias, where there is room) in shared memory, read once, not every row;
                                      LayerNorm's staged rows then take one set of slots where two do not fit */
    ROWWISE_FLAG_HELD = 64,        /* version 6 softmax forward (16-bit and float32): each block copies its row
                                      (segment) into shared memory once (cp.async) and walks it there twice */
    ROWWISE_FLAG_NEXT = 128,       /* with HELD: each slot takes the pack of the block's next row as soon as the
                                      write walk has read it (blocks that walk rows: tune's waves) */
    ROWWISE_FLAG_ALL = 239,
    ROWWISE_FLAG_NONE = 16 /* none of them: the kernels before the switches (0 means the op's defaults) */
};

/* ---- CPU (rowwise_cpu.c) -------------------------------------------------------------------------------------- */
void rowwise_softmax_cpu_f32(const float *x, float *y, int64_t rows, int64_t n);
void rowwise_softmax_cpu_f64(const double *x, double *y, int64_t rows, int64_t n);
void rowwise_softmax_backward_cpu_f32(const float *y, const float *dy, float *dx, int64_t rows, int64_t n);
void rowwise_softmax_backward_cpu_f64(const double *y, const double *dy, double *dx, int64_t rows, int64_t n);

void rowwise_layer_norm_cpu_f32(const float *x, const float *w, const float *b, double eps, float *y, float *mean,
                                float *rstd, int64_t rows, int64_t n);
void rowwise_layer_norm_cpu_f64(const double *x, const double *w, const double *b, double eps, double *y, double *mean,
                                double *rstd, int64_t rows, int64_t n);
/* dw and db may be NULL (not wanted); they are written, not added to. */
void rowwise_layer_norm_backward_cpu_f32(const float *dy, const float *x, const float *w, const float *mean,
                                         const float *rstd, float *dx, float *dw, float *db, int64_t rows, int64_t n);
void rowwise_layer_norm_backward_cpu_f64(const double *dy, const double *x, const double *w, const double *mean,
                                         const double *rstd, double *dx, double *dw, double *db, int64_t rows,
                                         int64_t n);

void rowwise_rms_norm_cpu_f32(const float *x, const float *w, double eps, float *y, float *rstd, int64_t rows,
                              int64_t n);
void rowwise_rms_norm_cpu_f64(const double *x, const double *w, double eps, double *y, double *rstd, int64_t rows,
                              int64_t n);
void rowwise_rms_norm_backward_cpu_f32(const float *dy, const float *x, const float *w, const float *rstd, float *dx,
                                       float *dw, int64_t rows, int64_t n);
void rowwise_rms_norm_backward_cpu_f64(const double *dy, const double *x, const double *w, const double *rstd,
                                       double *dx, double *dw, int64_t rows, int64_t n);

/* ---- CUDA (softmax_kernels.cu, norm_kernels.cu) ---------------------------------------------------------------- */
#ifdef ROWWISE_WITH_CUDA_API
#include <cuda_runtime_api.h>

/* The tensors the GPU launchers read and write. Pointers the op does not use are NULL. */
typedef struct {
    const void *x;  /* forward: x. Backward: x (norms) or y (softmax) */
    const void *dy; /* backward only */
    const void *w;  /* norms: weight, or NULL */
    const void *b;  /* layer_norm: bias, or NULL */
    void *y;        /* forward: y. Backward: dx */
    void *mean;     /* layer_norm: written by the forward, read by the backward (accumulation type) */
    void *rstd;     /* norms: likewise */
    void *dw;       /* backward: dweight, or NULL (not wanted) */
    void *db;       /* backward, layer_norm: dbias, or NULL */
    int64_t rows, n;
    double eps;
} rowwise_args;

/* NULL when `version` can run this op at this shape on the current device, else a sentence saying why not. */
const char *rowwise_unsupported(rowwise_op op, int backward, int version, course_dtype dtype, int64_t n);

/* NULL when the tensors' addresses suit `version`, else a sentence saying why not (version 6 reads whole 16-byte
 * packs, so every tensor must start on a 16-byte boundary; the other versions take any address). */
const char *rowwise_unaligned(int version, course_dtype dtype, const rowwise_args *args);

/* Bytes of device scratch memory the launch needs (partial sums of dw and db, split-row statistics). */
cudaError_t rowwise_workspace_bytes(rowwise_op op, int backward, int version, course_dtype dtype,
                                    const rowwise_args *args, const rowwise_tuning *tuning, size_t *bytes);

cudaError_t rowwise_forward_cuda(rowwise_op op, int version, course_dtype dtype, const rowwise_args *args,
                                 const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes,
                                 cudaStream_t stream);
cudaError_t rowwise_backward_cuda(rowwise_op op, int version, course_dtype dtype, const rowwise_args *args,
                                  const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes,
                                  cudaStream_t stream);

/* The launch the op would make (for the lesson, the bench and the tests): text such as
 * "registers: 128 threads per row, 4 packs per thread, 1 block per row, 256-thread blocks, 2112 blocks". */
cudaError_t rowwise_describe(rowwise_op op, int backward, int version, course_dtype dtype, const rowwise_args *args,
                             const rowwise_tuning *tuning, char *text, size_t text_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* ROWWISE_H */
