/*
 * mma_tiles.cu — rung 10 (mma.sync) in several block-tile shapes, side by side with cuBLAS: the experiments behind
 * the tile the op uses (NOTES.md, "Rung 10: tile shapes"). `make tile-sweep` on a GPU machine builds and runs it.
 *
 * It includes matmul_tensor.cu itself, so each line below times the op's own kernel with another MmaTileShape. For
 * each size and shape: C poisoned, one run checked against cuBLAS's C (same inputs, bf16, fp32 sums), then 5 rounds
 * of 10 timed launches (CUDA events); min / median / max TFLOP/s over the rounds and the median as % of cuBLAS.
 */
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "course_check.h"
#include "matmul_tensor.cu"
#include "sweep_harness.cuh"

/* Rung 11 lives in matmul_hopper.cu (sm_90a); this program times rung 10 only. */
extern "C" int matmul_tma_compatible(int64_t, int64_t, int64_t, matmul_operand, matmul_operand) {
    return 0;
}
extern "C" cudaError_t matmul_wgmma_cuda(course_dtype, int64_t, int64_t, int64_t, matmul_operand, matmul_operand,
                                         void *, int64_t, cudaStream_t) {
    return cudaErrorNotSupported;
}

struct Problem {
    int64_t m, n, k;
    bf16 *a, *b, *c, *reference;
    double cublas_tflops;
};

template <class S>
static void sweep_line(const char *name, Problem &p) {
    const matmul_operand a{p.a, p.k, 1}, b{p.b, p.n, 1};
    const auto launch = [&] {
        CUDA_CHECK((launch_mma_sync_variant<bf16, S, true, true>(p.m, p.n, p.k, a, b, p.c, p.n, true, nullptr)));
    };
    cudaFuncAttributes attributes;
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, mma_sync_kernel<bf16, S, true, true>));
    CUDA_CHECK(cudaMemset(p.c, 0xff, (size_t)p.m * p.n * 2)); /* NaN everywhere: an unwritten element shows */
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    const double error = relative_error(p.c, p.reference, (size_t)p.m * p.n);
    const auto r = time_tflops(launch, 2.0 * p.m * p.n * p.k);
    std::printf("  %-40s %3d regs %3zu B local  %6.1f / %6.1f / %6.1f TFLOP/s  %5.1f %% of cuBLAS  error %.2e%s\n",
                name, attributes.numRegs, attributes.localSizeBytes, r[0], r[1], r[2], 100 * r[1] / p.cublas_tflops,
                error, error < 1e-2 ? "" : "  WRONG");
}

int main() {
    cublasHandle_t handle;
    CHECK_CUBLAS(cublasCreate(&handle));
    const int64_t sizes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {3000, 3000, 3000}};
    for (const auto &size : sizes) {
        Problem p{size[0], size[1], size[2], nullptr, nullptr, nullptr, nullptr, 0};
        std::vector<bf16> host((size_t)std::max(p.m * p.k, p.k * p.n));
        srand(1);
        CUDA_CHECK(cudaMalloc(&p.a, (size_t)p.m * p.k * 2));
        CUDA_CHECK(cudaMalloc(&p.b, (size_t)p.k * p.n * 2));
        CUDA_CHECK(cudaMalloc(&p.c, (size_t)p.m * p.n * 2));
        CUDA_CHECK(cudaMalloc(&p.reference, (size_t)p.m * p.n * 2));
        for (bf16 *target : {p.a, p.b}) {
            for (auto &v : host) v = __float2bfloat16(2.0f * rand() / RAND_MAX - 1.0f);
            CUDA_CHECK(cudaMemcpy(target, host.data(), (size_t)(target == p.a ? p.m * p.k : p.k * p.n) * 2,
                                  cudaMemcpyHostToDevice));
        }
        /* Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: cuBLAS gets B first. */
        const float one = 1, zero = 0;
        const auto cublas = [&] {
            CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)p.n, (int)p.m, (int)p.k, &one, p.b,
                                      CUDA_R_16BF, (int)p.n, p.a, CUDA_R_16BF, (int)p.k, &zero, p.reference,
                                      CUDA_R_16BF, (int)p.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        };
        cublas();
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto c = time_tflops(cublas, 2.0 * p.m * p.n * p.k);
        p.cublas_tflops = c[1];
        std::printf("%lldx%lldx%lld: cuBLAS bf16 %.1f / %.1f / %.1f TFLOP/s\n", (long long)p.m, (long long)p.n,
                    (long long)p.k, c[0], c[1], c[2]);
        /* BM, BN, BK, stages, warps along M, along N, min blocks per SM */
        sweep_line<MmaTileShape<128, 128, 32, 4, 2, 4, 2>>("128x128x32, 4 stages, 8 warps of 64x32", p);
        sweep_line<MmaTileShape<128, 128, 32, 3, 2, 4, 2>>("128x128x32, 3 stages, 8 warps of 64x32", p);
        sweep_line<MmaTileShape<128, 128, 32, 3, 2, 2, 2>>("128x128x32, 3 stages, 4 warps of 64x64", p);
        sweep_line<MmaTileShape<128, 256, 32, 2, 2, 4, 1>>("128x256x32, 2 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<128, 256, 32, 3, 2, 4, 1>>("128x256x32, 3 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<128, 256, 32, 4, 2, 4, 1>>("128x256x32, 4 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<128, 256, 32, 5, 2, 4, 1>>("128x256x32, 5 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<128, 256, 64, 2, 2, 4, 1>>("128x256x64, 2 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<128, 256, 64, 3, 2, 4, 1>>("128x256x64, 3 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<256, 128, 32, 3, 4, 2, 1>>("256x128x32, 3 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<256, 128, 32, 4, 4, 2, 1>>("256x128x32, 4 stages, 8 warps of 64x64", p);
        sweep_line<MmaTileShape<256, 128, 32, 4, 4, 4, 1>>("256x128x32, 4 stages, 16 warps of 64x32", p);
        sweep_line<MmaTileShape<MmaTile::BM, MmaTile::BN, MmaTile::BK, MmaTile::STAGES, MmaTile::WARPS_M,
                                MmaTile::WARPS_N, MmaTile::MIN_BLOCKS>>("the op's MmaTile", p);
        for (bf16 *ptr : {p.a, p.b, p.c, p.reference}) CUDA_CHECK(cudaFree(ptr));
    }
    CHECK_CUBLAS(cublasDestroy(handle));
    return 0;
}
