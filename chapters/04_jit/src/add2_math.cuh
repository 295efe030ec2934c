/*
 * add2_math.cuh — x + y for every dtype add2 supports (CUDA C).
 *
 * PyTorch compiles extensions with __CUDA_NO_HALF_OPERATORS__ and __CUDA_NO_BFLOAT16_OPERATORS__, so `x + y` does
 * not compile for __half or __nv_bfloat16 there; the intrinsics __hadd (both types have one) do, and round once,
 * to nearest, like torch.add.
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

__host__ __device__ inline float add2_sum(float x, float y) {
    return x + y;
}
__host__ __device__ inline double add2_sum(double x, double y) {
    return x + y;
}
__device__ inline __half add2_sum(__half x, __half y) {
    return __hadd(x, y);
}
__device__ inline __nv_bfloat16 add2_sum(__nv_bfloat16 x, __nv_bfloat16 y) {
    return __hadd(x, y);
}
