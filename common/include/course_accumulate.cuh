/*
 * course_accumulate.cuh — the type a kernel computes in, for each element type it reads and writes.
 *
 *   element type T        acc_t<T>   why
 *   float                 float
 *   double                double     float64 inputs ask for float64 answers
 *   __half, __nv_bfloat16 float      a half has an 11-bit (bf16: 8-bit) significand: products and sums in it
 *                                    lose digits at every step, so load, widen, compute, round once when storing
 *
 * to_acc(v) widens one value, from_acc<T>(a) rounds back (to nearest even). All are __host__ __device__, so the
 * CPU emulation of a kernel (chapter 03's tests without a GPU) runs the very same arithmetic. Used by the kernels
 * of chapters 03 and 06.
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace course {

template <typename T>
struct Accumulate {
    using type = float;
};
template <>
struct Accumulate<double> {
    using type = double;
};
template <typename T>
using acc_t = typename Accumulate<T>::type;

__host__ __device__ inline float to_acc(float v) {
    return v;
}
__host__ __device__ inline double to_acc(double v) {
    return v;
}
__host__ __device__ inline float to_acc(__half v) {
    return __half2float(v);
}
__host__ __device__ inline float to_acc(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <typename T>
__host__ __device__ inline T from_acc(acc_t<T> v) {
    return v;
}
template <>
__host__ __device__ inline __half from_acc<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__host__ __device__ inline __nv_bfloat16 from_acc<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

}  // namespace course
