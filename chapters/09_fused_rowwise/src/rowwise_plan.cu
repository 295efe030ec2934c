/*
 * rowwise_plan.cu — the launch: one function (plan) of the op, the row length, the dtype and the GPU's limits, and
 * the two launchers of rowwise.h that run what it says.
 *
 * Rungs 3-5 give each thread about 4 packs of 16 bytes of its row (64 bytes of loads in flight, enough to keep the
 * memory busy at full occupancy), so a row takes a power of two of threads, at least a warp. Rows of fewer than 256
 * threads share 256-thread blocks. A row longer than one block holds (kForwardPacks or backward_packs a thread, at
 * most kForwardThreads or kNormBackwardThreads a block) spans several blocks: a cluster (rung 5, up to 16 blocks
 * where the occupancy API says the GPU holds them) or, past that or before sm_90, two launches (rung 4).
 * A block that would be alone on its SM (1024 threads of 64 registers) has nothing to hide its reductions behind:
 * rung 5 gives its row to a cluster of half-size blocks instead. The softmax and the forwards launch a block for
 * every few rows; the norms' backwards one wave of blocks (what the occupancy API says the GPU holds at once) that
 * walk the rows, so that the dweight partial sums have few rows (norm_backward.cu).
 */
#include <stdio.h>

#include <map>
#include <mutex>
#include <tuple>

#include "course_check.h"
#include "row_reduce.cuh"
#include "rowwise_kernels.h"

namespace {

using namespace rw;

constexpr int kShortRowBlock = 256;  // threads a block shared by short rows
constexpr int kMostCluster = 16;     // blocks a cluster may have on sm_90 (past 8, where the GPU holds them)

int element_bytes(course_dtype dtype) {
    return dtype == COURSE_FLOAT64 ? 8 : dtype == COURSE_FLOAT32 ? 4 : 2;
}

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

int most_threads(rowwise_op op, int backward) {
    return backward && op != ROWWISE_SOFTMAX ? kNormBackwardThreads : kForwardThreads;
}

int most_packs(int backward, course_dtype dtype) {
    return backward ? backward_packs(element_bytes(dtype)) : kForwardPacks;
}

const void *kernel_of(rowwise_op op, int backward, course_dtype dtype) {
    if (op == ROWWISE_SOFTMAX) return backward ? softmax_backward_address(dtype) : softmax_forward_address(dtype);
    return backward ? norm_backward_address(op, dtype) : norm_forward_address(op, dtype);
}

// The most blocks of `threads` threads a cluster of `kernel` can have on this GPU: 8 everywhere on sm_90, up to 16
// where the kernel allows clusters past the portable size and the GPU holds them (the occupancy API's answer).
cudaError_t most_cluster_blocks(const void *kernel, int threads, int *blocks) {
    static std::mutex lock;
    static std::map<std::tuple<const void *, int, int>, int> known;  // (kernel, threads, device): the answer
    int device = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    const std::lock_guard<std::mutex> guard(lock);
    const auto key = std::make_tuple(kernel, threads, device);
    if (known.count(key) == 0) {
        CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(kMostCluster * 8);
        config.blockDim = dim3(threads);
        int most = 0;
        CUDA_RETURN_IF_ERROR(cudaOccupancyMaxPotentialClusterSize(&most, kernel, &config));
        known[key] = most < kMostCluster ? most : kMostCluster;
    }
    *blocks = known[key];
    return cudaSuccess;
}

// The plan. Everything it reads is an argument, a kernel constant (rowwise_kernels.h) or a queried device limit.
cudaError_t plan(rowwise_op op, int backward, int rung, course_dtype dtype, int64_t rows, int64_t n, rowwise_plan *p) {
    int device = 0, major = 0, max_grid = 0, sms = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&max_grid, cudaDevAttrMaxGridDimX, device));
    *p = rowwise_plan{};
    p->rung = rung == ROWWISE_RUNG_BEST ? (major >= 9 ? ROWWISE_RUNG_CLUSTER : ROWWISE_RUNG_SPLIT) : rung;
    p->blocks_per_row = 1;
    if (p->rung == ROWWISE_RUNG_NAIVE || p->rung == ROWWISE_RUNG_WARP) {  // a block or a warp per row
        const int rows_per_block = p->rung == ROWWISE_RUNG_NAIVE ? 1 : kWarpRowsPerBlock;
        p->threads = p->rung == ROWWISE_RUNG_NAIVE ? kNaiveThreads : 32 * kWarpRowsPerBlock;
        p->row_threads = p->rung == ROWWISE_RUNG_NAIVE ? kNaiveThreads : 32;
        p->grid = ceil_div(rows, rows_per_block) < max_grid ? ceil_div(rows, rows_per_block) : max_grid;
        return cudaSuccess;
    }
    const int64_t packs = ceil_div(n, 16 / element_bytes(dtype));
    const void *kernel = kernel_of(op, backward, dtype);
    const int threads = most_threads(op, backward), per_thread = most_packs(backward, dtype);
    const int target = per_thread < 4 ? per_thread : 4;  // about 4 packs a thread (fewer where the kernel holds fewer)
    int row_threads = 32;                                // a power of two of threads, at least a warp
    while (row_threads < threads && (int64_t)row_threads * target < packs) row_threads *= 2;
    p->threads = row_threads < kShortRowBlock ? kShortRowBlock : row_threads;
    // A block alone on its SM (the occupancy API's answer for its size) has no other block's loads to hide its
    // reductions behind: rung 5 gives such a row to a cluster of two or more smaller blocks instead.
    int64_t wave = 0;
    CUDA_RETURN_IF_ERROR(course::blocks_per_wave(kernel, p->threads, 0, &wave));
    const bool alone = p->rung == ROWWISE_RUNG_CLUSTER && major >= 9 && wave <= sms && row_threads == threads;
    if (packs > (int64_t)threads * per_thread || alone) {  // several blocks, of half size (two an SM) where a
        if (p->rung == ROWWISE_RUNG_REGISTERS) return cudaErrorInvalidValue;  // cluster holds them
        int most_cluster = 0;  // the most blocks a cluster of this kernel can have here (0: no clusters)
        for (p->threads = threads / 2; p->threads <= threads; p->threads *= 2) {
            if (major >= 9) CUDA_RETURN_IF_ERROR(most_cluster_blocks(kernel, p->threads, &most_cluster));
            p->blocks_per_row = (int)ceil_div(packs, (int64_t)p->threads * per_thread);
            if (p->blocks_per_row <= most_cluster || p->threads == threads) break;
        }
        row_threads = p->threads * p->blocks_per_row;
        p->cluster = p->rung == ROWWISE_RUNG_CLUSTER && p->blocks_per_row > 1 && p->blocks_per_row <= most_cluster;
        p->split = p->blocks_per_row > 1 && !p->cluster;
        if (p->split) p->rung = ROWWISE_RUNG_SPLIT;  // rung 5's fallback where no cluster holds the row
    }
    p->row_threads = row_threads;
    p->packs = (int)ceil_div(packs, row_threads);
    const int64_t rows_per_block = p->threads / (row_threads < p->threads ? row_threads : p->threads);
    const int64_t needed = ceil_div(rows, rows_per_block) * p->blocks_per_row;
    int64_t most = max_grid / p->blocks_per_row * p->blocks_per_row;
    if (backward && op != ROWWISE_SOFTMAX) {  // one wave walking the rows (few dweight partial rows), whole clusters
        CUDA_RETURN_IF_ERROR(course::blocks_per_wave(kernel, p->threads, 0, &wave));
        most = wave < p->blocks_per_row ? p->blocks_per_row : wave / p->blocks_per_row * p->blocks_per_row;
    }
    p->grid = needed < most ? needed : most;
    return cudaSuccess;
}

}  // namespace

extern "C" {

const char *rowwise_unsupported(rowwise_op op, int backward, int rung, course_dtype dtype, int64_t n) {
    static thread_local char why[256];
    if ((rung == ROWWISE_RUNG_NAIVE || rung == ROWWISE_RUNG_WARP) && (op != ROWWISE_SOFTMAX || backward))
        return "rungs 1 and 2 are softmax forward kernels only: the norms and the backwards start at rung 3";
    if (rung == ROWWISE_RUNG_WARP && dtype == COURSE_FLOAT64)
        return "rung 2 computes in float32 (online_softmax.h): float64 runs rungs 1, 3, 4 and 5";
    const int64_t most =
        (int64_t)most_threads(op, backward) * most_packs(backward, dtype) * (16 / element_bytes(dtype));
    if (rung == ROWWISE_RUNG_REGISTERS && n > most) {
        snprintf(why, sizeof why,
                 "rung 3 holds a row in the registers of one block: at most %lld elements of this dtype for this op "
                 "and pass, and the row has %lld; rungs 4 and 5 take longer rows",
                 (long long)most, (long long)n);
        return why;
    }
    if (rung == ROWWISE_RUNG_CLUSTER) {
        int device = 0, major = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess || major < 9) {
            (void)cudaGetLastError();
            return "rung 5 needs thread-block clusters (compute capability 9.0 or later); rung 4 runs on any GPU";
        }
    }
    return NULL;
}

cudaError_t rowwise_plan_launch(rowwise_op op, int backward, int rung, course_dtype dtype, const rowwise_args *a,
                                rowwise_plan *p, size_t *workspace_bytes) {
    CUDA_RETURN_IF_ERROR(plan(op, backward, rung, dtype, a->rows, a->n, p));
    const size_t acc = dtype == COURSE_FLOAT64 ? 8 : 4;
    const size_t partials = p->split ? (size_t)a->rows * p->blocks_per_row * 3 * acc : 0;  // at most 3 values each
    const int64_t sums = (a->dw != NULL) + (a->db != NULL);
    *workspace_bytes = (partials + 255) / 256 * 256 + (size_t)(sums * plan_groups(*p) * a->n) * acc;
    return cudaSuccess;
}

cudaError_t rowwise_forward_cuda(rowwise_op op, course_dtype dtype, const rowwise_args *a, const rowwise_plan *p,
                                 void *workspace, cudaStream_t stream) {
    if (a->rows == 0 || a->n == 0) return cudaSuccess;
    if (p->rung == ROWWISE_RUNG_NAIVE) return softmax_naive(dtype, a, p, stream);
    if (p->rung == ROWWISE_RUNG_WARP) return softmax_warp(dtype, a, p, stream);
    rowwise_plan step = *p;
    for (int launch = p->split ? 1 : 0; launch <= (p->split ? 2 : 0); launch++) {  // rung 4: two launches
        step.split = launch;
        CUDA_RETURN_IF_ERROR(op == ROWWISE_SOFTMAX ? softmax_forward(dtype, a, &step, workspace, stream)
                                                   : norm_forward(op, dtype, a, &step, workspace, stream));
    }
    return cudaSuccess;
}

cudaError_t rowwise_backward_cuda(rowwise_op op, course_dtype dtype, const rowwise_args *a, const rowwise_plan *p,
                                  void *workspace, cudaStream_t stream) {
    if (a->n == 0) return cudaSuccess;
    const size_t acc = dtype == COURSE_FLOAT64 ? 8 : 4;
    const size_t partials = p->split ? (size_t)a->rows * p->blocks_per_row * 3 * acc : 0;
    void *sums = static_cast<char *>(workspace) + (partials + 255) / 256 * 256;
    rowwise_plan step = *p;
    for (int launch = p->split ? 1 : 0; launch <= (p->split ? 2 : 0); launch++) {
        step.split = launch;
        if (op == ROWWISE_SOFTMAX) {
            if (a->rows > 0) CUDA_RETURN_IF_ERROR(softmax_backward(dtype, a, &step, workspace, stream));
        } else {
            CUDA_RETURN_IF_ERROR(norm_backward(op, dtype, a, &step, workspace, sums, stream));
        }
    }
    return cudaSuccess;
}

void rowwise_describe(const rowwise_plan *p, char *text, size_t text_bytes) {
    if (p->rung == ROWWISE_RUNG_NAIVE || p->rung == ROWWISE_RUNG_WARP) {
        snprintf(text, text_bytes, "rung %d: a %s per row, %d-thread blocks, %lld blocks", p->rung,
                 p->rung == ROWWISE_RUNG_NAIVE ? "block" : "warp", p->threads, (long long)p->grid);
    } else if (p->blocks_per_row > 1) {
        snprintf(text, text_bytes,
                 "rung %d: a row over %s %d blocks of %d threads, %d packs of 16 bytes a thread, %lld blocks", p->rung,
                 p->cluster ? "a cluster of" : "two launches of", p->blocks_per_row, p->threads, p->packs,
                 (long long)p->grid);
    } else {
        snprintf(text, text_bytes,
                 "rung %d: %d threads a row, %d packs of 16 bytes a thread, %d-thread blocks, %lld blocks", p->rung,
                 p->row_threads, p->packs, p->threads, (long long)p->grid);
    }
}

}  // extern "C"
