/*
 * softmax_2_warp.cu — rung 2: a warp per row and the online softmax.
 *
 * What changed from rung 1: the max and the sum come from one pass. Each lane keeps a running (max, sum) of the
 * elements it has seen, rescaling its sum whenever a larger element arrives (rw_online_add), and the 32 lanes merge
 * their pairs with shuffles (rw_warp_combine): no shared memory, no __syncthreads. x is read twice, once for the
 * pairs and once for the output: 3 MN elements moved instead of 4. With a warp per row, a block of 256 threads works
 * on 8 rows side by side. The per-lane code is online_softmax.h, the chapter's exercise (tests/test_emulation.py runs
 * it on the CPU); it computes in float32, so this rung takes float32, float16 and bfloat16.
 *
 * What it still costs: x is read twice, and a long row is the work of one warp.
 */
#include <online_softmax.h> /* <...>: EXERCISE=1 builds put exercises/ first on the include path */
#include "row_reduce.cuh"
#include "rowwise_kernels.h"

namespace {

using namespace rw;

template <typename T>
__global__ void __launch_bounds__(kWarpRowsPerBlock * 32)
    softmax_warp_kernel(const T *x, T *y, int64_t rows, int64_t n) {
    const int lane = threadIdx.x % 32;
    const int64_t warps = (int64_t)gridDim.x * kWarpRowsPerBlock;
    for (int64_t row = (int64_t)blockIdx.x * kWarpRowsPerBlock + threadIdx.x / 32; row < rows; row += warps) {
        const T *xr = x + row * n;
        rw_max_sum s = rw_max_sum_empty();
        for (int64_t i = lane; i < n; i += 32) s = rw_online_add(s, to_acc(xr[i]));  // one pass: (max, sum)
        s = rw_warp_combine(s, 32);
        const float inverse = 1.0f / s.sum;
        for (int64_t i = lane; i < n; i += 32) y[row * n + i] = from_acc<T>(rw_exp(to_acc(xr[i]) - s.max) * inverse);
    }
}

template <typename T>
cudaError_t run(const rowwise_args *a, const rowwise_plan *p, cudaStream_t stream) {
    return launch(softmax_warp_kernel<T>, *p, stream, static_cast<const T *>(a->x), static_cast<T *>(a->y), a->rows,
                  a->n);
}

}  // namespace

namespace rw {

cudaError_t softmax_warp(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, cudaStream_t stream) {
    switch (dtype) {  // float32 arithmetic: no float64 kernel (rowwise_unsupported says so first)
        case COURSE_FLOAT32:
            return run<float>(a, p, stream);
        case COURSE_FLOAT16:
            return run<__half>(a, p, stream);
        case COURSE_BFLOAT16:
            return run<__nv_bfloat16>(a, p, stream);
        default:
            return cudaErrorInvalidValue;
    }
}

}  // namespace rw
