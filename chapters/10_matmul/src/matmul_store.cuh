/* The 16-bit outputs of the tensor-core rungs (9-10 in matmul_tensor.cu, 11 in matmul_hopper.cu): fp32 sums rounded
 * to bf16 or fp16 and stored two neighbours at a time, only inside C. */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

/* A float rounded to T. Explicit: torch's build defines __CUDA_NO_HALF_CONVERSIONS__ and friends. */
template <typename T>
__device__ __forceinline__ T from_float(float x) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        return __float2bfloat16_rn(x);
    } else {
        return __float2half_rn(x);
    }
}

/* Stores (row, col) and (row, col + 1) of C, converted, each only inside C; one 4-byte store where `paired` says
 * both the row stride and C's address allow it. */
template <typename T>
__device__ __forceinline__ void store_pair(T *c, int64_t ldc, int64_t M, int64_t N, int64_t row, int64_t col, float x,
                                           float y, bool paired) {
    if (row >= M || col >= N) return;
    T *p = c + row * ldc + col;
    if (paired && col + 1 < N) {
        if constexpr (std::is_same<T, __nv_bfloat16>::value) {
            *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(x, y);
        } else {
            *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(x, y);
        }
        return;
    }
    p[0] = from_float<T>(x);
    if (col + 1 < N) p[1] = from_float<T>(y);
}
