/*
 * softmax_1_naive.cu — rung 1: the softmax forward as it is written on paper.
 *
 * A block of 256 threads per row, three passes over the row in global memory: its max, the sum of exp(x - max),
 * then y = exp(x - max) / sum. Thread t takes the elements t, t + 256, ... (coalesced), and each pass ends in a
 * reduction over the block in shared memory, a tree as in chapter 06. The max comes off first so that exp never
 * overflows: exp(1e4) is inf in any float type, exp(1e4 - max) is not.
 *
 * What it costs: x is read three times and y written once, 4 MN elements moved where 2 MN would do, and every pass
 * waits for the reduction before it. Rung 2 reads x twice; rung 3 once.
 */
#include <math.h>

#include "row_reduce.cuh"
#include "rowwise_kernels.h"

namespace {

using namespace rw;

// The block's value of v (every thread gets it): a tree in shared memory over the block's power-of-two threads.
template <typename A, typename Op>
__device__ A tree_reduce(A v, Op op, A *scratch) {
    __syncthreads();  // the previous tree's reads are done
    scratch[threadIdx.x] = v;
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        __syncthreads();
        if ((int)threadIdx.x < half) scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + half]);
    }
    __syncthreads();
    return scratch[0];
}

struct Max {
    template <typename A>
    __device__ A operator()(A x, A y) const {
        return fmax(x, y);  // a NaN loses: it reaches the sum instead, and the row becomes NaN, as in torch
    }
};

template <typename T>
__global__ void __launch_bounds__(kNaiveThreads) softmax_naive_kernel(const T *x, T *y, int64_t rows, int64_t n) {
    using A = acc_t<T>;
    __shared__ A scratch[kNaiveThreads];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * n;
        A max = -INFINITY;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) max = fmax(max, to_acc(xr[i]));  // pass 1
        max = tree_reduce(max, Max{}, scratch);
        A sum = 0;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += exp(to_acc(xr[i]) - max);  // pass 2
        sum = tree_reduce(sum, Add{}, scratch);
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x)  // pass 3
            y[row * n + i] = from_acc<T>(exp(to_acc(xr[i]) - max) / sum);
    }
}

}  // namespace

namespace rw {

cudaError_t softmax_naive(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, cudaStream_t stream) {
    return course::with_element_type(dtype, [&](auto type) {
        using T = decltype(type);
        return launch(softmax_naive_kernel<T>, *p, stream, static_cast<const T *>(a->x), static_cast<T *>(a->y),
                      a->rows, a->n);
    });
}

}  // namespace rw
