/*
 * sweep_harness.cuh — what the two kernel sweeps share (mma_tiles.cu: rung 10's tile shapes; wgmma_variants.cu:
 * rung 11's schedules): a cuBLAS status check, the timing loop and the error against cuBLAS's C. Standalone
 * programs, not part of the op: each exits with a message on the first failed CUDA or cuBLAS call.
 */
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <type_traits>
#include <vector>

#include "course_check.h"

#define CHECK_CUBLAS(call)                                                                             \
    do {                                                                                               \
        cublasStatus_t s_ = (call);                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
            std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_); \
            std::exit(1);                                                                              \
        }                                                                                              \
    } while (0)

using bf16 = __nv_bfloat16;

/* min / median / max TFLOP/s of `launch` over 5 rounds of 10 launches (CUDA events), after 3 to warm up. */
static std::vector<double> time_tflops(const std::function<void()> &launch, double flops) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 3; ++i) launch();
    std::vector<double> rates;
    for (int round = 0; round < 5; ++round) {
        CUDA_CHECK(cudaEventRecord(start));
        for (int i = 0; i < 10; ++i) launch();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        rates.push_back(flops * 10 / (ms * 1e-3) / 1e12);
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    std::sort(rates.begin(), rates.end());
    return {rates.front(), rates[rates.size() / 2], rates.back()};
}

template <typename T>
static float to_float(T x) {
    if constexpr (std::is_same<T, bf16>::value) {
        return __bfloat162float(x);
    } else {
        return __half2float(x);
    }
}

/* Largest |C - reference| over the largest |reference|; infinite where C holds a NaN (an element never written). */
template <typename T>
static double relative_error(const T *c, const T *reference, size_t n) {
    std::vector<T> got(n), want(n);
    CUDA_CHECK(cudaMemcpy(got.data(), c, n * sizeof(T), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(want.data(), reference, n * sizeof(T), cudaMemcpyDeviceToHost));
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
        const double g = to_float(got[i]), w = to_float(want[i]);
        worst = std::isfinite(g) ? std::max(worst, std::fabs(g - w)) : INFINITY;
        scale = std::max(scale, std::fabs(w));
    }
    return worst / (scale > 0 ? scale : 1);
}
