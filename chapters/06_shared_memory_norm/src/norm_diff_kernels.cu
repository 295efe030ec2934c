/*
 * norm_diff_kernels.cu — ‖a − b‖₂ on the GPU: a ladder of kernels from the seed's design to the bandwidth limit.
 *
 * Every rung reads a and b once (8 bytes per fp32 element) and squares and sums their differences; the answer is
 * sqrt of the sum. What changes is how the threads share the work and how their partial sums are combined.
 *
 *   rung 0  pitfall_seed_norm — the seed's design: ONE block of 512 threads; the squared differences go into one
 *           fixed __shared__ buffer of 64×64 floats; 64 threads each add up a "row" of 64 serially; thread 0 adds
 *           the 64 row sums. Wrong past 4096 elements: the seed wrote past its buffer (undefined behaviour); this
 *           copy stops at the buffer's end, so the pitfall shows as a wrong answer instead of a broken context.
 *   rung 1  what changed: many blocks of 256 threads. Each thread sums a grid-stride slice in fp32; each block
 *           folds its 256 partials with a tree in shared memory (8 steps, a barrier after each) and writes one
 *           partial; a second launch of one block folds those partials the same way.
 *   rung 2  what changed: the block sums use warp shuffles (__shfl_down_sync): 5 steps inside each warp through
 *           registers, one barrier to combine the 8 warp sums. Still two launches.
 *   rung 3  what changed: 16-byte loads (4 floats or 8 halves at once), 4 of them per tensor in flight per thread,
 *           a grid of one wave (every block the GPU holds at once, from the occupancy API) that strides over the
 *           array, and ONE launch: each block writes its partial, and the last block to finish (it learns that
 *           from an atomic counter) sums the partials in a fixed order — the same result on every run.
 *   rung 4  what changed from 3: cub::BlockReduce replaces the hand-written block sum — the library way.
 *
 * norm_diff_sum_squares_cuda runs rung 3 without its last step: it writes the sum of squares, in double, instead
 * of its square root, so that the sums of pieces held by several GPUs can be added before one root (chapter 08).
 *
 * Accumulation: each thread sums its own elements in fp32 (fp64 for double inputs) over runs of a few hundred
 * elements; those per-thread partials are combined in double. The result is written in the input's dtype.
 * Every function returns the first CUDA error it meets (a launch's, an occupancy query's, a memset's); the binding
 * turns it into a Python exception. Nothing here turns an error into a default and runs on.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cub/block/block_reduce.cuh>
#include <stdint.h>

#include "course_accumulate.cuh"
#include "course_check.h"
#include "course_launch.cuh"
#include "norm_diff.h"
#include <norm_blocks.h> /* <...>: EXERCISE=1 builds put exercises/ first on the include path */

namespace {

constexpr int kThreads = 256;           /* threads per block, rungs 1-4 */
constexpr int kSeedThreads = 512;       /* rung 0, as in the seed */
constexpr int kTwoPassMaxBlocks = 1024; /* rungs 1-2: at most this many partials for the second pass */
constexpr int kSinglePassWaves = 1;     /* rungs 3-4: one wave of blocks, each striding over the array */
constexpr int kBackwardWaves = 4;       /* the backward: up to 4 waves, then each thread loops */
constexpr int kUnroll = 4;              /* rungs 3-4: 16-byte loads per tensor in flight per thread */

/* The accumulator type: fp32, or fp64 for double inputs (course_accumulate.cuh). */
using course::to_acc;

__device__ __forceinline__ void store(float *p, double v) {
    *p = (float)v;
}
__device__ __forceinline__ void store(double *p, double v) {
    *p = v;
}
__device__ __forceinline__ void store(__half *p, double v) {
    *p = __double2half(v);
}
__device__ __forceinline__ void store(__nv_bfloat16 *p, double v) {
    *p = __double2bfloat16(v);
}

/* ---- rung 0: the seed's design (a pitfall) -------------------------------------------------------------------- */
template <typename T>
__global__ void pitfall_seed_norm(const T *a, const T *b, int64_t n, T *out) {
    __shared__ float squares[64 * 64]; /* fixed size: room for 4096 elements, whatever n is */
    for (int i = threadIdx.x; i < NORM_SEED_CAPACITY; i += blockDim.x) {
        const float d = i < n ? (float)(to_acc(a[i]) - to_acc(b[i])) : 0.0f;
        squares[i] = d * d; /* elements past 4096 are never looked at */
    }
    __syncthreads();
    for (int row = threadIdx.x; row < 64; row += blockDim.x) { /* 64 of the 512 threads work, serially */
        for (int col = 1; col < 64; col++) squares[row * 64] += squares[row * 64 + col];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int row = 1; row < 64; row++) squares[0] += squares[row * 64];
        store(out, sqrt((double)squares[0]));
    }
}

/* ---- rung 1: many blocks, a tree in shared memory, a second pass ------------------------------------------------ */
template <typename T>
__global__ void norm_tree_partials(const T *a, const T *b, int64_t n, double *partials) {
    using acc_t = course::acc_t<T>;
    __shared__ double buf[kThreads];
    acc_t sum = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const acc_t d = to_acc(a[i]) - to_acc(b[i]);
        sum += d * d;
    }
    buf[threadIdx.x] = sum;
    const double block_sum = norm_block_tree_sum(buf, threadIdx.x, blockDim.x);
    if (threadIdx.x == 0) partials[blockIdx.x] = block_sum;
}

template <typename T>
__global__ void norm_tree_finish(const double *partials, int count, T *out) {
    __shared__ double buf[kThreads];
    double sum = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
    buf[threadIdx.x] = sum;
    const double total = norm_block_tree_sum(buf, threadIdx.x, blockDim.x);
    if (threadIdx.x == 0) store(out, sqrt(total));
}

/* ---- rung 2: the same two passes, block sums with warp shuffles ----------------------------------------------- */
template <typename T>
__global__ void norm_shuffle_partials(const T *a, const T *b, int64_t n, double *partials) {
    using acc_t = course::acc_t<T>;
    __shared__ double warp_sums[NORM_WARP_SIZE];
    acc_t sum = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const acc_t d = to_acc(a[i]) - to_acc(b[i]);
        sum += d * d;
    }
    const double block_sum = norm_block_shuffle_sum(sum, warp_sums, threadIdx.x, blockDim.x);
    if (threadIdx.x == 0) partials[blockIdx.x] = block_sum;
}

template <typename T>
__global__ void norm_shuffle_finish(const double *partials, int count, T *out) {
    __shared__ double warp_sums[NORM_WARP_SIZE];
    double sum = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
    const double total = norm_block_shuffle_sum(sum, warp_sums, threadIdx.x, blockDim.x);
    if (threadIdx.x == 0) store(out, sqrt(total));
}

/* ---- rungs 3 and 4: one pass, 16-byte loads, last block done --------------------------------------------------- */
/* course::Pack<T> (course_launch.cuh): 16 bytes of T, aligned so that one copy is one 128-bit load. */
using course::Pack;

template <typename T, typename A>
__device__ __forceinline__ void add_squares(A &sum, const Pack<T> &x, const Pack<T> &y) {
#pragma unroll
    for (int k = 0; k < Pack<T>::size; k++) {
        const A d = to_acc(x.v[k]) - to_acc(y.v[k]);
        sum += d * d;
    }
}

/* The block's sum, in thread 0: hand-written shuffles (rung 3) or CUB (rung 4). */
template <bool kUseCub>
struct BlockSum;
template <>
struct BlockSum<false> {
    struct Storage {
        double warp_sums[NORM_WARP_SIZE];
    };
    __device__ static double sum(double v, Storage &s) {
        return norm_block_shuffle_sum(v, s.warp_sums, threadIdx.x, blockDim.x);
    }
};
template <>
struct BlockSum<true> {
    using Reduce = cub::BlockReduce<double, kThreads>;
    using Storage = typename Reduce::TempStorage;
    __device__ static double sum(double v, Storage &s) {
        return Reduce(s).Sum(v);
    }
};

/* Out is T for the norm (kRoot: the square root of the total), or double for the bare sum of squares. */
template <typename T, bool kUseCub, bool kRoot = true, typename Out = T>
__global__ void __launch_bounds__(kThreads)
    norm_single_pass(const T *__restrict__ a, const T *__restrict__ b, int64_t n, Out *out, double *partials,
                     unsigned int *blocks_done) {
    using acc_t = course::acc_t<T>;
    using Sum = BlockSum<kUseCub>;
    constexpr int V = Pack<T>::size;
    __shared__ typename Sum::Storage storage;
    __shared__ bool is_last_block;

    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t tid = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    acc_t sums[kUnroll] = {}; /* independent accumulators: the adds do not wait on each other */
    int64_t vectorized = 0;   /* elements covered by 16-byte loads */

    if (course::is_pack_aligned(a) && course::is_pack_aligned(b)) { /* a slice like x[1:] is not 16-byte aligned */
        const Pack<T> *pa = reinterpret_cast<const Pack<T> *>(a);
        const Pack<T> *pb = reinterpret_cast<const Pack<T> *>(b);
        const int64_t packs = n / V;
        int64_t p = tid;
        for (; p + (kUnroll - 1) * stride < packs; p += kUnroll * stride) {
            Pack<T> x[kUnroll], y[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; u++) { /* issue all loads first: 2·kUnroll·16 bytes in flight */
                x[u] = pa[p + u * stride];
                y[u] = pb[p + u * stride];
            }
#pragma unroll
            for (int u = 0; u < kUnroll; u++) add_squares(sums[u], x[u], y[u]);
        }
        for (; p < packs; p += stride) add_squares(sums[0], pa[p], pb[p]);
        vectorized = packs * V;
    }
    for (int64_t i = vectorized + tid; i < n; i += stride) { /* the tail, or everything when unaligned */
        const acc_t d = to_acc(a[i]) - to_acc(b[i]);
        sums[1] += d * d;
    }
    double thread_sum = 0;
#pragma unroll
    for (int u = 0; u < kUnroll; u++) thread_sum += (double)sums[u];
    const double block_sum = Sum::sum(thread_sum, storage);

    /* Last block done: publish this block's partial, make it visible device-wide (__threadfence), then take a
     * ticket. The block that draws the last ticket knows every partial is written and sums them. */
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = block_sum;
        __threadfence();
        const unsigned int ticket = atomicAdd(blocks_done, 1u);
        is_last_block = ticket == gridDim.x - 1;
    }
    __syncthreads(); /* also: warp 0 is done reading storage before it is reused below */
    if (!is_last_block) return;
    double sum = 0;
    for (int i = threadIdx.x; i < (int)gridDim.x; i += blockDim.x) sum += __ldcg(&partials[i]); /* from L2 */
    const double total = Sum::sum(sum, storage);
    if (threadIdx.x == 0) store(out, kRoot ? sqrt(total) : total);
}

/* ---- the backward: grad_a = g·(a − b)/‖a − b‖ ------------------------------------------------------------------ */
template <typename T>
__global__ void norm_backward_kernel(const T *g, const T *norm, const T *a, const T *b, T *grad_a, int64_t n) {
    using acc_t = course::acc_t<T>;
    const acc_t r = to_acc(*norm);
    const acc_t scale = r == 0 ? (acc_t)0 : to_acc(*g) / r; /* torch's gradient of the norm at 0 is 0 */
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        store(&grad_a[i], (double)(scale * (to_acc(a[i]) - to_acc(b[i]))));
    }
}

/* ---- grids, the dispatcher ------------------------------------------------------------------------------------- */
int64_t ceil_div(int64_t x, int64_t y) {
    return (x + y - 1) / y;
}

/* The kernel of rung 3 or 4 for T, whose registers and shared memory set how many blocks an SM holds. The sum of
 * squares (norm_diff_sum_squares_cuda) runs rung 3's loads and sums with another ending, and takes rung 3's grid,
 * so that both add the same partials in the same order. */
template <typename T>
auto single_pass_kernel(int version) {
    return version == 3 ? norm_single_pass<T, false> : norm_single_pass<T, true>;
}

/* *blocks = the blocks of the first (or only) launch of rung `version` for n elements of T; cudaErrorInvalidValue for
 * a version outside the ladder, or the occupancy query's error. */
template <typename T>
cudaError_t grid_size(int version, int64_t n, int64_t *blocks) {
    switch (version) {
        case 0:
            *blocks = 1;
            return cudaSuccess;
        case 1:
        case 2: {
            const int64_t wanted = ceil_div(n, kThreads);
            *blocks = wanted < 1 ? 1 : wanted > kTwoPassMaxBlocks ? kTwoPassMaxBlocks : wanted;
            return cudaSuccess;
        }
        case 3:
        case 4: /* one 16-byte load per thread, at most one wave: SMs x the blocks one SM holds (occupancy API) */
            return course::grid_size(single_pass_kernel<T>(version), kThreads, 0, ceil_div(n, Pack<T>::size),
                                     kSinglePassWaves, blocks);
        default:
            return cudaErrorInvalidValue;
    }
}

/* Rungs 1-4 keep one double per block (the partials); rungs 3-4 also a blocks-done counter, 16 bytes. */
size_t workspace_size(int version, int64_t blocks) {
    const size_t partials = (size_t)blocks * sizeof(double);
    return version >= 3 ? partials + 16 : partials;
}

template <typename T>
cudaError_t launch(int version, const T *a, const T *b, int64_t n, T *out, void *workspace, size_t workspace_bytes,
                   cudaStream_t stream) {
    int64_t blocks = 0;
    CUDA_RETURN_IF_ERROR(grid_size<T>(version, n, &blocks));
    if (workspace_bytes < workspace_size(version, blocks)) return cudaErrorInvalidValue;
    double *partials = static_cast<double *>(workspace);
    switch (version) {
        case 0:
            pitfall_seed_norm<<<1, kSeedThreads, 0, stream>>>(a, b, n, out);
            break;
        case 1:
            norm_tree_partials<<<blocks, kThreads, 0, stream>>>(a, b, n, partials);
            CUDA_RETURN_IF_ERROR(cudaGetLastError());
            norm_tree_finish<<<1, kThreads, 0, stream>>>(partials, (int)blocks, out);
            break;
        case 2:
            norm_shuffle_partials<<<blocks, kThreads, 0, stream>>>(a, b, n, partials);
            CUDA_RETURN_IF_ERROR(cudaGetLastError());
            norm_shuffle_finish<<<1, kThreads, 0, stream>>>(partials, (int)blocks, out);
            break;
        case 3:
        case 4: {
            unsigned int *blocks_done = reinterpret_cast<unsigned int *>(partials + blocks);
            /* The counter starts at 0 for every launch. (The last block could reset it instead, but a launch that
             * failed half-way would then poison the next one; a 4-byte memset costs about a microsecond.) */
            CUDA_RETURN_IF_ERROR(cudaMemsetAsync(blocks_done, 0, sizeof(unsigned int), stream));
            if (version == 3) {
                norm_single_pass<T, false><<<blocks, kThreads, 0, stream>>>(a, b, n, out, partials, blocks_done);
            } else {
                norm_single_pass<T, true><<<blocks, kThreads, 0, stream>>>(a, b, n, out, partials, blocks_done);
            }
            break;
        }
        default: /* unreachable: grid_size failed above; kept so a new rung cannot be silently skipped */
            return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_sum_squares(const T *a, const T *b, int64_t n, double *sum_squares, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream) {
    int64_t blocks = 0;
    CUDA_RETURN_IF_ERROR(grid_size<T>(NORM_VERSION_BEST, n, &blocks)); /* rung 3's grid: the same partials */
    if (workspace_bytes < workspace_size(NORM_VERSION_BEST, blocks)) return cudaErrorInvalidValue;
    double *partials = static_cast<double *>(workspace);
    unsigned int *blocks_done = reinterpret_cast<unsigned int *>(partials + blocks);
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(blocks_done, 0, sizeof(unsigned int), stream));
    norm_single_pass<T, false, false, double>
        <<<blocks, kThreads, 0, stream>>>(a, b, n, sum_squares, partials, blocks_done);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_backward(const void *g, const void *norm, const void *a, const void *b, void *grad_a, int64_t n,
                            cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    int64_t blocks = 0; /* one element per thread, at most kBackwardWaves waves (occupancy API), then threads loop */
    CUDA_RETURN_IF_ERROR(course::grid_size(norm_backward_kernel<T>, kThreads, 0, n, kBackwardWaves, &blocks));
    norm_backward_kernel<T><<<(unsigned int)blocks, kThreads, 0, stream>>>(
        static_cast<const T *>(g), static_cast<const T *>(norm), static_cast<const T *>(a), static_cast<const T *>(b),
        static_cast<T *>(grad_a), n);
    return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t norm_diff_workspace_bytes(int version, course_dtype dtype, int64_t n, size_t *bytes) {
    return course::with_element_type(dtype, [&](auto zero) {
        int64_t blocks = 0;
        CUDA_RETURN_IF_ERROR(grid_size<decltype(zero)>(version, n, &blocks));
        *bytes = workspace_size(version, blocks);
        return cudaSuccess;
    });
}

extern "C" cudaError_t norm_diff_cuda(int version, course_dtype dtype, const void *a, const void *b, int64_t n,
                                      void *out, void *workspace, size_t workspace_bytes, cudaStream_t stream) {
    return course::with_element_type(dtype, [&](auto zero) {
        using T = decltype(zero);
        return launch(version, static_cast<const T *>(a), static_cast<const T *>(b), n, static_cast<T *>(out),
                      workspace, workspace_bytes, stream);
    });
}

extern "C" cudaError_t norm_diff_sum_squares_cuda(course_dtype dtype, const void *a, const void *b, int64_t n,
                                                  double *sum_squares, void *workspace, size_t workspace_bytes,
                                                  cudaStream_t stream) {
    return course::with_element_type(dtype, [&](auto zero) {
        using T = decltype(zero);
        return launch_sum_squares(static_cast<const T *>(a), static_cast<const T *>(b), n, sum_squares, workspace,
                                  workspace_bytes, stream);
    });
}

extern "C" cudaError_t norm_diff_backward_cuda(course_dtype dtype, const void *g, const void *norm, const void *a,
                                               const void *b, void *grad_a, int64_t n, cudaStream_t stream) {
    return course::with_element_type(
        dtype, [&](auto zero) { return launch_backward<decltype(zero)>(g, norm, a, b, grad_a, n, stream); });
}
