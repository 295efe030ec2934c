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
 *   rowwise_plan_launch           the GPU launch for a shape (rowwise_plan.cu), then one launcher per direction:
 *   rowwise_forward_cuda          rung 1 softmax_1_naive.cu, rung 2 softmax_2_warp.cu, rungs 3-5 softmax.cu and
 *   rowwise_backward_cuda         norm_forward.cu / norm_backward.cu, over the reductions of row_reduce.cuh
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

/* The ladder (README, "The ladder"): rung= of the Python ops. */
enum {
    ROWWISE_RUNG_BEST = -1,     /* the top rung this GPU runs: 5 with thread-block clusters (sm_90), else 4 */
    ROWWISE_RUNG_NAIVE = 1,     /* softmax forward: a block per row, three passes over global memory */
    ROWWISE_RUNG_WARP = 2,      /* softmax forward: a warp per row, the online (max, sum) in one pass, x read twice */
    ROWWISE_RUNG_REGISTERS = 3, /* the row held in registers in 16-byte packs: one read, one write; rows that fit a
                                   block */
    ROWWISE_RUNG_SPLIT = 4,     /* + rows longer than a block over several blocks, statistics through global memory:
                                   two launches, any GPU */
    ROWWISE_RUNG_CLUSTER = 5,   /* + those blocks as a thread-block cluster, statistics through distributed shared
                                   memory: one launch (compute capability 9.0) */
    ROWWISE_RUNG_LAST = 5
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

/* ---- CUDA (rowwise_plan.cu) ------------------------------------------------------------------------------------ */
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

/* The launch (rowwise_plan.cu): one function of the op, the row length, the dtype and the GPU's limits. */
typedef struct {
    int rung;           /* the rung that runs (rung BEST resolved) */
    int threads;        /* threads a block */
    int row_threads;    /* threads holding one row, over all its blocks */
    int packs;          /* 16-byte packs each thread holds (rungs 3-5) */
    int blocks_per_row; /* 1, or the blocks a row spans (rungs 4 and 5) */
    int cluster;        /* 1: those blocks are a cluster (rung 5) */
    int split;          /* rung 4's launches: 1 writes each block's statistics, 2 reads them and writes the row */
    int64_t grid;       /* blocks launched */
} rowwise_plan;

/* NULL when `rung` can run this op at this row length on the current GPU, else a sentence saying why not. */
const char *rowwise_unsupported(rowwise_op op, int backward, int rung, course_dtype dtype, int64_t n);

/* The launch the op makes, and the device scratch memory it needs (rung 4's statistics, the dweight partial sums). */
cudaError_t rowwise_plan_launch(rowwise_op op, int backward, int rung, course_dtype dtype, const rowwise_args *args,
                                rowwise_plan *plan, size_t *workspace_bytes);

cudaError_t rowwise_forward_cuda(rowwise_op op, course_dtype dtype, const rowwise_args *args, const rowwise_plan *plan,
                                 void *workspace, cudaStream_t stream);
cudaError_t rowwise_backward_cuda(rowwise_op op, course_dtype dtype, const rowwise_args *args, const rowwise_plan *plan,
                                  void *workspace, cudaStream_t stream);

/* The plan in words, e.g. "rung 3: 128 threads a row, 4 packs of 16 bytes a thread, 256-thread blocks, 8192 blocks". */
void rowwise_describe(const rowwise_plan *plan, char *text, size_t text_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* ROWWISE_H */
