/*
 * square_bias_kernels.cu — y[i] = x[i]^2 + b[i % b_n] on the GPU (CUDA C, no PyTorch headers).
 *
 * The work split: a 1D grid of 256-thread blocks, as many as the GPU holds at once times a few waves (the occupancy
 * API decides, course::grid_size), walks the n elements with a grid-stride loop; thread t of the grid takes
 * elements t, t + (threads in the grid), ... Indices are int64_t, so arrays past 2^31 elements work.
 *
 * This chapter is about shipping, not speed: the kernel is deliberately the plainest correct one (chapter 03 has the
 * vectorised version). What matters here is what the build makes of it: setup.py compiles this file once per GPU
 * architecture in src/cuda_architectures.txt (machine code, SASS, for each; PTX for the newest as well), and the
 * CUDA runtime picks the right one when the kernel first launches.
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

#include "course_accumulate.cuh"
#include "course_check.h"
#include "course_launch.cuh"
#include "square_bias_kernels.h"

namespace {

constexpr int kThreads = 256;   // threads per block
constexpr int kMostWaves = 32;  // the grid stops growing at 32 waves of resident blocks

template <typename T>
__global__ void square_bias_kernel(const T *__restrict__ x, const T *__restrict__ b, T *__restrict__ y, int64_t n,
                                   int64_t b_n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const course::acc_t<T> v = course::to_acc(x[i]);
        y[i] = course::from_acc<T>(v * v + course::to_acc(b[i % b_n]));
    }
}

template <typename T>
cudaError_t forward(const void *x, const void *b, void *y, int64_t n, int64_t b_n, cudaStream_t stream) {
    int64_t blocks = 0;
    CUDA_RETURN_IF_ERROR(course::grid_size(square_bias_kernel<T>, kThreads, 0, n, kMostWaves, &blocks));
    square_bias_kernel<T><<<(unsigned)blocks, kThreads, 0, stream>>>(
        static_cast<const T *>(x), static_cast<const T *>(b), static_cast<T *>(y), n, b_n);
    return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t square_bias_forward_cuda(course_dtype dtype, const void *x, const void *b, void *y, int64_t n,
                                                int64_t b_n, cudaStream_t stream) {
    if (n < 0 || (n > 0 && (b_n < 1 || n % b_n != 0))) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    return course::with_element_type(dtype, [&](auto zero) {
        using T = decltype(zero);
        return forward<T>(x, b, y, n, b_n, stream);
    });
}
