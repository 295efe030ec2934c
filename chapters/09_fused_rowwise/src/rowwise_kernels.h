/*
 * rowwise_kernels.h — what the kernel files give the plan (rowwise_plan.cu): each family's limits and launcher.
 *
 * The limits are the kernels' own (their __launch_bounds__ and register arrays), not the GPU's: a forward holds up
 * to 4 packs of 16 bytes a thread in blocks of up to 1024 threads, within the 64 registers a thread such a block
 * leaves; a backward holds three tensors, and the norms' also a dweight and a dbias sum for each of its columns, so
 * it holds 8 columns a thread, in blocks of up to 512 for the norms, two of which fit an SM (64K registers).
 */
#pragma once

#include <cuda_runtime.h>

#include "course_check.h"

#define ROWWISE_WITH_CUDA_API
#include "rowwise.h"

namespace rw {

constexpr int kForwardPacks = 4;       // packs a thread holds in a forward (rungs 3-5)
constexpr int kForwardThreads = 1024;  // threads a block, at most
constexpr int kNormBackwardThreads = 512;
constexpr int kNaiveThreads = 256;    // rung 1: a block per row
constexpr int kWarpRowsPerBlock = 8;  // rung 2: a warp per row

// A backward holds x (or y), dy and the weight, and (the norms) a dweight and a dbias sum per column: 8 columns a
// thread, so 1 pack of 16-bit elements, 2 of float32, 4 of float64.
__host__ __device__ constexpr int backward_packs(int element_bytes) {
    return element_bytes / 2;
}

// Each kernel family: the kernel a plan would launch (for the occupancy queries) and its launcher.
const void *softmax_forward_address(course_dtype dtype);
const void *softmax_backward_address(course_dtype dtype);
const void *norm_forward_address(rowwise_op op, course_dtype dtype);
const void *norm_backward_address(rowwise_op op, course_dtype dtype);

cudaError_t softmax_naive(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, cudaStream_t stream);
cudaError_t softmax_warp(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, cudaStream_t stream);
cudaError_t softmax_forward(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, void *partials,
                            cudaStream_t stream);
cudaError_t softmax_backward(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, void *partials,
                             cudaStream_t stream);
cudaError_t norm_forward(rowwise_op op, course_dtype dtype, const rowwise_args *a, const rowwise_plan *p,
                         void *partials, cudaStream_t stream);
// `sums` holds the dweight (then dbias) partial sums, plan_groups(p) rows of n each; partials as above.
cudaError_t norm_backward(rowwise_op op, course_dtype dtype, const rowwise_args *a, const rowwise_plan *p,
                          void *partials, void *sums, cudaStream_t stream);

// The rows a backward's grid works on at once: one partial dweight row each.
inline int64_t plan_groups(const rowwise_plan &p) {
    const int in_block = p.row_threads < p.threads ? p.row_threads : p.threads;
    return p.grid / p.blocks_per_row * (p.threads / in_block);
}

// Launches kernel(args...) as the plan says: its grid and block, and a cluster of blocks_per_row blocks for rung 5.
template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), const rowwise_plan &p, cudaStream_t stream, Args... args) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)p.grid);
    config.blockDim = dim3((unsigned)p.threads);
    config.stream = stream;
    cudaLaunchAttribute cluster[1];
    if (p.cluster) {
        cluster[0].id = cudaLaunchAttributeClusterDimension;
        cluster[0].val.clusterDim.x = (unsigned)p.blocks_per_row;
        cluster[0].val.clusterDim.y = cluster[0].val.clusterDim.z = 1;
        config.attrs = cluster;
        config.numAttrs = 1;
    }
    CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&config, kernel, args...));
    return cudaGetLastError();
}

}  // namespace rw
